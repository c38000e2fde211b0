package resolvers_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

const ingestDoc = `mutation($in: UsageEventsIngestInput!) { ingestEvents(input: $in) { inserted duplicates } }`

type ingestResult struct {
	Inserted   int `json:"inserted"`
	Duplicates int `json:"duplicates"`
}

// ingestWorld is an organization with a customer and a member, and a second organization.
type ingestWorld struct {
	s        *resolverstest.Server
	org      resolverstest.Org
	other    resolverstest.Org
	customer customer
	member   uuid.UUID
}

func newIngestWorld(t *testing.T) *ingestWorld {
	t.Helper()
	s := resolverstest.New(t)
	w := &ingestWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes), other: s.NewOrg(t, resolverstest.AllScopes)}
	w.customer = s.NewCustomer(t, w.org.ID, "ext-1")
	s.Get(t, &w.member, `UPDATE members SET email = 'm@example.com' WHERE organization_id = $1 AND customer_id = $2
		AND role = 'owner' RETURNING id`, w.org.ID, w.customer.ID) // the owner made with the customer
	return w
}

func (w *ingestWorld) ingest(t *testing.T, token string, events ...vars) ingestResult {
	t.Helper()
	var out struct{ IngestEvents ingestResult }
	w.s.Query(t, token, ingestDoc, vars{"in": vars{"events": events}}, &out)
	return out.IngestEvents
}

// count is how many events of the organization exist.
func (w *ingestWorld) count(t *testing.T, orgID uuid.UUID) int {
	t.Helper()
	var n int
	w.s.Get(t, &n, `SELECT count(*) FROM events WHERE organization_id = $1`, orgID)
	return n
}

func ev(name string, fields ...any) vars {
	v := vars{"name": name}
	for i := 0; i+1 < len(fields); i += 2 {
		v[fields[i].(string)] = fields[i+1]
	}
	return v
}

func TestIngestEventsStoresWhatWasSent(t *testing.T) {
	t.Parallel()
	w := newIngestWorld(t)
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	got := w.ingest(t, w.org.Token,
		ev("api_call", "customerId", w.customer.ID, "memberId", w.member, "timestamp", at.Format(time.RFC3339),
			"externalId", "e-1", "metadata", vars{"tokens": 12, "model": "small", "ok": true,
				"_cost": vars{"amount": "0.25", "currency": "usd"}}),
		ev("api_call", "externalCustomerId", "later", "externalMemberId", "m-9", "parentId", "e-1"))
	if got != (ingestResult{Inserted: 2}) {
		t.Fatalf("ingest = %+v", got)
	}
	var row struct {
		Timestamp time.Time `db:"timestamp"`
		Source    string    `db:"source"`
		Tokens    string    `db:"tokens"`
		Cost      string    `db:"cost"`
		Typed     bool      `db:"typed"`
	}
	w.s.Get(t, &row, `SELECT "timestamp", source, metadata->>'tokens' AS tokens, metadata->'_cost'->>'amount' AS cost,
		event_type_id IS NOT NULL AS typed FROM events WHERE external_id = 'e-1'`)
	if !row.Timestamp.Equal(at) || row.Source != "user" || row.Tokens != "12" || row.Cost != "0.25" || !row.Typed {
		t.Errorf("stored event = %+v", row)
	}
	var child struct {
		ParentLinked bool    `db:"parent_linked"`
		ExtCustomer  *string `db:"external_customer_id"`
		Recent       bool    `db:"recent"`
	}
	w.s.Get(t, &child, `SELECT c.parent_id = p.id AS parent_linked, c.external_customer_id,
			c."timestamp" > now() - interval '1 minute' AS recent
		FROM events c, events p WHERE c.external_member_id = 'm-9' AND p.external_id = 'e-1'`)
	if !child.ParentLinked || child.ExtCustomer == nil || *child.ExtCustomer != "later" || !child.Recent {
		t.Errorf("child event = %+v (parent linked, external customer kept, timestamp defaults to now)", child)
	}
	var parentID uuid.UUID
	w.s.Get(t, &parentID, `SELECT id FROM events WHERE external_id = 'e-1'`)
	for _, ref := range []string{parentID.String(), "unknown-parent"} {
		w.ingest(t, w.org.Token, ev("api_call", "externalCustomerId", "later", "externalId", "by-"+ref, "parentId", ref))
	}
	var byID, pending struct {
		Parent *uuid.UUID `db:"parent_id"`
		Root   *uuid.UUID `db:"root_id"`
	}
	w.s.Get(t, &byID, `SELECT parent_id, root_id FROM events WHERE external_id = $1`, "by-"+parentID.String())
	w.s.Get(t, &pending, `SELECT parent_id, root_id FROM events WHERE external_id = 'by-unknown-parent'`)
	if byID.Parent == nil || *byID.Parent != parentID || byID.Root == nil || *byID.Root != parentID || pending.Parent != nil {
		t.Errorf("parent by id = %+v, unknown parent = %+v (want linked, and pending)", byID, pending)
	}
}

