package storage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// eventRow is one event a test stores directly, as ingestion or Till itself would.
type eventRow struct {
	ts         time.Time
	name       string
	source     string // user when empty
	customer   *uuid.UUID
	external   string
	metadata   string // {} when empty
	parent     *uuid.UUID
	eventType  *uuid.UUID
	externalID string
}

// insertEventRows stores events of an organization and returns their ids in argument order.
func insertEventRows(tb testing.TB, db sqlx.ExtContext, orgID uuid.UUID, rows ...eventRow) []uuid.UUID {
	tb.Helper()
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = uuid.New()
		_, err := db.ExecContext(context.Background(), `INSERT INTO events (id, organization_id, "timestamp", name,
			source, customer_id, external_customer_id, metadata, parent_id, event_type_id, external_id)
			VALUES ($1, $2, $3, $4, coalesce(nullif($5, ''), 'user'), $6, nullif($7, ''),
				coalesce(nullif($8, ''), '{}')::jsonb, $9, $10, nullif($11, ''))`,
			ids[i], orgID, r.ts, r.name, r.source, r.customer, r.external, r.metadata, r.parent, r.eventType, r.externalID)
		if err != nil {
			tb.Fatalf("inserting event %d: %v", i, err)
		}
	}
	return ids
}

// eventsDB is a database whose events table has monthly partitions around now; events older
// than three months land in events_default.
func eventsDB(tb testing.TB) *sqlx.DB {
	tb.Helper()
	db := storagetest.New(tb)
	if _, err := db.ExecContext(context.Background(), `SELECT ensure_event_partitions(now() - interval '3 months', 6)`); err != nil {
		tb.Fatal(err)
	}
	return db
}

