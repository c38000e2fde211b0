package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// How the subscribers are spread: the server allows 25 subscriptions per connection and 100
// per credential in one process, so each connection carries 20 and each token 4 connections
// (80 subscriptions), leaving room for subscriptions the server has not yet dropped.
const (
	liveSubsPerConn   = 20
	liveConnsPerToken = 4
	liveDialers       = 8
)

// liveReceipt is one event as a subscriber received it: at is read right after the frame
// came off the socket, before it is decoded.
type liveReceipt struct {
	position int64
	object   uuid.UUID
	typ      string
	at       time.Time
	// badOrder says the selected order was missing or not the event's.
	badOrder bool
}

// liveSub is one subscription. Its receipts are appended by its connection's reader only
// and read once the reader has stopped; count may be read at any time.
type liveSub struct {
	receipts []liveReceipt
	count    atomic.Int64
	failure  atomic.Value // string: an error or complete message, or a malformed event
}

// liveSocket is one websocket carrying liveSubsPerConn subscriptions, read by one goroutine.
type liveSocket struct {
	client *resolverstest.LiveClient
	subs   []*liveSub
	done   chan struct{}
	err    error // why the reader stopped, when it was not closed by the benchmark
	closed atomic.Bool
}

// liveFleet is every subscriber of one target.
type liveFleet struct {
	sockets []*liveSocket
	subs    []*liveSub
}

