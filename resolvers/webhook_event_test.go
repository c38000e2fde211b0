package resolvers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// hookEvent is a webhook event a test stores directly, with its delivery attempts.
type hookEvent struct {
	endpoint  uuid.UUID
	typ       string
	succeeded *bool
	archived  bool
	attempts  []int // the HTTP status of each attempt, 0 when the endpoint did not answer
}

// hookWorld is an organization with two endpoints and five events, one a minute (newest
// last), and another organization with an endpoint and an event.
type hookWorld struct {
	s          *resolverstest.Server
	org, other resolverstest.Org
	a, b       uuid.UUID   // the organization's endpoints
	ids        []uuid.UUID // the organization's events, oldest first
	alienHook  uuid.UUID   // the other organization's endpoint
	alien      uuid.UUID   // the other organization's event
}

func newHookWorld(t *testing.T, s *resolverstest.Server) *hookWorld {
	t.Helper()
	w := &hookWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes), other: s.NewOrg(t, resolverstest.AllScopes)}
	w.a, w.b = insertEndpoint(t, s, w.org.ID), insertEndpoint(t, s, w.org.ID)
	w.alienHook = insertEndpoint(t, s, w.other.ID)
	yes, no := ptr(true), ptr(false)
	w.ids = insertHookEvents(t, s, w.org.ID,
		hookEvent{endpoint: w.a, typ: "order.updated", succeeded: yes, attempts: []int{200}},
		hookEvent{endpoint: w.a, typ: "order.created", succeeded: no, attempts: []int{500, 0, 502}},
		hookEvent{endpoint: w.b, typ: "order.updated"},
		hookEvent{endpoint: w.b, typ: "subscription.active", succeeded: yes, attempts: []int{503, 204}},
		hookEvent{endpoint: w.a, typ: "order.updated", succeeded: yes, archived: true},
	)
	w.alien = insertHookEvents(t, s, w.other.ID, hookEvent{endpoint: w.alienHook, typ: "order.updated", succeeded: no,
		attempts: []int{500}})[0]
	return w
}

// insertEndpoint stores an endpoint of org that no dispatcher will reach.
func insertEndpoint(tb testing.TB, s *resolverstest.Server, org uuid.UUID) uuid.UUID {
	tb.Helper()
	var id uuid.UUID
	s.Get(tb, &id, `INSERT INTO webhook_endpoints (organization_id, url, format, secret, events)
		VALUES ($1, 'https://hooks.example/in', 'raw', 'whsec_test', '{order.updated}') RETURNING id`, org)
	return id
}

