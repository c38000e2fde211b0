package resolvers_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/scalar"
	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// usageRow is one usage event a test stores directly, as ingestion would.
type usageRow struct {
	ts       time.Time
	name     string
	source   string // user when empty
	customer *uuid.UUID
	external string
	metadata string // {} when empty
	parent   *uuid.UUID
}

// insertUsageEvents stores events of an organization and returns their ids in order.
func insertUsageEvents(tb testing.TB, s *resolverstest.Server, orgID uuid.UUID, rows ...usageRow) []uuid.UUID {
	tb.Helper()
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = uuid.New()
		s.Exec(tb, `INSERT INTO events (id, organization_id, "timestamp", name, source, customer_id,
			external_customer_id, metadata, parent_id)
			VALUES ($1, $2, $3, $4, coalesce(nullif($5, ''), 'user'), $6, nullif($7, ''),
				coalesce(nullif($8, ''), '{}')::jsonb, $9)`,
			ids[i], orgID, r.ts, r.name, r.source, r.customer, r.external, r.metadata, r.parent)
	}
	return ids
}

// newEventsServer is a server whose events table has partitions around now.
func newEventsServer(tb testing.TB) *resolverstest.Server {
	tb.Helper()
	s := resolverstest.New(tb)
	s.Exec(tb, `SELECT ensure_event_partitions(now() - interval '3 months', 6)`)
	return s
}

const usageEventFields = `id timestamp createdAt organizationId name source customerId customer { id externalId }
	externalCustomerId memberId externalMemberId externalId parentId metadata label`

const usageEventsDoc = `query($first: Int, $after: String, $last: Int, $before: String, $sorting: [String!], $filter: UsageEventFilter) {
	usageEvents(first: $first, after: $after, last: $last, before: $before, sorting: $sorting, filter: $filter) {
		items { ` + usageEventFields + ` } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`

type usageEvent struct {
	ID             uuid.UUID  `json:"id"`
	Timestamp      string     `json:"timestamp"`
	CreatedAt      string     `json:"createdAt"`
	OrganizationID uuid.UUID  `json:"organizationId"`
	Name           string     `json:"name"`
	Source         string     `json:"source"`
	CustomerID     *uuid.UUID `json:"customerId"`
	Customer       *struct {
		ID         uuid.UUID `json:"id"`
		ExternalID *string   `json:"externalId"`
	} `json:"customer"`
	ExternalCustomerID *string        `json:"externalCustomerId"`
	MemberID           *uuid.UUID     `json:"memberId"`
	ExternalMemberID   *string        `json:"externalMemberId"`
	ExternalID         *string        `json:"externalId"`
	ParentID           *uuid.UUID     `json:"parentId"`
	Metadata           map[string]any `json:"metadata"`
	Label              string         `json:"label"`
}

