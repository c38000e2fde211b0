package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// databaseURLCmd prints the URL other processes use for this installation's database: a
// `till worker` or `till serve` with a data directory of its own, or any PostgreSQL client.
// With DATABASE_URL set it is that; with the embedded cluster it is the cluster's TCP
// address and password, which needs TILL_PG_PORT, since the cluster's socket is private to
// its data directory.
func databaseURLCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	fs := newFlags("database-url", "Prints the database URL other processes use: DATABASE_URL, or the embedded\n"+
		"cluster's TCP address with its password (needs TILL_PG_PORT). It contains a secret.", stdout)
	if ok, err := parseFlags(fs, args); !ok {
		return err
	}
	if cfg.DatabaseURL != "" {
		fmt.Fprintln(stdout, cfg.DatabaseURL)
		return nil
	}
	if cfg.PGPort == 0 {
		return fmt.Errorf("the embedded cluster listens on its private socket only: start till with TILL_PG_PORT set " +
			"(for example TILL_PG_PORT=5433) to let other processes in over TCP, then run this again with the same setting")
	}
	db, err := openDatabase(ctx, cfg, slog.New(slog.DiscardHandler), true)
	if err != nil {
		return err
	}
	defer db.close()
	dsn, err := db.cluster.TCPDSN("till")
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, dsn)
	return nil
}