// TestIngestEventsChainsRootInOneBatch: a chain of parents sent in one batch, in any order,
// gives every event the chain's first event as its root.
func TestIngestEventsChainsRootInOneBatch(t *testing.T) {
	t.Parallel()
	w := newIngestWorld(t)
	w.ingest(t, w.org.Token, ev("api_call", "externalCustomerId", "c", "externalId", "root"))
	w.ingest(t, w.org.Token,
		ev("api_call", "externalCustomerId", "c", "externalId", "d", "parentId", "c3"),
		ev("api_call", "externalCustomerId", "c", "externalId", "c1", "parentId", "root"),
		ev("api_call", "externalCustomerId", "c", "externalId", "c2", "parentId", "c1"),
		ev("api_call", "externalCustomerId", "c", "externalId", "c3", "parentId", "c2"))
	var rooted string
	w.s.Get(t, &rooted, `SELECT coalesce(string_agg(e.external_id, ',' ORDER BY e.external_id), '') FROM events e, events r
		WHERE r.external_id = 'root' AND e.root_id = r.id`)
	if rooted != "c1,c2,c3,d" {
		t.Errorf("events rooted at the chain's first event: %q, want c1,c2,c3,d (d names c3, later in its batch)", rooted)
	}
}

func TestIngestEventsDeduplicatesExternalIDs(t *testing.T) {
	t.Parallel()
	w := newIngestWorld(t)
	c := w.customer.ID
	tests := []struct {
		name   string
		token  string
		events []vars
		want   ingestResult
	}{
		{"new ids", w.org.Token, []vars{ev("a", "customerId", c, "externalId", "x1"), ev("a", "customerId", c, "externalId", "x2")}, ingestResult{2, 0}},
		{"a retried batch is all duplicates", w.org.Token, []vars{ev("a", "customerId", c, "externalId", "x1"), ev("a", "customerId", c, "externalId", "x2")}, ingestResult{0, 2}},
		{"repeats inside one batch: the first wins", w.org.Token, []vars{ev("first", "customerId", c, "externalId", "x3"), ev("second", "customerId", c, "externalId", "x3")}, ingestResult{1, 1}},
		{"no external id is never a duplicate", w.org.Token, []vars{ev("a", "customerId", c), ev("a", "customerId", c)}, ingestResult{2, 0}},
		{"content does not matter, only the id", w.org.Token, []vars{ev("other", "externalCustomerId", "z", "externalId", "x1")}, ingestResult{0, 1}},
		{"the same id in another organization is new", w.other.Token, []vars{ev("a", "externalCustomerId", "z", "externalId", "x1")}, ingestResult{1, 0}},
		{"an empty batch", w.org.Token, []vars{}, ingestResult{0, 0}},
	}
	for _, tt := range tests {
		if got := w.ingest(t, tt.token, tt.events...); got != tt.want {
			t.Errorf("%s: ingest = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	var name string
	w.s.Get(t, &name, `SELECT name FROM events WHERE organization_id = $1 AND external_id = 'x3'`, w.org.ID)
	if name != "first" {
		t.Errorf("x3 stored as %q, want the batch's first", name)
	}
	if n := w.count(t, w.org.ID); n != 5 {
		t.Errorf("organization holds %d events, want 5", n)
	}
}

// TestIngestEventsIsAllOrNothing sends one bad event among many good ones, for each way an
// event can be bad: every failure is reported at its index and nothing is stored. (GraphQL
// bodies are capped at 64 KiB; the /v1 tests send 1,000-event batches.)
func TestIngestEventsIsAllOrNothing(t *testing.T) {
	t.Parallel()
	w := newIngestWorld(t)
	c := w.customer.ID
	otherCustomer := w.s.NewCustomer(t, w.other.ID, "")
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	long := fmt.Sprintf("%0129d", 0)
	tests := []struct {
		name string
		bad  vars
		want fieldErr
	}{
		{"unknown customer", ev("a", "customerId", uuid.New()),
			fieldErr{Type: "customer_id", Loc: []any{"input", "events", 100, "customerId"}, Msg: "Customer not found."}},
		{"another organization's customer", ev("a", "customerId", otherCustomer.ID),
			fieldErr{Type: "customer_id", Loc: []any{"input", "events", 100, "customerId"}, Msg: "Customer not found."}},
		{"unknown member", ev("a", "customerId", c, "memberId", uuid.New()),
			fieldErr{Type: "member_id", Loc: []any{"input", "events", 100, "memberId"}, Msg: "Member not found."}},
		{"organization with an organization token", ev("a", "customerId", c, "organizationId", w.org.ID),
			fieldErr{Type: "organization_token", Loc: []any{"input", "events", 100, "organizationId"},
				Msg: "Setting organization_id is disallowed when using an organization token."}},
		{"future timestamp", ev("a", "customerId", c, "timestamp", future),
			fieldErr{Type: "value_error", Loc: []any{"input", "events", 100, "timestamp"}, Msg: "Value error, Timestamp must be in the past."}},
		{"name too long", ev(long, "customerId", c),
			fieldErr{Type: "string_too_long", Loc: []any{"input", "events", 100, "name"}, Msg: "String should have at most 128 characters"}},
		{"no customer", ev("a"),
			fieldErr{Type: "value_error", Loc: []any{"input", "events", 100, "customerId"}}},
		{"nested metadata value", ev("a", "customerId", c, "metadata", vars{"deep": vars{"x": 1}}),
			fieldErr{Type: "value_error", Loc: []any{"input", "events", 100, "metadata", "deep"}}},
		{"_cost in another currency", ev("a", "customerId", c, "metadata", vars{"_cost": vars{"amount": 1, "currency": "eur"}}),
			fieldErr{Type: "string_pattern_mismatch", Loc: []any{"input", "events", 100, "metadata", "_cost", "currency"}, Msg: "String should match pattern 'usd'"}},
		{"_cost amount below a cent's 12 places", ev("a", "customerId", c, "metadata", vars{"_cost": vars{"amount": json.Number("1e-400"), "currency": "usd"}}),
			fieldErr{Type: "decimal_max_digits", Loc: []any{"input", "events", 100, "metadata", "_cost", "amount"}}},
		{"_cost amount that is not a number", ev("a", "customerId", c, "metadata", vars{"_cost": vars{"amount": "n/a", "currency": "usd"}}),
			fieldErr{Type: "decimal_parsing", Loc: []any{"input", "events", 100, "metadata", "_cost", "amount"}, Msg: "Input should be a valid decimal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := make([]vars, 200)
			for i := range events {
				events[i] = ev("good", "customerId", c, "externalId", fmt.Sprintf("%s-%d", tt.name, i))
			}
			events[100] = tt.bad
			e := w.s.QueryError(t, w.org.Token, ingestDoc, vars{"in": vars{"events": events}})
			if e.Extensions.Code != "BAD_USER_INPUT" || len(e.Extensions.Fields) != 1 {
				t.Fatalf("error = %+v, want one BAD_USER_INPUT field", e)
			}
			got := e.Extensions.Fields[0]
			if got.Type != tt.want.Type || fmt.Sprint(got.Loc) != fmt.Sprint(tt.want.Loc) || (tt.want.Msg != "" && got.Msg != tt.want.Msg) {
				t.Errorf("item = %+v, want %+v", got, tt.want)
			}
			if n := w.count(t, w.org.ID); n != 0 {
				t.Errorf("%d events stored by a rejected batch", n)
			}
		})
	}
}

func TestIngestEventsOrganizationOfUserTokens(t *testing.T) {
	t.Parallel()
	w := newIngestWorld(t)
	user := w.s.NewUser(t, resolverstest.UserSpec{Scope: "events:write", Orgs: []uuid.UUID{w.org.ID}}).Token
	c := w.customer.ID
	if got := w.ingest(t, user, ev("a", "customerId", c, "organizationId", w.org.ID)); got.Inserted != 1 {
		t.Fatalf("user ingest = %+v", got)
	}
	e := w.s.QueryError(t, user, ingestDoc, vars{"in": vars{"events": []vars{
		ev("a", "customerId", c), ev("a", "customerId", c, "organizationId", w.other.ID)}}})
	want := []fieldErr{
		{Type: "missing", Loc: []any{"input", "events", 0, "organizationId"}, Msg: "organization_id is required."},
		{Type: "organization_id", Loc: []any{"input", "events", 1, "organizationId"}, Msg: "Organization not found.", Input: w.other.ID.String()},
	}
	wantError(t, e, "BAD_USER_INPUT", "PolarRequestValidationError", want...)
}

// TestIngestEventsConcurrentIdenticalBatches races identical batches: each external id is
// stored once, and the callers' inserted counts add up to the number of distinct ids.
func TestIngestEventsConcurrentIdenticalBatches(t *testing.T) {
	t.Parallel()
	w := newIngestWorld(t)
	const callers, distinct = 50, 200
	batch := make([]vars, distinct)
	for i := range batch {
		// reversed in half the callers below, so lock order differs between batches
		batch[i] = ev("race", "customerId", w.customer.ID, "externalId", fmt.Sprintf("r-%03d", i))
	}
	reversed := make([]vars, distinct)
	for i := range batch {
		reversed[i] = batch[distinct-1-i]
	}
	var wg sync.WaitGroup
	results := make([]ingestResult, callers)
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			events := batch
			if g%2 == 1 {
				events = reversed
			}
			results[g] = w.ingest(t, w.org.Token, events...)
		}()
	}
	wg.Wait()
	inserted := 0
	for _, r := range results {
		inserted += r.Inserted
		if r.Inserted+r.Duplicates != distinct {
			t.Errorf("a caller got %+v, which does not add up to %d", r, distinct)
		}
	}
	if inserted != distinct {
		t.Errorf("callers inserted %d in total, want %d", inserted, distinct)
	}
	if n := w.count(t, w.org.ID); n != distinct {
		t.Errorf("%d events stored, want %d", n, distinct)
	}
}

// TestEventPartitionsStayAhead runs the hourly partition task at a clock months ahead: it
// creates the partitions from that month on, once, so a month's events never land in the
// default partition.
func TestEventPartitionsStayAhead(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	future := time.Date(2031, 7, 15, 0, 0, 0, 0, time.UTC)
	s.Clock.Set(future)
	for _, want := range []int{4, 0} { // the second run finds them all
		got, err := s.Resolver.EnsureEventPartitions(t.Context())
		if err != nil || got != want {
			t.Fatalf("EnsureEventPartitions = %d, %v; want %d", got, err, want)
		}
	}
	var partitions string
	s.Get(t, &partitions, `SELECT string_agg(relname, ' ' ORDER BY relname) FROM pg_class WHERE relname LIKE 'events_p2031%' AND relkind = 'r'`)
	if want := "events_p203107 events_p203108 events_p203109 events_p203110"; partitions != want {
		t.Errorf("partitions = %v, want %v", partitions, want)
	}
}
