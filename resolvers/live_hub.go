package resolvers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// Sizes of the hub's work: events read per statement, and events a feed keeps in memory for
// subscribers that lag behind (beyond it they read from the database).
const (
	liveFetchBatch = 1000
	liveRingKeep   = 4096
	// liveSafetyNet is how often the hub looks for events whatever it heard, in case a
	// notification was lost with the listening connection.
	liveSafetyNet = 5 * time.Second
)

// LiveHub brings committed domain events to the GraphQL subscriptions of one process. It
// keeps a feed per organization that has subscribers: one statement reads an organization's
// new events after each notification (storage.LiveChannel), however many subscribe, and each
// subscription reads the feed from its own cursor. A subscription that falls further behind
// than the feed keeps reads the database instead, so a slow client delays only itself and
// loses nothing.
type LiveHub struct {
	db     *sqlx.DB
	logger *slog.Logger
	signal chan struct{}

	mu    sync.Mutex
	feeds map[uuid.UUID]*liveFeed
	dirty map[uuid.UUID]bool
	all   bool
	// held counts each credential's open subscriptions in this process (maxLivePerCredential).
	held map[uuid.UUID]int
	// usage holds the organizations whose usage events subscriptions follow.
	usage map[uuid.UUID]*usageWatch
	// budget paces each credential's deliveries (WithLiveEventBudget).
	budget liveBudget
}

// NewLiveHub returns a hub reading db, with DefaultLiveEventBudget unless an option says
// otherwise; run it with Run and feed it Notify.
func NewLiveHub(db *sqlx.DB, logger *slog.Logger, opts ...LiveHubOption) *LiveHub {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &LiveHub{db: db, logger: logger, signal: make(chan struct{}, 1),
		feeds: map[uuid.UUID]*liveFeed{}, dirty: map[uuid.UUID]bool{}, held: map[uuid.UUID]int{},
		usage: map[uuid.UUID]*usageWatch{}, budget: liveBudget{rate: DefaultLiveEventBudget, buckets: map[uuid.UUID]*liveBucket{}}}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Notify marks the organization named by payload as having new events; "" marks every one
// (after the listening connection was restored). It never blocks.
func (h *LiveHub) Notify(payload string) {
	h.mu.Lock()
	if id, err := uuid.Parse(payload); err == nil {
		if _, ok := h.feeds[id]; !ok {
			h.mu.Unlock()
			return
		}
		h.dirty[id] = true
	} else {
		h.all = true
	}
	h.mu.Unlock()
	select {
	case h.signal <- struct{}{}:
	default:
	}
}

// Run refreshes the feeds until ctx ends: those notified, and all of them every liveSafetyNet.
func (h *LiveHub) Run(ctx context.Context) {
	tick := time.NewTicker(liveSafetyNet)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.signal:
		case <-tick.C:
			h.mu.Lock()
			h.all = true
			h.mu.Unlock()
		}
		for _, f := range h.takeDirty() {
			if err := f.refresh(ctx, h.db); err != nil && ctx.Err() == nil {
				h.logger.Warn("live: reading new events failed; retrying", "organization_id", f.org, "err", err)
				h.Notify(f.org.String())
				if sleep(ctx, time.Second); ctx.Err() != nil {
					return
				}
			}
		}
	}
}

// takeDirty returns the feeds to refresh and clears the marks.
func (h *LiveHub) takeDirty() []*liveFeed {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*liveFeed
	for id, f := range h.feeds {
		if h.all || h.dirty[id] {
			out = append(out, f)
		}
	}
	h.all = false
	clear(h.dirty)
	return out
}

// hold counts one more subscription of credential, refusing one over maxLivePerCredential;
// release counts one less.
func (h *LiveHub) hold(credential uuid.UUID) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[credential] >= maxLivePerCredential {
		return tooManyLive("This credential has too many open subscriptions.")
	}
	h.held[credential]++
	return nil
}

func (h *LiveHub) release(credential uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[credential]--; h.held[credential] <= 0 {
		delete(h.held, credential)
		h.budget.forget(credential)
	}
}

