package main

import (
	"context"
	"log/slog"
	"math"
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

// safetyNet is the longest a loop woken by notifications sleeps. Notifications are hints:
// one sent while the listening connection is down is lost (the catch-up pass after the
// reconnection covers that), a trigger can be disabled by hand, and some work falls due
// without any row changing to say so (the lease of a process that died runs out). A pass a
// minute bounds how late such work runs, for a few statements a minute.
const safetyNet = time.Minute

// nothingDue is a woken task's answer when it knows of no work to come.
const nothingDue = time.Duration(math.MaxInt64)

// every runs fn now and then every interval until ctx is done; a failing run is logged and
// retried at the next tick. It is for upkeep that is due by the clock alone.
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

// onWake runs fn now, then whenever wake fires, when the wait fn returned has passed, and at
// least every safetyNet; but a pass never starts sooner than gap after the previous one, so a
// stream of notifications from a busy table costs at most one pass per gap. fn returns what
// it did and how long until it has work again: zero when it stopped at a batch limit,
// nothingDue when it knows of none. A failing pass is retried after a wait that doubles
// from a second up to the safety net, so a database outage is not hammered.
func (b *background) onWake(ctx context.Context, name string, wake <-chan struct{}, gap time.Duration,
	fn func(context.Context) (int, time.Duration, error)) {
	b.wg.Go(func() {
		var backoff time.Duration
		for {
			started := time.Now()
			n, next, err := fn(ctx)
			if err != nil && ctx.Err() == nil {
				b.logger.Error("background task failed", "task", name, "err", err)
				backoff = min(max(2*backoff, time.Second), safetyNet)
				next = backoff
			} else {
				backoff = 0
			}
			if n > 0 {
				b.logger.Debug("background task", "task", name, "done", n)
			}
			timer := time.NewTimer(min(next, safetyNet))
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-wake:
			case <-timer.C:
			}
			timer.Stop()
			if !sleep(ctx, gap-time.Since(started)) {
				return
			}
		}
	})
}

// sleep waits d (nothing when d is not positive) and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// run runs fn until ctx is done, for work that keeps its own loop.
func (b *background) run(ctx context.Context, fn func(context.Context)) {
	b.wg.Go(func() { fn(ctx) })
}

// wait blocks until every task has returned.
func (b *background) wait() { b.wg.Wait() }
