package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// liveProcessesDoc follows every customer change from a cursor.
const liveProcessesDoc = `subscription($after: String) { customerEvents(after: $after) { cursor type objectId } }`

// processEvent is one event as a subscriber received it, or as the database numbered it.
type processEvent struct {
	Position int64     `db:"position"`
	Type     string    `db:"type"`
	Object   uuid.UUID `db:"object_id"`
}

// TestLiveSubscriptionsAcrossProcesses runs two `till serve` on one database. A subscriber
// connected to A follows customer changes made concurrently through A and B; it drops its
// connection midway while changes go on, and resumes on B from the last cursor it received.
// What it received over both connections must be exactly the organization's committed
// customer events in commit order: none lost, none twice, whichever process made the change
// and whichever served the stream.
func TestLiveSubscriptionsAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two till processes")
	}
	dsn := storagetest.DSN(t)
	shared := map[string]string{"DATABASE_URL": dsn, "TILL_BLOB_DIR": t.TempDir(), "TILL_SECRET": "live-processes",
		"TILL_LOG_LEVEL": "warn", "TILL_GRAPHQL_COST_BUDGET": "0"}
	own := func() map[string]string {
		vars := map[string]string{"TILL_DATA_DIR": t.TempDir()}
		for k, v := range shared {
			vars[k] = v
		}
		return vars
	}
	var out bytes.Buffer
	for _, args := range [][]string{{"org", "create", "--name", "Live", "--slug", "live"},
		{"token", "create", "--org", "live", "--scopes", "all"}} {
		if err := run(context.Background(), args, getenvOf(shared), &out); err != nil {
			t.Fatal(err)
		}
	}
	token := tokenLine.FindStringSubmatch(out.String())[1]
	a, b := startTill(t, "serve", own()), startTill(t, "serve", own())
	servers := []string{a.base, b.base}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	first := dialProcess(t, a.base, token, "0")
	const before, during, after = 20, 20, 10
	var wg sync.WaitGroup
	createCustomers(t, &wg, servers, token, 0, before+during)
	got := readProcessEvents(t, first, before)
	first.Conn.CloseNow() // mid-stream: the other writers go on
	wg.Wait()
	createCustomers(t, &wg, servers, token, before+during, after)
	wg.Wait()

	var want []processEvent
	if err := db.Select(&want, `SELECT position, type, object_id FROM domain_events d
		JOIN organizations o ON o.id = d.organization_id
		WHERE o.slug = 'live' AND split_part(type, '.', 1) = 'customer' ORDER BY position`); err != nil {
		t.Fatal(err)
	}
	if len(want) != before+during+after {
		t.Fatalf("the database holds %d customer events, want %d", len(want), before+during+after)
	}
	second := dialProcess(t, b.base, token, strconv.FormatInt(got[len(got)-1].Position, 10))
	got = append(got, readProcessEvents(t, second, len(want)-len(got))...)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: got %+v, want %+v (commit order)", i, got[i], want[i])
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if m, err := second.Next(ctx); err == nil {
		t.Errorf("after every committed event: %s %s", m.Type, m.Payload)
	}
}

// dialProcess connects to the server at base with token and follows customer events after
// cursor.
func dialProcess(t *testing.T, base, token, cursor string) *resolverstest.LiveClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := resolverstest.DialLive(ctx, resolverstest.WebsocketURL(base+"/graphql"), nil, map[string]any{"Authorization": "Bearer " + token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Conn.CloseNow() })
	if err := c.Subscribe(ctx, "1", liveProcessesDoc, map[string]any{"after": cursor}); err != nil {
		t.Fatal(err)
	}
	return c
}

// createCustomers creates customers from..from+n-1 through the servers in turn, four at a time.
func createCustomers(t *testing.T, wg *sync.WaitGroup, servers []string, token string, from, n int) {
	for w := range 4 {
		wg.Go(func() {
			for i := from + w; i < from+n; i += 4 {
				if err := resolverstest.Call(t.Context(), http.DefaultClient, servers[i%len(servers)]+"/graphql", token,
					`mutation($email: String!) { createCustomer(input: {email: $email}) { id } }`,
					map[string]any{"email": fmt.Sprintf("live-%d@example.com", i)}, nil); err != nil {
					t.Errorf("customer %d through %s: %v", i, servers[i%len(servers)], err)
				}
			}
		})
	}
}

// readProcessEvents reads n events from c.
func readProcessEvents(t *testing.T, c *resolverstest.LiveClient, n int) []processEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var got []processEvent
	for len(got) < n {
		m, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("after %d of %d events: %v", len(got), n, err)
		}
		var body struct {
			Data struct {
				CustomerEvents *struct {
					Cursor   string    `json:"cursor"`
					Type     string    `json:"type"`
					ObjectID uuid.UUID `json:"objectId"`
				} `json:"customerEvents"`
			} `json:"data"`
		}
		e := &body.Data.CustomerEvents
		if m.Type != "next" || json.Unmarshal(m.Payload, &body) != nil || *e == nil {
			t.Fatalf("after %d events: %s %s", len(got), m.Type, m.Payload)
		}
		pos, err := strconv.ParseInt((*e).Cursor, 10, 64)
		if err != nil {
			t.Fatalf("cursor %q", (*e).Cursor)
		}
		got = append(got, processEvent{Position: pos, Type: (*e).Type, Object: (*e).ObjectID})
	}
	return got
}