// insertHookEvents stores events of org, a minute apart and ending an hour ago, each with its
// attempts logged a second apart, and returns their ids in order.
func insertHookEvents(tb testing.TB, s *resolverstest.Server, org uuid.UUID, events ...hookEvent) []uuid.UUID {
	tb.Helper()
	start := time.Now().UTC().Add(-time.Hour - time.Duration(len(events))*time.Minute).Truncate(time.Second)
	ids := make([]uuid.UUID, len(events))
	for i, e := range events {
		at := start.Add(time.Duration(i) * time.Minute)
		var last *int
		if n := len(e.attempts); n > 0 && e.attempts[n-1] != 0 {
			last = &e.attempts[n-1]
		}
		s.Get(tb, &ids[i], `INSERT INTO webhook_events (organization_id, webhook_endpoint_id, type, payload, created_at,
				succeeded, attempts, last_http_code, delivered_at, is_archived, next_attempt_at)
			VALUES ($1, $2, $3, CASE WHEN NOT $9 THEN format('{"type":%s,"n":%s}', to_json($3::text), $10::int) END,
				$4, $5, $6, $7, CASE WHEN $5 THEN $8::timestamptz END, $9, $4)
			RETURNING id`, org, e.endpoint, e.typ, at, e.succeeded, len(e.attempts), last,
			at.Add(time.Duration(len(e.attempts))*time.Second), e.archived, i)
		for n, code := range e.attempts {
			var httpCode *int
			if code != 0 {
				httpCode = &code
			}
			s.Exec(tb, `INSERT INTO webhook_deliveries (organization_id, webhook_endpoint_id, webhook_event_id,
					created_at, attempt, http_code, response, succeeded)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, org, e.endpoint, ids[i],
				at.Add(time.Duration(n+1)*time.Second), n+1, httpCode, fmt.Sprint("answer ", n+1), code >= 200 && code < 300)
		}
	}
	return ids
}

const hookEventFields = `id createdAt type endpointId payload succeeded skipped attempts lastHttpCode deliveredAt
	nextAttemptAt isArchived deliveries { id createdAt attempt httpCode response succeeded }`

type hookDelivery struct {
	ID        uuid.UUID
	CreatedAt string
	Attempt   int
	HTTPCode  *int `json:"httpCode"`
	Response  *string
	Succeeded bool
}

type hookEventOut struct {
	ID            uuid.UUID
	CreatedAt     string
	Type          string
	EndpointID    uuid.UUID `json:"endpointId"`
	Payload       *string
	Succeeded     *bool
	Skipped       bool
	Attempts      int
	LastHTTPCode  *int `json:"lastHttpCode"`
	DeliveredAt   *string
	NextAttemptAt string
	IsArchived    bool
	Deliveries    []hookDelivery
}

type hookEventPage struct {
	Items      []hookEventOut
	Pagination struct{ TotalCount, MaxPage int }
}

func hookEventIDs(items []hookEventOut) []uuid.UUID {
	out := []uuid.UUID{}
	for _, e := range items {
		out = append(out, e.ID)
	}
	return out
}

const webhookEventsDoc = `query($endpointId: UUID, $type: [String!], $succeeded: Boolean, $page: Int, $limit: Int) {
	webhookEvents(endpointId: $endpointId, type: $type, succeeded: $succeeded, page: $page, limit: $limit) {
		items { ` + hookEventFields + ` } pagination { totalCount maxPage } } }`

func listHookEvents(tb testing.TB, s *resolverstest.Server, token string, args vars) hookEventPage {
	tb.Helper()
	var out struct{ WebhookEvents hookEventPage }
	s.Query(tb, token, webhookEventsDoc, args, &out)
	return out.WebhookEvents
}

func TestWebhookEventsListNewestFirst(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, resolverstest.New(t))
	id := w.ids
	cases := []struct {
		name        string
		args        vars
		want        []uuid.UUID
		wantTotal   int
		wantMaxPage int
	}{
		{"without filters", vars{}, []uuid.UUID{id[4], id[3], id[2], id[1], id[0]}, 5, 1},
		{"by endpoint", vars{"endpointId": w.a}, []uuid.UUID{id[4], id[1], id[0]}, 3, 1},
		{"by type", vars{"type": []string{"order.updated"}}, []uuid.UUID{id[4], id[2], id[0]}, 3, 1},
		{"by types", vars{"type": []string{"order.created", "subscription.active"}}, []uuid.UUID{id[3], id[1]}, 2, 1},
		{"delivered", vars{"succeeded": true}, []uuid.UUID{id[4], id[3], id[0]}, 3, 1},
		{"failed for good", vars{"succeeded": false}, []uuid.UUID{id[1]}, 1, 1},
		{"delivered to one endpoint", vars{"endpointId": w.b, "succeeded": true}, []uuid.UUID{id[3]}, 1, 1},
		{"second page", vars{"page": 2, "limit": 2}, []uuid.UUID{id[2], id[1]}, 5, 3},
		{"another organization's endpoint", vars{"endpointId": w.alienHook}, []uuid.UUID{}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := listHookEvents(t, w.s, w.org.Token, c.args)
			if diff := cmp.Diff(c.want, hookEventIDs(got.Items)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if got.Pagination.TotalCount != c.wantTotal || got.Pagination.MaxPage != c.wantMaxPage {
				t.Errorf("pagination = %+v, want %d events on %d pages", got.Pagination, c.wantTotal, c.wantMaxPage)
			}
		})
	}
	t.Run("each event carries its own deliveries, oldest first", func(t *testing.T) {
		want := map[uuid.UUID][]int{id[4]: {}, id[3]: {1, 2}, id[2]: {}, id[1]: {1, 2, 3}, id[0]: {1}}
		for _, e := range listHookEvents(t, w.s, w.org.Token, vars{}).Items {
			got := []int{}
			for _, d := range e.Deliveries {
				got = append(got, d.Attempt)
			}
			if !cmp.Equal(got, want[e.ID]) {
				t.Errorf("event %s attempts %v, want %v", e.ID, got, want[e.ID])
			}
		}
	})
}

func TestWebhookEventShowsItsDeliveryHistory(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, resolverstest.New(t))
	get := func(id uuid.UUID) hookEventOut {
		var out struct{ WebhookEvent hookEventOut }
		w.s.Query(t, w.org.Token, `query($id: UUID!) { webhookEvent(id: $id) { `+hookEventFields+` } }`, vars{"id": id}, &out)
		return out.WebhookEvent
	}
	failed := get(w.ids[1])
	if failed.Type != "order.created" || failed.EndpointID != w.a || failed.Succeeded == nil || *failed.Succeeded ||
		failed.Attempts != 3 || failed.LastHTTPCode == nil || *failed.LastHTTPCode != 502 || failed.DeliveredAt != nil ||
		failed.Payload == nil || *failed.Payload != `{"type":"order.created","n":1}` || failed.IsArchived {
		t.Errorf("failed event = %+v", failed)
	}
	codes := []*int{}
	for _, d := range failed.Deliveries {
		codes = append(codes, d.HTTPCode)
		if d.Succeeded || d.Response == nil || *d.Response != fmt.Sprint("answer ", d.Attempt) {
			t.Errorf("delivery = %+v, want a failed attempt with its answer", d)
		}
	}
	if diff := cmp.Diff([]*int{ptr(500), nil, ptr(502)}, codes); diff != "" {
		t.Errorf("delivery codes (-want +got):\n%s", diff)
	}
	pending := get(w.ids[2])
	if pending.Succeeded != nil || pending.Attempts != 0 || len(pending.Deliveries) != 0 {
		t.Errorf("pending event = %+v, want succeeded null and no attempts", pending)
	}
	archived := get(w.ids[4])
	if archived.Payload != nil || !archived.IsArchived || archived.Succeeded == nil || !*archived.Succeeded {
		t.Errorf("archived event = %+v, want a delivered event without its payload", archived)
	}
}

func TestWebhookEventsOfOtherOrganizationsAreNotFound(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, resolverstest.New(t))
	for _, c := range []struct{ name, doc string }{
		{"reading", `query($id: UUID!) { webhookEvent(id: $id) { id } }`},
		{"redelivering", `mutation($id: UUID!) { redeliverWebhookEvent(id: $id) { id } }`},
	} {
		t.Run(c.name+" another organization's event", func(t *testing.T) {
			e := w.s.QueryError(t, w.org.Token, c.doc, vars{"id": w.alien})
			if e.Extensions.Code != "NOT_FOUND" || e.Extensions.Reason != "ResourceNotFound" {
				t.Errorf("error = %+v, want NOT_FOUND ResourceNotFound", e.Extensions)
			}
		})
	}
	var succeeded *bool
	w.s.Get(t, &succeeded, `SELECT succeeded FROM webhook_events WHERE id = $1`, w.alien)
	if succeeded == nil || *succeeded {
		t.Errorf("another organization's failed event is now succeeded = %v", succeeded)
	}
	if got := hookEventIDs(listHookEvents(t, w.s, w.other.Token, vars{}).Items); !cmp.Equal(got, []uuid.UUID{w.alien}) {
		t.Errorf("the other organization lists %v, want only its event %v", got, w.alien)
	}
}

func TestRedeliverWebhookEventRefusals(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, resolverstest.New(t))
	sending := w.ids[3]
	w.s.Exec(t, `UPDATE webhook_events SET claimed_until = now() + interval '1 minute' WHERE id = $1`, sending)
	cases := []struct {
		name       string
		id         uuid.UUID
		wantCode   string
		wantReason string
	}{
		{"an archived event has nothing left to send", w.ids[4], "BAD_USER_INPUT", "BadRequest"},
		{"an event being sent right now", sending, "BAD_USER_INPUT", "BadRequest"},
		{"a missing event", uuid.New(), "NOT_FOUND", "ResourceNotFound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := w.s.QueryError(t, w.org.Token, `mutation($id: UUID!) { redeliverWebhookEvent(id: $id) { id } }`, vars{"id": c.id})
			if e.Extensions.Code != c.wantCode || e.Extensions.Reason != c.wantReason {
				t.Errorf("error = %+v, want %s (%s)", e.Extensions, c.wantCode, c.wantReason)
			}
		})
	}
}

// TestRedeliverWebhookEventSendsItAgain: a failed event, redelivered, is reset and sent
// right away with the same webhook-id and body by a dispatcher that would otherwise not
// look for an hour, and its history keeps the earlier attempts.
func TestRedeliverWebhookEventSendsItAgain(t *testing.T) {
	t.Parallel()
	// The endpoint holds its answer until the mutation's result has been read: the woken
	// dispatcher may send at once, and recording that attempt first would change the
	// deliveries the result shows.
	answered := make(chan struct{})
	dw, rc := newDeliveryWorld(t, func(_ int, w http.ResponseWriter) {
		<-answered
		w.WriteHeader(http.StatusOK)
	})
	dw.s.Deps.Webhooks.Sender.Timeout = time.Minute // however long the mutation takes here
	var once sync.Once
	answer := func() { once.Do(func() { close(answered) }) }
	id := insertHookEvents(t, dw.s, dw.org.ID,
		hookEvent{endpoint: dw.endpoint, typ: "order.updated", succeeded: ptr(false), attempts: []int{500, 500}})[0]
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { dw.s.Resolver.DispatchWebhooks(ctx, 2, time.Hour); close(done) }()
	defer func() { cancel(); <-done }()
	defer answer() // before the dispatcher stops: it finishes the attempt it holds

	var out struct{ RedeliverWebhookEvent hookEventOut }
	dw.s.Query(t, dw.org.Token, `mutation($id: UUID!) { redeliverWebhookEvent(id: $id) { `+hookEventFields+` } }`,
		vars{"id": id}, &out)
	if e := out.RedeliverWebhookEvent; e.ID != id || e.Succeeded != nil || e.Attempts != 0 || len(e.Deliveries) != 2 {
		t.Errorf("redelivered event = %+v, want it pending with no attempts yet and its history kept", e)
	}
	answer()
	select {
	case <-rc.got:
	case <-time.After(30 * time.Second):
		t.Fatal("the redelivered event was not sent")
	}
	ids, docs := rc.received()
	if len(ids) != 1 || ids[0] != id.String() || docs[0] != `{"type":"order.updated","n":0}` {
		t.Errorf("received %v %v, want event %s with its stored payload", ids, docs, id)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var q struct{ WebhookEvent hookEventOut }
		dw.s.Query(t, dw.org.Token, `query($id: UUID!) { webhookEvent(id: $id) { `+hookEventFields+` } }`, vars{"id": id}, &q)
		e := q.WebhookEvent
		if e.Succeeded != nil {
			if !*e.Succeeded || len(e.Deliveries) != 3 || !e.Deliveries[2].Succeeded || e.Deliveries[2].Attempt != 1 {
				t.Errorf("event after redelivery = %+v, want delivered with a third, successful attempt", e)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redelivered event was never recorded: %+v", e)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWebhookEventsNeedWebhooksScopes(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, resolverstest.New(t))
	reader := w.s.NewToken(t, w.org.ID, "webhooks:read")
	orders := w.s.NewToken(t, w.org.ID, "orders:read orders:write")
	redeliver := fmt.Sprintf(`mutation { redeliverWebhookEvent(id: %q) { id } }`, w.ids[1])
	cases := []struct {
		name, token, doc string
	}{
		{"listing without a webhooks scope", orders, `{ webhookEvents { items { id } } }`},
		{"reading without a webhooks scope", orders, fmt.Sprintf(`{ webhookEvent(id: %q) { id } }`, w.ids[0])},
		{"redelivering with webhooks:read", reader, redeliver},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if e := w.s.QueryError(t, c.token, c.doc, nil); e.Extensions.Code != "FORBIDDEN" || e.Extensions.Reason != "insufficient_scope" {
				t.Errorf("code = %q, want insufficient_scope", e.Extensions.Code)
			}
		})
	}
	var attempts int
	w.s.Get(t, &attempts, `SELECT attempts FROM webhook_events WHERE id = $1`, w.ids[1])
	if attempts != 3 {
		t.Errorf("a refused redelivery reset the event to %d attempts", attempts)
	}
	if got := listHookEvents(t, w.s, reader, vars{}); got.Pagination.TotalCount != 5 {
		t.Errorf("webhooks:read lists %d events, want 5", got.Pagination.TotalCount)
	}
}

// TestWebhookEventDeliveriesCostOneStatement pins a page's cost: the deliveries of all its
// events are one statement more than the page alone, whatever the page size. Not parallel,
// like the other statement counts.
func TestWebhookEventDeliveriesCostOneStatement(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	endpoint := insertEndpoint(t, s, org.ID)
	events := make([]hookEvent, 30)
	for i := range events {
		events[i] = hookEvent{endpoint: endpoint, typ: "order.updated", succeeded: ptr(true), attempts: []int{500, 200}}
	}
	insertHookEvents(t, s, org.ID, events...)
	cost := func(limit int, fields string) int64 {
		counter.Reset()
		var out struct{ WebhookEvents hookEventPage }
		s.Query(t, org.Token, `query($limit: Int) { webhookEvents(limit: $limit) { items { `+fields+` } } }`,
			vars{"limit": limit}, &out)
		for _, e := range out.WebhookEvents.Items {
			if strings.Contains(fields, "deliveries") && len(e.Deliveries) != 2 {
				t.Fatalf("event %s has %d deliveries, want 2", e.ID, len(e.Deliveries))
			}
		}
		return counter.Snapshot().Statements()
	}
	cost(1, "id") // the first request of a token may cost more than the others
	alone, small, large := cost(2, "id"), cost(2, hookEventFields), cost(30, hookEventFields)
	if small != alone+1 || large != alone+1 {
		t.Errorf("a page alone costs %d statements, with deliveries %d for 2 events and %d for 30; want %d",
			alone, small, large, alone+1)
	}
}
