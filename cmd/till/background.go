package main

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// background runs the periodic work of a Till process (rendering webhook payloads,
// renewing subscriptions, expiring checkouts) until ctx ends. Every task is safe to run in
// several processes at once, so `till serve` can be scaled out.
type background struct {
	logger *slog.Logger
	wg     sync.WaitGroup
}

// every runs fn now and then every interval until ctx is done; a failing run is logged and
// retried at the next tick.
func (b *background) every(ctx context.Context, name string, interval time.Duration, fn func(context.Context) (int, error)) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if n, err := fn(ctx); err != nil && ctx.Err() == nil {
				b.logger.Error("background task failed", "task", name, "err", err)
			} else if n > 0 {
				b.logger.Debug("background task", "task", name, "done", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// run runs fn until ctx is done, for work that keeps its own loop.
func (b *background) run(ctx context.Context, fn func(context.Context)) {
	b.wg.Go(func() { fn(ctx) })
}

// wait blocks until every task has returned.
func (b *background) wait() { b.wg.Wait() }
