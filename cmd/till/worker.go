package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"till/internal/wake"
)

// workerCmd runs the background work without the API, to scale it out next to one or more
// `till serve`: every task is safe to run in several processes. With the embedded default it
// attaches to the cluster a running `till serve` started.
func workerCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	fs := newFlags("worker", "Runs the background work (webhook delivery, jobs, renewals, meter upkeep) without the API,\n"+
		"next to till serve, until interrupted.", stdout)
	if ok, err := parseFlags(fs, args); !ok {
		return err
	}
	logger := newLogger(cfg.LogLevel, os.Stderr)
	secret, err := cfg.secret()
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, logger, true)
	if err != nil {
		return err
	}
	defer db.close()
	a, err := newApp(cfg, db, secret, logger)
	if err != nil {
		return err
	}
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	work := startWork(workCtx, cfg, a, wake.New(db.dsn, logger), db, logger)
	fmt.Fprintln(stdout, "Till worker running; interrupt to stop.")
	<-ctx.Done()
	logger.Info("worker shutting down")
	stopWork()
	work.wait()
	return nil
}