// openFleet dials n subscriptions of doc to url over tokens (liveSubsPerConn per
// connection, liveConnsPerToken connections per token), each starting after cursor, so
// every one receives the same events however long dialing takes. withOrder says doc selects
// the order, which each event must then carry.
func openFleet(b *testing.B, url string, tokens []string, n int, doc, cursor string, withOrder bool) *liveFleet {
	b.Helper()
	conns := (n + liveSubsPerConn - 1) / liveSubsPerConn
	if need := (conns + liveConnsPerToken - 1) / liveConnsPerToken; need > len(tokens) {
		b.Fatalf("%d subscribers need %d tokens, have %d", n, need, len(tokens))
	}
	f := &liveFleet{sockets: make([]*liveSocket, conns)}
	jobs := make(chan int)
	var failed atomic.Value
	var wg sync.WaitGroup
	for range liveDialers {
		wg.Go(func() {
			for i := range jobs {
				subs := min(liveSubsPerConn, n-i*liveSubsPerConn)
				s, err := dialSocket(url, tokens[i/liveConnsPerToken], subs, doc, cursor, withOrder)
				if err != nil {
					failed.CompareAndSwap(nil, fmt.Sprintf("connection %d: %v", i, err))
					continue
				}
				f.sockets[i] = s
			}
		})
	}
	for i := range conns {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	b.Cleanup(f.close)
	if msg := failed.Load(); msg != nil {
		b.Fatal(msg)
	}
	for _, s := range f.sockets {
		f.subs = append(f.subs, s.subs...)
	}
	return f
}

// dialSocket opens one connection with token and starts subs subscriptions on it.
func dialSocket(url, token string, subs int, doc, cursor string, withOrder bool) (*liveSocket, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := resolverstest.DialLive(ctx, url, nil, map[string]any{"Authorization": "Bearer " + token})
	if err != nil {
		return nil, err
	}
	s := &liveSocket{client: c, done: make(chan struct{})}
	for i := range subs {
		s.subs = append(s.subs, &liveSub{})
		if err := c.Subscribe(ctx, strconv.Itoa(i), doc, map[string]any{"after": cursor}); err != nil {
			c.Close()
			return nil, err
		}
	}
	go s.read(withOrder)
	return s, nil
}

// liveNext is the payload of a next message.
type liveNext struct {
	Data struct {
		OrderEvents *struct {
			Cursor   string    `json:"cursor"`
			Type     string    `json:"type"`
			ObjectID uuid.UUID `json:"objectId"`
			Order    *struct {
				ID     uuid.UUID `json:"id"`
				Status string    `json:"status"`
			} `json:"order"`
		} `json:"orderEvents"`
	} `json:"data"`
	Errors json.RawMessage `json:"errors"`
}

// read records every event of the socket's subscriptions until the socket closes.
func (s *liveSocket) read(withOrder bool) {
	defer close(s.done)
	ctx := context.Background()
	for {
		m, err := s.client.Next(ctx) // decoded by the client's reader, which answers pings
		at := time.Now()
		if err != nil {
			if !s.closed.Load() {
				s.err = err
			}
			return
		}
		i, err := strconv.Atoi(m.ID)
		if err != nil || i < 0 || i >= len(s.subs) {
			continue // ka, pong
		}
		sub := s.subs[i]
		if m.Type != "next" {
			sub.failure.CompareAndSwap(nil, fmt.Sprintf("%s %s", m.Type, m.Payload))
			continue
		}
		var next liveNext
		e := &next.Data
		if err := json.Unmarshal(m.Payload, &next); err != nil || len(next.Errors) > 0 || e.OrderEvents == nil {
			sub.failure.CompareAndSwap(nil, fmt.Sprintf("event %s", m.Payload))
			continue
		}
		pos, err := strconv.ParseInt(e.OrderEvents.Cursor, 10, 64)
		if err != nil {
			sub.failure.CompareAndSwap(nil, fmt.Sprintf("cursor %q", e.OrderEvents.Cursor))
			continue
		}
		o := e.OrderEvents.Order
		sub.receipts = append(sub.receipts, liveReceipt{position: pos, object: e.OrderEvents.ObjectID, typ: e.OrderEvents.Type, at: at,
			badOrder: withOrder && (o == nil || o.ID != e.OrderEvents.ObjectID || o.Status != "paid")})
		sub.count.Add(1)
	}
}

// waitFor waits until every subscription has received n events, failing on a subscription
// that ended or a connection that broke, or when no event arrived anywhere for stall: slow
// subscribers are measured, stuck ones are a failure.
func (f *liveFleet) waitFor(b *testing.B, n int64, stall time.Duration) {
	b.Helper()
	var received int64
	deadline := time.Now().Add(stall)
	for {
		behind, total := 0, int64(0)
		for i, sub := range f.subs {
			if msg := sub.failure.Load(); msg != nil {
				b.Fatalf("subscriber %d: %s", i, msg)
			}
			c := sub.count.Load()
			total += c
			if c < n {
				behind++
			}
		}
		for i, s := range f.sockets {
			select {
			case <-s.done:
				b.Fatalf("connection %d stopped: %v", i, s.err)
			default:
			}
		}
		if behind == 0 {
			return
		}
		if total > received {
			received, deadline = total, time.Now().Add(stall)
		}
		if time.Now().After(deadline) {
			b.Fatalf("no event arrived for %s; %d of %d subscribers have fewer than %d events", stall, behind, len(f.subs), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// close closes every connection and waits for the readers, after which the receipts may be
// read. It may be called twice.
func (f *liveFleet) close() {
	var wg sync.WaitGroup
	for _, s := range f.sockets {
		if s == nil || s.closed.Swap(true) {
			continue
		}
		wg.Go(func() {
			_ = s.client.Conn.Close(websocket.StatusNormalClosure, "")
			<-s.done
		})
	}
	wg.Wait()
}

// liveWant is one committed order event, as the database numbered it.
type liveWant struct {
	Position int64     `db:"position"`
	Object   uuid.UUID `db:"object_id"`
	Type     string    `db:"type"`
}

// liveCheck is what the subscribers received against what was committed.
type liveCheck struct {
	expected, delivered, lost, duplicated, disordered, unexpected, badOrder int
}

// check compares every subscription's events with want, the order events committed after
// the subscriptions' starting cursor, in commit order: each must arrive once, in that order,
// and nothing else may. It returns the counts and the first problems found.
func (f *liveFleet) check(want []liveWant) (liveCheck, []string) {
	var c liveCheck
	var problems []string
	note := func(format string, args ...any) {
		if len(problems) < 5 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	wanted := make(map[int64]liveWant, len(want))
	for _, w := range want {
		wanted[w.Position] = w
	}
	for i, sub := range f.subs {
		c.expected += len(want)
		seen := make(map[int64]bool, len(want))
		var last int64
		for _, r := range sub.receipts {
			w, ok := wanted[r.position]
			switch {
			case !ok || w.Object != r.object || w.Type != r.typ:
				c.unexpected++
				note("subscriber %d received %s %s at position %d, which is not that committed event", i, r.typ, r.object, r.position)
				continue
			case seen[r.position]:
				c.duplicated++
				note("subscriber %d received position %d twice", i, r.position)
				continue
			case r.position < last:
				c.disordered++
				note("subscriber %d received position %d after %d", i, r.position, last)
			}
			if r.badOrder {
				c.badOrder++
				note("subscriber %d: the order of position %d is missing or wrong", i, r.position)
			}
			seen[r.position] = true
			last = max(last, r.position)
			c.delivered++
		}
		if missing := len(want) - len(seen); missing > 0 {
			c.lost += missing
			note("subscriber %d lost %d of %d events", i, missing, len(want))
		}
	}
	return c, problems
}

// latencies is, for every receipt of an order whose COMMIT was sent at commits[order], the
// time from then to the receipt.
func (f *liveFleet) latencies(commits map[uuid.UUID]time.Time) []time.Duration {
	var lat []time.Duration
	for _, sub := range f.subs {
		for _, r := range sub.receipts {
			if at, ok := commits[r.object]; ok { // not the warm-up order
				lat = append(lat, max(r.at.Sub(at), 0))
			}
		}
	}
	return lat
}