func eventOrg(tb testing.TB, db sqlx.ExtContext) *storage.Organization {
	tb.Helper()
	slug := "ev-" + uuid.NewString()[:8]
	o, err := storage.CreateOrganization(context.Background(), db, "Org "+slug, slug)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

func eventCustomer(tb testing.TB, db sqlx.ExtContext, orgID uuid.UUID, externalID string) *storage.Customer {
	tb.Helper()
	email := uuid.NewString()[:8] + "@example.com"
	c, err := storage.CreateCustomer(context.Background(), db, orgID, storage.CustomerWrite{Email: &email, ExternalID: &externalID})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// listEventIDs lists with q (up to 1000 events unless q says otherwise) and returns the ids.
func listEventIDs(tb testing.TB, db sqlx.ExtContext, orgs []uuid.UUID, q storage.EventListQuery) []uuid.UUID {
	tb.Helper()
	if q.Window.Limit == 0 {
		q.Window.Limit = 1000
	}
	p, err := storage.ListEvents(context.Background(), db, orgs, q)
	if err != nil {
		tb.Fatal(err)
	}
	out := []uuid.UUID{}
	for _, e := range p.Items {
		out = append(out, e.ID)
	}
	return out
}

// eventFixture is an organization's events for the filter tests, named by role.
type eventFixture struct {
	org, other                      uuid.UUID
	ada, bob, gone                  *storage.Customer
	old, byID, byExt, system, child uuid.UUID
	orphan, goneEvent, foreign      uuid.UUID
	typeID                          uuid.UUID
	oldTS, goneTS                   time.Time
}

// newEventFixture stores, newest last: an event in events_default (two years old), events
// of the partitions sent with customer ids and external ids (one whose customer does not
// exist, one of a deleted customer), a system event at the same timestamp as a user event,
// children of an event, and another organization's event with an external id that exists
// there too.
func newEventFixture(t *testing.T, db *sqlx.DB) eventFixture {
	org, other := eventOrg(t, db), eventOrg(t, db)
	f := eventFixture{org: org.ID, other: other.ID}
	f.ada, f.bob, f.gone = eventCustomer(t, db, org.ID, "ada"), eventCustomer(t, db, org.ID, "bob"), eventCustomer(t, db, org.ID, "gone")
	if _, err := storage.DeleteCustomer(t.Context(), db, []uuid.UUID{org.ID}, f.gone.ID); err != nil {
		t.Fatal(err)
	}
	eventCustomer(t, db, other.ID, "ada")
	if err := db.GetContext(t.Context(), &f.typeID, `INSERT INTO event_types (organization_id, name, label, label_property_selector)
		VALUES ($1, 'api.call', 'API call', '_llm.model') RETURNING id`, org.ID); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	day := 24 * time.Hour
	ids := insertEventRows(t, db, org.ID,
		eventRow{ts: now.Add(-730 * day), name: "tokens", customer: &f.bob.ID, metadata: `{"model": "a", "n": 1}`},
		eventRow{ts: now.Add(-70 * day), name: "api.call", customer: &f.ada.ID, metadata: `{"model": "a"}`, eventType: &f.typeID},
		eventRow{ts: now.Add(-40 * day), name: "api.call", external: "bob", metadata: `{"model": "b", "_llm": {"model": "gpt"}}`, eventType: &f.typeID},
		eventRow{ts: now.Add(-40 * day), name: "meter.credited", source: "system", customer: &f.ada.ID},
	)
	f.old, f.byID, f.byExt, f.system = ids[0], ids[1], ids[2], ids[3]
	ids = insertEventRows(t, db, org.ID,
		eventRow{ts: now.Add(-10 * day), name: "api.call", external: "ada", parent: &f.byID, metadata: `{"model": 1}`},
		eventRow{ts: now.Add(-10 * day), name: "api.call", external: "nobody", parent: &f.byID},
		eventRow{ts: now.Add(-time.Hour), name: "tokens", external: "gone", externalID: "ext-1"},
	)
	f.child, f.orphan, f.goneEvent = ids[0], ids[1], ids[2]
	f.oldTS, f.goneTS = now.Add(-730*day), now.Add(-time.Hour)
	f.foreign = insertEventRows(t, db, other.ID, eventRow{ts: now.Add(-10 * day), name: "api.call", external: "ada"})[0]
	return f
}

func TestListEventsFilters(t *testing.T) {
	db := eventsDB(t)
	f := newEventFixture(t, db)
	now := time.Now()
	at := func(d time.Duration) *time.Time { v := now.Add(-d); return &v }
	day := 24 * time.Hour
	// newest first; ties in timestamp broken by id, descending
	tie := func(a, b uuid.UUID) []uuid.UUID {
		if bytes.Compare(a[:], b[:]) > 0 {
			return []uuid.UUID{a, b}
		}
		return []uuid.UUID{b, a}
	}
	all := slices.Concat([]uuid.UUID{f.goneEvent}, tie(f.child, f.orphan), tie(f.byExt, f.system), []uuid.UUID{f.byID, f.old})
	only := func(keep ...uuid.UUID) []uuid.UUID {
		return slices.DeleteFunc(slices.Clone(all), func(id uuid.UUID) bool { return !slices.Contains(keep, id) })
	}
	for _, tc := range []struct {
		name   string
		filter storage.EventListFilter
		want   []uuid.UUID
	}{
		{"no filter: every event of the organization, newest first", storage.EventListFilter{}, all},
		{"customer id: sent with its id or its external id", storage.EventListFilter{CustomerIDs: []uuid.UUID{f.ada.ID}},
			only(f.byID, f.system, f.child)},
		{"customer ids are OR-ed", storage.EventListFilter{CustomerIDs: []uuid.UUID{f.ada.ID, f.bob.ID}},
			only(f.byID, f.system, f.child, f.old, f.byExt)},
		{"a deleted customer's id matches its events sent by id only", storage.EventListFilter{CustomerIDs: []uuid.UUID{f.gone.ID}}, []uuid.UUID{}},
		{"external customer id: sent with it or with its live customer's id", storage.EventListFilter{ExternalCustomerIDs: []string{"bob"}},
			only(f.old, f.byExt)},
		{"external customer id without a customer", storage.EventListFilter{ExternalCustomerIDs: []string{"nobody", "gone"}},
			only(f.orphan, f.goneEvent)},
		{"one name", storage.EventListFilter{Names: []string{"tokens"}}, only(f.old, f.goneEvent)},
		{"names are OR-ed", storage.EventListFilter{Names: []string{"tokens", "meter.credited"}}, only(f.old, f.goneEvent, f.system)},
		{"source", storage.EventListFilter{Sources: []string{"system"}}, only(f.system)},
		{"start timestamp", storage.EventListFilter{After: at(20 * day)}, only(f.child, f.orphan, f.goneEvent)},
		{"end timestamp", storage.EventListFilter{Before: at(50 * day)}, only(f.byID, f.old)},
		{"start timestamp is strict", storage.EventListFilter{After: &f.goneTS}, []uuid.UUID{}},
		{"end timestamp is strict", storage.EventListFilter{Before: &f.oldTS}, []uuid.UUID{}},
		{"time range", storage.EventListFilter{After: at(100 * day), Before: at(20 * day)}, only(f.byID, f.byExt, f.system)},
		{"metadata values are OR-ed and compared as text", storage.EventListFilter{Metadata: map[string][]string{"model": {"a", "1"}}},
			only(f.old, f.byID, f.child)},
		{"metadata keys are AND-ed", storage.EventListFilter{Metadata: map[string][]string{"model": {"a"}, "n": {"1"}}}, only(f.old)},
		{"parent", storage.EventListFilter{ParentID: &f.byID}, only(f.child, f.orphan)},
		{"filters combine", storage.EventListFilter{Names: []string{"api.call"}, ExternalCustomerIDs: []string{"ada"}}, only(f.byID, f.child)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := listEventIDs(t, db, []uuid.UUID{f.org}, storage.EventListQuery{Filter: tc.filter})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			asc := listEventIDs(t, db, []uuid.UUID{f.org}, storage.EventListQuery{Filter: tc.filter, Ascending: true})
			slices.Reverse(asc)
			if diff := cmp.Diff(tc.want, asc); diff != "" {
				t.Errorf("ascending ids, reversed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListEventsTenancy(t *testing.T) {
	db := eventsDB(t)
	f := newEventFixture(t, db)
	if got := listEventIDs(t, db, []uuid.UUID{f.other}, storage.EventListQuery{}); !slices.Equal(got, []uuid.UUID{f.foreign}) {
		t.Errorf("other organization lists %v, want only its own event %s", got, f.foreign)
	}
	if got := listEventIDs(t, db, []uuid.UUID{f.org}, storage.EventListQuery{}); slices.Contains(got, f.foreign) {
		t.Errorf("organization lists another organization's event %s", f.foreign)
	}
	bothPage, err := storage.ListEvents(t.Context(), db, []uuid.UUID{f.org, f.other}, storage.EventListQuery{Window: storage.Window{Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	both := bothPage.Items
	inOrder := slices.IsSortedFunc(both, func(a, b *storage.Event) int {
		if c := b.Timestamp.Compare(a.Timestamp); c != 0 {
			return c
		}
		return bytes.Compare(b.ID[:], a.ID[:])
	})
	if len(both) != 8 || !inOrder || !slices.ContainsFunc(both, func(e *storage.Event) bool { return e.ID == f.foreign }) {
		t.Errorf("both organizations list %d events (in order: %v), want all 8 newest first, the other's included", len(both), inOrder)
	}
	if got := listEventIDs(t, db, nil, storage.EventListQuery{}); len(got) != 0 {
		t.Errorf("no organization lists %v, want nothing", got)
	}
	if _, err := storage.GetEvent(t.Context(), db, []uuid.UUID{f.other}, f.byID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("reading another organization's event: err = %v, want ErrNotFound", err)
	}
}

func TestGetEventDecorations(t *testing.T) {
	db := eventsDB(t)
	f := newEventFixture(t, db)
	for _, tc := range []struct {
		name             string
		id               uuid.UUID
		wantCustomer     *uuid.UUID
		wantLabel        *string
		wantSelector     *string
		wantMetadataJSON string
	}{
		{"sent with a customer id", f.byID, &f.ada.ID, eventPtr("API call"), eventPtr("_llm.model"), `{"model":"a"}`},
		{"sent with the external id of a live customer", f.child, &f.ada.ID, nil, nil, `{"model":1}`},
		{"an external id without a customer does not resolve", f.orphan, nil, nil, nil, `{}`},
		{"the external id of a deleted customer does not resolve", f.goneEvent, nil, nil, nil, `{}`},
		{"in events_default", f.old, &f.bob.ID, nil, nil, `{"model":"a","n":1}`},
		{"nested metadata", f.byExt, &f.bob.ID, eventPtr("API call"), eventPtr("_llm.model"), `{"_llm":{"model":"gpt"},"model":"b"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := storage.GetEvent(t.Context(), db, []uuid.UUID{f.org}, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			meta, _ := json.Marshal(map[string]any(e.Metadata))
			if e.ID != tc.id || !cmp.Equal(e.ResolvedCustomerID, tc.wantCustomer) || !cmp.Equal(e.TypeLabel, tc.wantLabel) ||
				!cmp.Equal(e.LabelPropertySelector, tc.wantSelector) || string(meta) != tc.wantMetadataJSON {
				t.Errorf("event = id %s, customer %v, label %v, selector %v, metadata %s; want %s, %v, %v, %v, %s",
					e.ID, e.ResolvedCustomerID, e.TypeLabel, e.LabelPropertySelector, meta,
					tc.id, tc.wantCustomer, tc.wantLabel, tc.wantSelector, tc.wantMetadataJSON)
			}
			listed, err := storage.ListEvents(t.Context(), db, []uuid.UUID{f.org}, storage.EventListQuery{Window: storage.Window{Limit: 100}})
			if err != nil {
				t.Fatal(err)
			}
			page := listed.Items
			i := slices.IndexFunc(page, func(p *storage.Event) bool { return p.ID == tc.id })
			if i < 0 {
				t.Fatalf("event %s is not listed", tc.id)
			}
			if !cmp.Equal(page[i], e) {
				t.Errorf("listed event differs from the read one:\n%s", cmp.Diff(e, page[i]))
			}
		})
	}
}

func eventPtr[T any](v T) *T { return &v }

// TestListEventsPagesByCursor walks lists page by page with the last event of each page as
// cursor: every event comes exactly once, in order, whatever the page size, with many
// events sharing a timestamp, some of them on both sides of a page boundary.
func TestListEventsPagesByCursor(t *testing.T) {
	db := eventsDB(t)
	org, other := eventOrg(t, db), eventOrg(t, db)
	now := time.Now().UTC().Truncate(time.Microsecond)
	var rows []eventRow
	for i := range 57 {
		// 9 distinct timestamps over two years: partitions, events_default and ties
		rows = append(rows, eventRow{ts: now.Add(-time.Duration(i%9) * 90 * 24 * time.Hour), name: fmt.Sprint("n", i%2)})
	}
	ids := insertEventRows(t, db, org.ID, rows...)
	insertEventRows(t, db, other.ID, rows[:5]...)
	type keyed struct {
		ts time.Time
		id uuid.UUID
	}
	byKey := make([]keyed, len(ids))
	for i, id := range ids {
		byKey[i] = keyed{rows[i].ts, id}
	}
	slices.SortFunc(byKey, func(a, b keyed) int {
		if c := a.ts.Compare(b.ts); c != 0 {
			return c
		}
		return bytes.Compare(a.id[:], b.id[:])
	})
	ascending := make([]uuid.UUID, len(byKey))
	for i, k := range byKey {
		ascending[i] = k.id
	}
	descending := slices.Clone(ascending)
	slices.Reverse(descending)
	for _, size := range []int{1, 4, 9, 56, 57, 58} {
		for _, asc := range []bool{false, true} {
			t.Run(fmt.Sprintf("size %d ascending %v", size, asc), func(t *testing.T) {
				want := descending
				if asc {
					want = ascending
				}
				q := storage.EventListQuery{Window: storage.Window{Limit: size}, Ascending: asc}
				got, pages := walkEvents(t, db, org.ID, q)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("walked ids (-want +got):\n%s", diff)
				}
				if wantPages := max(1, (len(want)+size-1)/size); pages != wantPages {
					t.Errorf("%d pages, want %d", pages, wantPages)
				}
				q.Window.Backward = true
				if diff := cmp.Diff(want, walkEventsBackward(t, db, org.ID, q)); diff != "" {
					t.Errorf("walked backward from the end (-want +got):\n%s", diff)
				}
			})
		}
	}
	t.Run("with a filter", func(t *testing.T) {
		want := slices.DeleteFunc(slices.Clone(descending), func(id uuid.UUID) bool {
			return rows[slices.Index(ids, id)].name != "n1"
		})
		got, _ := walkEvents(t, db, org.ID, storage.EventListQuery{Window: storage.Window{Limit: 5}, Filter: storage.EventListFilter{Names: []string{"n1"}}})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("walked ids (-want +got):\n%s", diff)
		}
	})
}

// walkEvents reads a list to its end and returns the ids and the number of pages read.
func walkEvents(t *testing.T, db sqlx.ExtContext, orgID uuid.UUID, q storage.EventListQuery) ([]uuid.UUID, int) {
	t.Helper()
	got := []uuid.UUID{}
	for pages := 1; ; pages++ {
		p, err := storage.ListEvents(t.Context(), db, []uuid.UUID{orgID}, q)
		if err != nil {
			t.Fatal(err)
		}
		items, more := p.Items, p.More
		if len(items) > q.Window.Limit || (more && len(items) != q.Window.Limit) {
			t.Fatalf("page %d: %d items with more %v, limit %d", pages, len(items), more, q.Window.Limit)
		}
		for _, e := range items {
			got = append(got, e.ID)
		}
		if !more {
			return got, pages
		}
		q.Window.After = &p.Cursors[len(p.Cursors)-1]
		if pages > 1000 {
			t.Fatal("the walk does not end")
		}
	}
}

// walkEventsBackward reads a list from its end to its start, each window before the
// previous one's first event, and returns the ids in list order.
func walkEventsBackward(t *testing.T, db sqlx.ExtContext, orgID uuid.UUID, q storage.EventListQuery) []uuid.UUID {
	t.Helper()
	got := []uuid.UUID{}
	for pages := 1; ; pages++ {
		p, err := storage.ListEvents(t.Context(), db, []uuid.UUID{orgID}, q)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]uuid.UUID, len(p.Items))
		for i, e := range p.Items {
			ids[i] = e.ID
		}
		got = append(ids, got...)
		if !p.More {
			return got
		}
		q.Window.Before = &p.Cursors[0]
		if pages > 1000 {
			t.Fatal("the walk does not end")
		}
	}
}

// explainingDB runs EXPLAIN ANALYZE before each query, keeping the plans, so a test can
// see what a storage function's statements read.
type explainingDB struct {
	*sqlx.DB
	plans []string
}

func (e *explainingDB) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	var plan string
	if err := e.GetContext(ctx, &plan, "EXPLAIN (ANALYZE, FORMAT JSON) "+query, args...); err != nil {
		return nil, err
	}
	e.plans = append(e.plans, plan)
	return e.DB.QueryxContext(ctx, query, args...)
}

// planNode is the part of an EXPLAIN (FORMAT JSON) node the cost test reads.
type planNode struct {
	NodeType    string     `json:"Node Type"`
	Relation    string     `json:"Relation Name"`
	IndexName   string     `json:"Index Name"`
	ActualRows  float64    `json:"Actual Rows"`
	ActualLoops float64    `json:"Actual Loops"`
	Removed     float64    `json:"Rows Removed by Filter"`
	Plans       []planNode `json:"Plans"`
}

// eventScans lists the scans of events partitions in a plan.
func eventScans(n planNode) []planNode {
	var out []planNode
	if n.Relation == "events" || len(n.Relation) > 7 && n.Relation[:7] == "events_" {
		out = append(out, n)
	}
	for _, c := range n.Plans {
		out = append(out, eventScans(c)...)
	}
	return out
}

// TestListEventsDeepPageReadsOnlyItsRows pins the keyset: a page deep into a long list reads
// about a page of rows from the events index, not the rows before it, and never scans a
// partition sequentially.
func TestListEventsDeepPageReadsOnlyItsRows(t *testing.T) {
	db := eventsDB(t)
	org, other := eventOrg(t, db), eventOrg(t, db)
	for _, o := range []uuid.UUID{org.ID, other.ID} {
		if _, err := db.ExecContext(t.Context(), `INSERT INTO events (organization_id, "timestamp", name)
			SELECT $1, now() - (i % 2500) * interval '1 hour' - (i / 2500) * interval '400 days', 'n' || (i % 3)
			FROM generate_series(1, 6000) i`, o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(t.Context(), `ANALYZE events`); err != nil {
		t.Fatal(err)
	}
	const limit = 20
	for _, tc := range []struct {
		name string
		q    storage.EventListQuery
	}{
		{"newest first", storage.EventListQuery{Window: storage.Window{Limit: limit}}},
		{"oldest first", storage.EventListQuery{Window: storage.Window{Limit: limit}, Ascending: true}},
		{"one name", storage.EventListQuery{Window: storage.Window{Limit: limit}, Filter: storage.EventListFilter{Names: []string{"n1"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deep := tc.q
			deep.Window.Limit = 1500
			items, err := storage.ListEvents(t.Context(), db, []uuid.UUID{org.ID}, deep)
			if err != nil || len(items.Items) != deep.Window.Limit {
				t.Fatalf("%d items, err %v", len(items.Items), err)
			}
			tc.q.Window.After = &items.Cursors[len(items.Cursors)-1]
			edb := &explainingDB{DB: db}
			page, err := storage.ListEvents(t.Context(), edb, []uuid.UUID{org.ID}, tc.q)
			if err != nil || len(page.Items) != limit || len(edb.plans) != 1 {
				t.Fatalf("%d items, %d statements, err %v", len(page.Items), len(edb.plans), err)
			}
			var plans []struct{ Plan planNode }
			if err := json.Unmarshal([]byte(edb.plans[0]), &plans); err != nil {
				t.Fatal(err)
			}
			var read float64
			for _, s := range eventScans(plans[0].Plan) {
				if s.IndexName == "" {
					t.Errorf("%s is read by %s, not by an index", s.Relation, s.NodeType)
				}
				read += (s.ActualRows + s.Removed) * s.ActualLoops
			}
			if read > 3*limit {
				t.Errorf("the page read %v events rows, want about %d:\n%s", read, limit, edb.plans[0])
			}
		})
	}
}