// join returns org's feed, made and positioned at its last committed event when it is the
// first subscription of org; leave undoes it.
func (h *LiveHub) join(ctx context.Context, org uuid.UUID) (*liveFeed, error) {
	h.mu.Lock()
	f, ok := h.feeds[org]
	if !ok {
		f = &liveFeed{org: org, changed: make(chan struct{}), ready: make(chan struct{})}
		h.feeds[org] = f
	}
	f.refs++
	h.mu.Unlock()
	if !ok {
		f.start(ctx, h.db)
		h.Notify(org.String()) // what committed while the feed was being made
	}
	select {
	case <-f.ready:
	case <-ctx.Done():
		h.leave(f)
		return nil, ctx.Err()
	}
	if f.err != nil {
		h.leave(f)
		return nil, f.err
	}
	return f, nil
}

// leave ends one subscription of f, dropping f with its last.
func (h *LiveHub) leave(f *liveFeed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.refs--; f.refs == 0 && h.feeds[f.org] == f {
		delete(h.feeds, f.org)
	}
}

// watchUsage counts a subscription following org's usage events until unwatchUsage;
// usageWake returns the channel closed at the next notification of them.
func (h *LiveHub) watchUsage(org uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w, ok := h.usage[org]
	if !ok {
		w = &usageWatch{wake: make(chan struct{})}
		h.usage[org] = w
	}
	w.refs++
}

func (h *LiveHub) usageWake(org uuid.UUID) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.usage[org].wake // watched from subscribeMeter to the stream's end
}

func (h *LiveHub) unwatchUsage(org uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.usage[org]; w != nil {
		if w.refs--; w.refs <= 0 {
			delete(h.usage, org)
		}
	}
}

// NotifyUsage wakes the subscriptions following the usage events of the organization named
// by payload; "" wakes all of them. It never blocks.
func (h *LiveHub) NotifyUsage(payload string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, err := uuid.Parse(payload)
	for org, w := range h.usage {
		if err != nil || org == id {
			close(w.wake)
			w.wake = make(chan struct{})
		}
	}
}

// usageWatch is the subscriptions following one organization's usage events.
type usageWatch struct {
	refs int
	wake chan struct{}
}

// liveFeed is one organization's recent events, in commit order.
type liveFeed struct {
	org  uuid.UUID
	refs int // guarded by LiveHub.mu

	// ready is closed once the feed knows where it starts (err says if it could not).
	ready chan struct{}
	err   error

	mu sync.Mutex
	// ring holds the events at positions last-len(ring)+1 … last, contiguous.
	ring []*storage.LiveEvent
	last int64
	// changed is closed, and replaced, whenever last advances.
	changed chan struct{}
}

// start positions a new feed at its organization's last committed event.
func (f *liveFeed) start(ctx context.Context, db *sqlx.DB) {
	defer close(f.ready)
	last, err := storage.LivePosition(ctx, db, f.org)
	if err != nil {
		f.err = err
		return
	}
	f.mu.Lock()
	f.last = last
	f.mu.Unlock()
}

// position is the feed's last event.
func (f *liveFeed) position() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// refresh appends the events committed after the feed's last one and wakes its readers.
func (f *liveFeed) refresh(ctx context.Context, db *sqlx.DB) error {
	select {
	case <-f.ready:
	default:
		return nil // still starting: start reads the position, the notification follows
	}
	if f.err != nil {
		return nil
	}
	for {
		after := f.position()
		events, err := storage.LiveEventsAfter(ctx, db, f.org, after, 0, storage.LiveFilter{}, liveFetchBatch)
		if err != nil {
			return err
		}
		if len(events) == 0 {
			return nil
		}
		f.mu.Lock()
		if len(f.ring)+len(events) > liveRingKeep { // start a new array: readers keep the old one
			keep := f.ring[max(0, len(f.ring)-liveRingKeep/2):]
			f.ring = append(make([]*storage.LiveEvent, 0, liveRingKeep+liveFetchBatch), keep...)
		}
		f.ring = append(f.ring, events...)
		f.last = events[len(events)-1].Position
		close(f.changed)
		f.changed = make(chan struct{})
		f.mu.Unlock()
		if len(events) < liveFetchBatch {
			return nil
		}
	}
}

// since returns the feed's events after cursor and the channel closed when more arrive.
// inFeed is false when the feed no longer holds the events right after cursor: the caller
// reads them from the database, up to (and including) position upTo.
func (f *liveFeed) since(cursor int64) (events []*storage.LiveEvent, changed <-chan struct{}, upTo int64, inFeed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	first := f.last - int64(len(f.ring)) + 1
	if cursor >= f.last {
		return nil, f.changed, 0, true
	}
	if cursor < first-1 {
		return nil, f.changed, first - 1, false
	}
	return f.ring[cursor-first+1:], f.changed, 0, true
}