type usagePage struct {
	Items    []usageEvent
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

// listUsageEvents runs usageEvents with the given arguments (absent when nil).
func listUsageEvents(tb testing.TB, s *resolverstest.Server, token string, args vars) usagePage {
	tb.Helper()
	var out struct{ UsageEvents usagePage }
	s.Query(tb, token, usageEventsDoc, args, &out)
	return out.UsageEvents
}

func usageIDs(items []usageEvent) []uuid.UUID {
	out := []uuid.UUID{}
	for _, e := range items {
		out = append(out, e.ID)
	}
	return out
}

// usageWorld is an organization with customers and events for the list tests; ids are
// named by role and all is the newest-first order.
type usageWorld struct {
	s                                    *resolverstest.Server
	org, other                           resolverstest.Org
	ada, bob                             customer
	old, byID, byExt, system, child, orp uuid.UUID
	foreign                              uuid.UUID
	all                                  []uuid.UUID
	now                                  time.Time
}

func newUsageWorld(t *testing.T) *usageWorld {
	s := newEventsServer(t)
	w := &usageWorld{s: s, org: s.NewOrg(t, "events:read"), other: s.NewOrg(t, resolverstest.AllScopes)}
	w.ada, w.bob = s.NewCustomer(t, w.org.ID, "ada"), s.NewCustomer(t, w.org.ID, "bob")
	s.NewCustomer(t, w.other.ID, "bob")
	w.now = time.Now().UTC().Truncate(time.Microsecond)
	day := 24 * time.Hour
	ids := insertUsageEvents(t, s, w.org.ID,
		usageRow{ts: w.now.Add(-700 * day), name: "tokens", customer: &w.bob.ID, metadata: `{"model": "a"}`},
		usageRow{ts: w.now.Add(-60 * day), name: "api.call", customer: &w.ada.ID, metadata: `{"model": "b"}`},
		usageRow{ts: w.now.Add(-30 * day), name: "api.call", external: "bob", metadata: `{"model": 1}`},
		usageRow{ts: w.now.Add(-30 * day), name: "meter.reset", source: "system"},
	)
	w.old, w.byID, w.byExt, w.system = ids[0], ids[1], ids[2], ids[3]
	ids = insertUsageEvents(t, s, w.org.ID,
		usageRow{ts: w.now.Add(-time.Hour), name: "api.call", external: "ada", parent: &w.byID},
		usageRow{ts: w.now.Add(-time.Minute), name: "tokens", external: "nobody", parent: &w.byID},
	)
	w.child, w.orp = ids[0], ids[1]
	w.foreign = insertUsageEvents(t, s, w.other.ID, usageRow{ts: w.now.Add(-time.Hour), name: "api.call", external: "bob"})[0]
	tie := []uuid.UUID{w.byExt, w.system}
	slices.SortFunc(tie, func(a, b uuid.UUID) int { return bytes.Compare(b[:], a[:]) })
	w.all = slices.Concat([]uuid.UUID{w.orp, w.child}, tie, []uuid.UUID{w.byID, w.old})
	return w
}

// only keeps ids of all, in its order.
func (w *usageWorld) only(keep ...uuid.UUID) []uuid.UUID {
	return slices.DeleteFunc(slices.Clone(w.all), func(id uuid.UUID) bool { return !slices.Contains(keep, id) })
}

func TestUsageEventsFilters(t *testing.T) {
	w := newUsageWorld(t)
	ts := func(d time.Duration) string { return scalar.FormatDateTime(w.now.Add(-d)) }
	day := 24 * time.Hour
	for _, tc := range []struct {
		name   string
		filter vars
		want   []uuid.UUID
	}{
		{"none", nil, w.all},
		{"customerId: by id and by external id", vars{"customerId": []uuid.UUID{w.ada.ID}}, w.only(w.byID, w.child)},
		{"externalCustomerId: by external id and by the customer's id", vars{"externalCustomerId": []string{"bob"}}, w.only(w.old, w.byExt)},
		{"name", vars{"name": []string{"tokens", "meter.reset"}}, w.only(w.old, w.system, w.orp)},
		{"source", vars{"source": []string{"system"}}, w.only(w.system)},
		{"startTimestamp", vars{"startTimestamp": ts(2 * day)}, w.only(w.child, w.orp)},
		{"endTimestamp", vars{"endTimestamp": ts(2 * day)}, w.only(w.old, w.byID, w.byExt, w.system)},
		{"time range", vars{"startTimestamp": ts(100 * day), "endTimestamp": ts(2 * day)}, w.only(w.byID, w.byExt, w.system)},
		{"metadata", vars{"metadata": []vars{{"key": "model", "values": []string{"a", "1"}}}}, w.only(w.old, w.byExt)},
		{"parentId", vars{"parentId": w.byID}, w.only(w.child, w.orp)},
		{"organizationId of another organization", vars{"organizationId": []uuid.UUID{w.other.ID}}, []uuid.UUID{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := vars{}
			if tc.filter != nil {
				args["filter"] = tc.filter
			}
			got := listUsageEvents(t, w.s, w.org.Token, args)
			if diff := cmp.Diff(tc.want, usageIDs(got.Items)); diff != "" {
				t.Errorf("newest first (-want +got):\n%s", diff)
			}
			args["sorting"] = []string{"timestamp"}
			asc := usageIDs(listUsageEvents(t, w.s, w.org.Token, args).Items)
			slices.Reverse(asc)
			if diff := cmp.Diff(tc.want, asc); diff != "" {
				t.Errorf("sorting timestamp, reversed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUsageEventsCursorWalk follows endCursor to the end: each event once, in order, with
// many events sharing timestamps and pages ending between them.
func TestUsageEventsCursorWalk(t *testing.T) {
	s := newEventsServer(t)
	org := s.NewOrg(t, "events:read")
	now := time.Now().UTC().Truncate(time.Microsecond)
	var rows []usageRow
	for i := range 23 {
		rows = append(rows, usageRow{ts: now.Add(-time.Duration(i%4) * 200 * 24 * time.Hour), name: "n"})
	}
	ids := insertUsageEvents(t, s, org.ID, rows...)
	type keyed struct {
		ts time.Time
		id uuid.UUID
	}
	keys := make([]keyed, len(ids))
	for i := range ids {
		keys[i] = keyed{rows[i].ts, ids[i]}
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		if c := a.ts.Compare(b.ts); c != 0 {
			return c
		}
		return bytes.Compare(a.id[:], b.id[:])
	})
	var ascending []uuid.UUID
	for _, k := range keys {
		ascending = append(ascending, k.id)
	}
	descending := slices.Clone(ascending)
	slices.Reverse(descending)
	for _, tc := range []struct {
		sorting []string
		want    []uuid.UUID
	}{{nil, descending}, {[]string{"-timestamp"}, descending}, {[]string{"timestamp"}, ascending}} {
		for _, first := range []int{1, 5, 23} {
			t.Run(fmt.Sprintf("%v by %d", tc.sorting, first), func(t *testing.T) {
				var got []uuid.UUID
				args := vars{"first": first, "sorting": tc.sorting}
				for pages := 1; ; pages++ {
					p := listUsageEvents(t, s, org.Token, args)
					got = append(got, usageIDs(p.Items)...)
					if !p.PageInfo.HasNextPage {
						break
					}
					if p.PageInfo.EndCursor == nil || pages > len(ids) {
						t.Fatalf("page %d: more pages but cursor %v", pages, p.PageInfo.EndCursor)
					}
					args["after"] = *p.PageInfo.EndCursor
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("walked ids (-want +got):\n%s", diff)
				}
				var back []uuid.UUID
				args = vars{"last": first, "sorting": tc.sorting}
				for pages := 1; ; pages++ {
					p := listUsageEvents(t, s, org.Token, args)
					back = append(usageIDs(p.Items), back...)
					if !p.PageInfo.HasPreviousPage {
						break
					}
					if pages > len(ids) {
						t.Fatal("the backward walk does not end")
					}
					args["before"] = *p.PageInfo.StartCursor
				}
				if diff := cmp.Diff(tc.want, back); diff != "" {
					t.Errorf("last/before walked (-want +got):\n%s", diff)
				}
			})
		}
	}
	empty := listUsageEvents(t, s, org.Token, vars{"filter": vars{"name": []string{"none"}}})
	if len(empty.Items) != 0 || empty.PageInfo.HasNextPage || empty.PageInfo.EndCursor != nil {
		t.Errorf("empty page = %+v, want no items, no next page and no cursor", empty)
	}
}

func TestUsageEventsArguments(t *testing.T) {
	s := newEventsServer(t)
	org := s.NewOrg(t, "events:read")
	s.Exec(t, `INSERT INTO events (organization_id, name) SELECT $1, 'n' FROM generate_series(1, 101)`, org.ID)
	full := listUsageEvents(t, s, org.Token, vars{"first": 100})
	if len(full.Items) != 100 || !full.PageInfo.HasNextPage {
		t.Errorf("first 100: %d items, next page %v; want 100 and a next page", len(full.Items), full.PageInfo.HasNextPage)
	}
	if n := len(listUsageEvents(t, s, org.Token, nil).Items); n != 100 {
		t.Errorf("no first: %d items, want 100", n)
	}
	ascending := listUsageEvents(t, s, org.Token, vars{"first": 2, "sorting": []string{"timestamp"}})
	short := base64.RawURLEncoding.EncodeToString(make([]byte, 23))
	for _, tc := range []struct {
		name string
		args vars
		want fieldErr
	}{
		{"first 0", vars{"first": 0}, fieldErr{Type: "value_error", Loc: []any{"query", "first"},
			Msg: "Input should be between 1 and 100.", Input: float64(0)}},
		{"first above 100, the most upstream's event list returns", vars{"first": 101}, fieldErr{Type: "value_error",
			Loc: []any{"query", "first"}, Msg: "Input should be between 1 and 100.", Input: float64(101)}},
		{"not base64", vars{"after": "not a cursor!"}, fieldErr{Type: "value_error", Loc: []any{"query", "after"},
			Msg: "Invalid cursor.", Input: "not a cursor!"}},
		{"too short", vars{"after": short}, fieldErr{Type: "value_error", Loc: []any{"query", "after"},
			Msg: "Invalid cursor.", Input: short}},
		{"empty", vars{"after": ""}, fieldErr{Type: "value_error", Loc: []any{"query", "after"},
			Msg: "Invalid cursor.", Input: ""}},
		{"a cursor of the other direction", vars{"after": *ascending.PageInfo.EndCursor}, fieldErr{Type: "value_error",
			Loc: []any{"query", "after"}, Msg: "Invalid cursor.", Input: *ascending.PageInfo.EndCursor}},
		{"unknown sorting", vars{"sorting": []string{"name"}}, fieldErr{Type: "enum", Loc: []any{"query", "sorting"},
			Msg: "Invalid sorting criterion.", Input: "name"}},
	} {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			got := s.QueryError(t, org.Token, usageEventsDoc, tc.args)
			wantError(t, got, "BAD_USER_INPUT", "RequestValidationError", tc.want)
		})
	}
}

func TestUsageEventsTenancyAndScopes(t *testing.T) {
	w := newUsageWorld(t)
	s := w.s
	if got := usageIDs(listUsageEvents(t, s, w.other.Token, nil).Items); !slices.Equal(got, []uuid.UUID{w.foreign}) {
		t.Errorf("other organization lists %v, want only %s", got, w.foreign)
	}
	const eventDoc = `query($id: UUID!) { usageEvent(id: $id) { id } }`
	wantError(t, s.QueryError(t, w.other.Token, eventDoc, vars{"id": w.byID}), "NOT_FOUND", "ResourceNotFound")
	var one struct{ UsageEvent struct{ ID uuid.UUID } }
	s.Query(t, w.org.Token, eventDoc, vars{"id": w.byID}, &one)
	if one.UsageEvent.ID != w.byID {
		t.Errorf("usageEvent = %s, want %s", one.UsageEvent.ID, w.byID)
	}
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "events:write", Orgs: []uuid.UUID{w.org.ID, w.other.ID}}).Token
	if got := usageIDs(listUsageEvents(t, s, user, nil).Items); len(got) != len(w.all)+1 || !slices.Contains(got, w.foreign) {
		t.Errorf("a member of both organizations lists %v, want all %d events", got, len(w.all)+1)
	}
	narrowed := listUsageEvents(t, s, user, vars{"filter": vars{"organizationId": []uuid.UUID{w.org.ID}}})
	if diff := cmp.Diff(w.all, usageIDs(narrowed.Items)); diff != "" {
		t.Errorf("organizationId filter (-want +got):\n%s", diff)
	}
	outsider := s.NewUser(t, resolverstest.UserSpec{Scope: "events:read"}).Token
	if got := listUsageEvents(t, s, outsider, nil).Items; len(got) != 0 {
		t.Errorf("a user of no organization lists %d events", len(got))
	}
	for name, token := range map[string]string{
		"organization token without events scopes": s.NewToken(t, w.org.ID, "customers:read"),
		"user token without events scopes":         s.NewUser(t, resolverstest.UserSpec{Scope: "customers:read", Orgs: []uuid.UUID{w.org.ID}}).Token,
	} {
		got := s.QueryError(t, token, usageEventsDoc, nil)
		if got.Extensions.Code != "FORBIDDEN" || got.Extensions.Reason != "insufficient_scope" {
			t.Errorf("%s: error %+v, want insufficient_scope", name, got)
		}
	}
	if got := s.QueryError(t, "", usageEventsDoc, nil); got.Extensions.Code != "UNAUTHENTICATED" || got.Extensions.Reason != "Unauthorized" {
		t.Errorf("anonymous: error %+v, want UNAUTHENTICATED Unauthorized", got)
	}
}

// TestUsageEventShape checks every field, the customer of events sent with an external id
// and the labels of user, typed and system events.
func TestUsageEventShape(t *testing.T) {
	w := newUsageWorld(t)
	s := w.s
	var typeID uuid.UUID
	s.Get(t, &typeID, `INSERT INTO event_types (organization_id, name, label, label_property_selector)
		VALUES ($1, 'api.call', 'API call', 'model') RETURNING id`, w.org.ID)
	s.Exec(t, `UPDATE events SET event_type_id = $1 WHERE name = 'api.call' AND organization_id = $2`, typeID, w.org.ID)
	s.Exec(t, `UPDATE events SET external_member_id = 'm-1', external_id = 'e-1' WHERE id = $1`, w.child)
	byID := map[uuid.UUID]usageEvent{}
	for _, e := range listUsageEvents(t, s, w.org.Token, nil).Items {
		byID[e.ID] = e
	}
	var one struct{ UsageEvent usageEvent }
	s.Query(t, w.org.Token, `query($id: UUID!) { usageEvent(id: $id) { `+usageEventFields+` } }`, vars{"id": w.child}, &one)
	child := byID[w.child]
	if diff := cmp.Diff(child, one.UsageEvent); diff != "" {
		t.Errorf("usageEvent differs from the listed event (-list +one):\n%s", diff)
	}
	if child.Timestamp != scalar.FormatDateTime(w.now.Add(-time.Hour)) || child.CreatedAt == "" ||
		child.OrganizationID != w.org.ID || child.Name != "api.call" || child.Source != "user" ||
		child.CustomerID != nil || *child.ExternalCustomerID != "ada" || child.MemberID != nil ||
		*child.ExternalMemberID != "m-1" || *child.ExternalID != "e-1" || *child.ParentID != w.byID {
		t.Errorf("child event = %+v", child)
	}
	for _, tc := range []struct {
		name         string
		id           uuid.UUID
		wantCustomer *uuid.UUID
		wantLabel    string
	}{
		{"by customer id, typed, selector names a property", w.byID, &w.ada.ID, "b"},
		{"by external id of a live customer, typed, property missing", w.child, &w.ada.ID, "API call"},
		{"by external id of no customer, untyped", w.orp, nil, "tokens"},
		{"system", w.system, nil, "Meter Reset"},
		{"typed, numeric property", w.byExt, &w.bob.ID, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := byID[tc.id]
			var got *uuid.UUID
			if e.Customer != nil {
				got = &e.Customer.ID
			}
			if !cmp.Equal(got, tc.wantCustomer) || e.Label != tc.wantLabel {
				t.Errorf("customer %v label %q, want %v %q", got, e.Label, tc.wantCustomer, tc.wantLabel)
			}
		})
	}
}

// TestUsageEventsCustomersCostOneStatement pins the page's cost: the events and their
// customers (by id or by external id) are two statements, whatever the page size. Not
// parallel, like the other statement counts.
func TestUsageEventsCustomersCostOneStatement(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	s.Exec(t, `SELECT ensure_event_partitions(now() - interval '3 months', 6)`)
	org := s.NewOrg(t, resolverstest.AllScopes)
	now := time.Now().UTC()
	var rows []usageRow
	for i := range 40 {
		c := s.NewCustomer(t, org.ID, fmt.Sprint("cost-", i))
		r := usageRow{ts: now.Add(-time.Duration(i) * time.Minute), name: "n"}
		if i%2 == 0 {
			r.customer = &c.ID
		} else {
			r.external = fmt.Sprint("cost-", i)
		}
		rows = append(rows, r)
	}
	insertUsageEvents(t, s, org.ID, rows...)
	listUsageEvents(t, s, org.Token, vars{"first": 1}) // the token is looked up once
	var counts []int64
	for _, first := range []int{2, 40} {
		counter.Reset()
		page := listUsageEvents(t, s, org.Token, vars{"first": first})
		counts = append(counts, counter.Snapshot().Statements())
		for _, e := range page.Items {
			if e.Customer == nil {
				t.Fatalf("event %s has no customer", e.ID)
			}
		}
	}
	if counts[0] != counts[1] || counts[1] > 3 {
		t.Errorf("pages of 2 and 40 events cost %v statements, want the same, at most 3 (%s)", counts, counter.Snapshot())
	}
}
