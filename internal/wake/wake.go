// Package wake wakes Till's background loops when PostgreSQL reports work for them, so an
// idle process sleeps instead of polling. Triggers notify a channel from the transaction
// that gives a loop work (see storage's channel names); the notification reaches every
// listening process when that transaction commits, and none when it rolls back.
//
// Notifications are hints, not a queue: one sent while the listening connection is down is
// lost. A Listener therefore calls every subscriber once it is listening and again after each
// reconnection, so each loop looks for what it may have missed, and loops keep a slow poll
// underneath for whatever no notification announces.
//
// A cache that notifications invalidate has no poll to fall back on: it asks Listening
// before keeping anything, and OnLoss empties it the moment the connection is lost.
package wake

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lib/pq"
)

// Reconnection waits of the listening connection: soon after a loss, doubling while the
// server stays unreachable.
const (
	minReconnect = 500 * time.Millisecond
	maxReconnect = 30 * time.Second
)

// Listener keeps one connection that LISTENs on its subscribers' channels and calls them on
// each notification. Register subscribers with On before Run.
type Listener struct {
	dsn    string
	logger *slog.Logger
	dialer pq.Dialer // nil: pq's own

	mu     sync.Mutex
	subs   map[string][]func(payload string)
	losses []func()
	// ready is set once Run has listened on every channel, connected while pq's connection
	// is up; notifications are certain to arrive only when both hold.
	ready, connected bool
}

// New returns a Listener that connects with dsn (a lib/pq connection string or URL).
func New(dsn string, logger *slog.Logger) *Listener {
	return &Listener{dsn: dsn, logger: logger, subs: map[string][]func(string){}}
}

// On calls fn on each notification of channel and after every (re)connection. fn runs on
// the listener's goroutine: it must return at once (a send that does not block, say).
func (l *Listener) On(channel string, fn func()) {
	l.OnPayload(channel, func(string) { fn() })
}

// OnPayload is On for subscribers that tell notifications apart by their payload: fn gets
// each notification's payload, and "" after a (re)connection, when anything may have changed.
func (l *Listener) OnPayload(channel string, fn func(payload string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs[channel] = append(l.subs[channel], fn)
}

// OnLoss calls fn each time the listener stops listening (a lost connection, or the end of
// Run), before anything notified meanwhile could be missed. Like On, fn must return at once.
func (l *Listener) OnLoss(fn func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.losses = append(l.losses, fn)
}

// Listening reports whether every change notified from now on is certain to reach the
// subscribers: Run has listened on every channel and the connection has not been lost since.
func (l *Listener) Listening() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ready && l.connected
}

// setState changes the listening state under the lock and calls the loss subscribers when
// listening ends.
func (l *Listener) setState(change func()) {
	l.mu.Lock()
	was := l.ready && l.connected
	change()
	now := l.ready && l.connected
	losses := l.losses
	l.mu.Unlock()
	if was && !now {
		for _, fn := range losses {
			fn()
		}
	}
}

// Run listens until ctx ends. It reconnects after losing the connection, for as long as it
// takes, calling every subscriber once listening again. It returns when ctx is done.
func (l *Listener) Run(ctx context.Context) {
	events := func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventConnected:
			l.setState(func() { l.connected = true })
		case pq.ListenerEventDisconnected:
			l.setState(func() { l.connected = false })
			l.logger.Warn("wake: lost the notification connection; reconnecting", "err", err)
		case pq.ListenerEventConnectionAttemptFailed:
			l.logger.Warn("wake: connecting for notifications failed; retrying", "err", err)
		case pq.ListenerEventReconnected: // pq has listened again on every channel
			l.setState(func() { l.connected = true })
			l.logger.Info("wake: notification connection restored")
		}
	}
	var pl *pq.Listener
	if l.dialer != nil {
		pl = pq.NewDialListener(l.dialer, l.dsn, minReconnect, maxReconnect, events)
	} else {
		pl = pq.NewListener(l.dsn, minReconnect, maxReconnect, events)
	}
	stop := context.AfterFunc(ctx, func() { _ = pl.Close() })
	defer stop()
	// dispatch ends when pq closes Notify after Close, which can take until the end of a
	// reconnection wait; Run does not wait for it, so a shutdown with the database down is
	// not held up (a late call of a subscriber is harmless).
	go l.dispatch(pl.Notify)
	l.mu.Lock()
	channels := make([]string, 0, len(l.subs))
	for c := range l.subs {
		channels = append(channels, c)
	}
	l.mu.Unlock()
	listening := true
	for _, c := range channels {
		// Listen returns once the server has acknowledged, waiting out connection failures;
		// Close (at ctx's end) interrupts it.
		if err := pl.Listen(c); err != nil {
			if ctx.Err() == nil {
				l.logger.Error("wake: listening failed; loops fall back to their slow poll", "channel", c, "err", err)
			}
			listening = false
			break
		}
	}
	if listening {
		l.setState(func() { l.ready = true })
		l.all() // work committed before LISTEN took effect was announced to no one
	}
	<-ctx.Done()
	l.setState(func() { l.ready, l.connected = false, false })
	_ = pl.Close() // also here: stop may have cancelled the AfterFunc before it ran
}

// dispatch calls the subscribers of each notification until the listener closes. A nil
// notification is pq's sign of a reconnection: what was sent meanwhile is lost, so every
// subscriber is called to catch up.
func (l *Listener) dispatch(notes <-chan *pq.Notification) {
	for n := range notes {
		if n == nil {
			l.all()
			continue
		}
		l.mu.Lock()
		subs := l.subs[n.Channel]
		l.mu.Unlock()
		for _, fn := range subs {
			fn(n.Extra)
		}
	}
}

// all calls every subscriber once.
func (l *Listener) all() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, subs := range l.subs {
		for _, fn := range subs {
			fn("")
		}
	}
}

// Signal is a wake-up channel for one loop: any number of Wake calls before the loop next
// looks count as one, and Wake never blocks.
type Signal chan struct{}

// NewSignal returns a Signal.
func NewSignal() Signal { return make(Signal, 1) }

// Wake marks the signal without blocking.
func (s Signal) Wake() {
	select {
	case s <- struct{}{}:
	default:
	}
}
