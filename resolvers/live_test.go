package resolvers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// liveEvent is the part of a LiveEvent the tests select.
type liveEvent struct {
	Cursor   string    `json:"cursor"`
	Type     string    `json:"type"`
	ObjectID uuid.UUID `json:"objectId"`
	Customer *struct {
		Email string `json:"email"`
	} `json:"customer"`
}

const liveCustomersDoc = `subscription($after: String, $ids: [UUID!], $org: UUID) {
	customerEvents(after: $after, customerIds: $ids, organizationId: $org) { cursor type objectId customer { email } } }`

// dialLive opens a connection to s authenticated by token in connection_init.
func dialLive(t *testing.T, s *resolverstest.Server, token string) *resolverstest.LiveClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := resolverstest.DialLive(ctx, resolverstest.WebsocketURL(s.URL), nil, map[string]any{"Authorization": "Bearer " + token})
	if err != nil {
		t.Fatalf("dialing: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// subscribe starts doc under id and fails the test if sending fails.
func subscribe(t *testing.T, c *resolverstest.LiveClient, id, doc string, v vars) {
	t.Helper()
	if err := c.Subscribe(t.Context(), id, doc, v); err != nil {
		t.Fatalf("subscribing: %v", err)
	}
}

// nextMessage reads the next message within wait.
func nextMessage(t *testing.T, c *resolverstest.LiveClient, wait time.Duration) resolverstest.LiveMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	m, err := c.Next(ctx)
	if err != nil {
		t.Fatalf("waiting for a message: %v", err)
	}
	return m
}

// nextEvent reads the next message and decodes it as the event of field, failing on anything
// else.
func nextEvent(t *testing.T, c *resolverstest.LiveClient, field string) liveEvent {
	t.Helper()
	m := nextMessage(t, c, 15*time.Second)
	if m.Type != "next" {
		t.Fatalf("got %s %s, want an event", m.Type, m.Payload)
	}
	var body struct {
		Data   map[string]*liveEvent `json:"data"`
		Errors []gqlError            `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &body); err != nil || len(body.Errors) > 0 || body.Data[field] == nil {
		t.Fatalf("event %s: %v %+v", m.Payload, err, body.Errors)
	}
	return *body.Data[field]
}

// wantQuiet fails if a message arrives within wait.
func wantQuiet(t *testing.T, c *resolverstest.LiveClient, wait time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if m, err := c.Next(ctx); err == nil {
		t.Fatalf("got %s %s, want nothing", m.Type, m.Payload)
	}
}

// liveErrors reads the next message as a subscription's error.
func liveErrors(t *testing.T, c *resolverstest.LiveClient, wait time.Duration) []gqlError {
	t.Helper()
	m := nextMessage(t, c, wait)
	var errs []gqlError
	switch m.Type {
	case "error":
		_ = json.Unmarshal(m.Payload, &errs)
	case "next":
		var body struct{ Errors []gqlError }
		_ = json.Unmarshal(m.Payload, &body)
		errs = body.Errors
	}
	if len(errs) == 0 {
		t.Fatalf("got %s %s, want an error", m.Type, m.Payload)
	}
	return errs
}

func updateEmail(t *testing.T, s *resolverstest.Server, token string, id uuid.UUID, email string) {
	t.Helper()
	s.Query(t, token, `mutation($input: CustomerUpdateInput!) { updateCustomer(input: $input) { id } }`,
		vars{"input": vars{"id": id, "email": email}}, nil)
}

func TestLiveDeliversCommittedEventsInOrderAndResumesFromACursor(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	c := dialLive(t, s, org.Token)
	subscribe(t, c, "1", liveCustomersDoc, nil)
	time.Sleep(200 * time.Millisecond) // the subscription starts after what committed before it
	a := createCustomer(t, s, org.Token, vars{"email": "a@example.com"})
	updateEmail(t, s, org.Token, a.ID, "a2@example.com")
	b := createCustomer(t, s, org.Token, vars{"email": "b@example.com"})

	want := []struct {
		typ string
		id  uuid.UUID
	}{{"customer.created", a.ID}, {"customer.updated", a.ID}, {"customer.created", b.ID}}
	var got []liveEvent
	for range want {
		got = append(got, nextEvent(t, c, "customerEvents"))
	}
	for i, w := range want {
		if got[i].Type != w.typ || got[i].ObjectID != w.id {
			t.Errorf("event %d = %s %s, want %s %s", i, got[i].Type, got[i].ObjectID, w.typ, w.id)
		}
		if i > 0 && cursorOf(t, got[i]) <= cursorOf(t, got[i-1]) {
			t.Errorf("cursors %s then %s, want commit order", got[i-1].Cursor, got[i].Cursor)
		}
	}
	if got[1].Customer == nil || got[1].Customer.Email != "a2@example.com" {
		t.Errorf("the updated customer: got %+v, want a2@example.com", got[1].Customer)
	}

	// A client that lost its connection after the first event resumes from its cursor.
	c.Close()
	later := createCustomer(t, s, org.Token, vars{"email": "c@example.com"})
	again := dialLive(t, s, org.Token)
	subscribe(t, again, "1", liveCustomersDoc, vars{"after": got[0].Cursor})
	for _, w := range []uuid.UUID{a.ID, b.ID, later.ID} {
		if e := nextEvent(t, again, "customerEvents"); e.ObjectID != w {
			t.Errorf("resumed stream gave %s %s, want %s", e.Type, e.ObjectID, w)
		}
	}
	wantQuiet(t, again, 300*time.Millisecond)
}

func cursorOf(t *testing.T, e liveEvent) int64 {
	t.Helper()
	n, err := strconv.ParseInt(e.Cursor, 10, 64)
	if err != nil {
		t.Fatalf("cursor %q: %v", e.Cursor, err)
	}
	return n
}

func TestLiveRefusals(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	other := s.NewOrg(t, resolverstest.AllScopes)
	ordersOnly := s.NewToken(t, org.ID, "orders:read")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	url := resolverstest.WebsocketURL(s.URL)

	t.Run("no credential", func(t *testing.T) {
		if _, err := resolverstest.DialLive(ctx, url, nil, nil); err == nil {
			t.Fatal("a connection without a credential was accepted")
		}
	})
	t.Run("invalid token", func(t *testing.T) {
		if _, err := resolverstest.DialLive(ctx, url, nil, map[string]any{"Authorization": "Bearer till_oat_nope"}); err == nil {
			t.Fatal("a connection with an invalid token was accepted")
		}
	})
	t.Run("header token works", func(t *testing.T) {
		c, err := resolverstest.DialLive(ctx, url, http.Header{"Authorization": {"Bearer " + org.Token}}, nil)
		if err != nil {
			t.Fatalf("a token in the upgrade request was refused: %v", err)
		}
		c.Close()
	})
	t.Run("foreign origin", func(t *testing.T) {
		if _, err := resolverstest.DialLive(ctx, url, http.Header{"Origin": {"https://evil.example"}},
			map[string]any{"Authorization": "Bearer " + org.Token}); err == nil || !strings.Contains(err.Error(), "403") {
			t.Fatalf("a page of another origin opened a websocket: %v", err)
		}
	})
	cases := []struct {
		name, token, doc string
		v                vars
		code             string
	}{
		{"missing scope", ordersOnly, liveCustomersDoc, nil, "FORBIDDEN"},
		{"another organization", org.Token, liveCustomersDoc, vars{"org": other.ID}, "BAD_USER_INPUT"},
		{"cursor past the last event", org.Token, liveCustomersDoc, vars{"after": "99"}, "BAD_USER_INPUT"},
		{"cursor not a number", org.Token, liveCustomersDoc, vars{"after": "x"}, "BAD_USER_INPUT"},
		{"portal field for an organization", org.Token, `subscription { portalEvents { cursor } }`, nil, "FORBIDDEN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialLive(t, s, tc.token)
			subscribe(t, c, "1", tc.doc, tc.v)
			if errs := liveErrors(t, c, 10*time.Second); errs[0].Extensions.Code != tc.code {
				t.Errorf("error %+v, want %s", errs[0], tc.code)
			}
		})
	}
	t.Run("another organization's objects are not followed", func(t *testing.T) {
		c := dialLive(t, s, org.Token)
		theirs := createCustomer(t, s, other.Token, vars{"email": "theirs@example.com"})
		subscribe(t, c, "1", liveCustomersDoc, vars{"ids": []uuid.UUID{theirs.ID}})
		time.Sleep(200 * time.Millisecond)
		updateEmail(t, s, other.Token, theirs.ID, "theirs2@example.com")
		wantQuiet(t, c, time.Second)
	})
	t.Run("too many on one connection", func(t *testing.T) {
		c := dialLive(t, s, org.Token)
		for i := range 25 {
			subscribe(t, c, strconv.Itoa(i), liveCustomersDoc, nil)
		}
		subscribe(t, c, "26", liveCustomersDoc, nil)
		if errs := liveErrors(t, c, 10*time.Second); errs[0].Extensions.Code != "RATE_LIMITED" {
			t.Errorf("error %+v, want RATE_LIMITED", errs[0])
		}
	})
}

func TestLiveEndsWhenTheTokenIsRevoked(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	doomed := s.NewToken(t, org.ID, "customers:read")
	c := dialLive(t, s, doomed)
	subscribe(t, c, "1", liveCustomersDoc, nil)
	time.Sleep(200 * time.Millisecond)
	createCustomer(t, s, org.Token, vars{"email": "seen@example.com"})
	nextEvent(t, c, "customerEvents")

	s.Exec(t, `UPDATE organization_access_tokens SET deleted_at = now() WHERE organization_id = $1 AND scope = 'customers:read'`, org.ID)
	createCustomer(t, s, org.Token, vars{"email": "unseen@example.com"})
	if errs := liveErrors(t, c, 10*time.Second); errs[0].Extensions.Code != "UNAUTHENTICATED" {
		t.Errorf("error %+v, want UNAUTHENTICATED", errs[0])
	}
	wantQuiet(t, c, 500*time.Millisecond) // the stream is over: nothing follows its error
}

func TestLivePortalFollowsItsOwnCustomerOnly(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	mine := createCustomer(t, s, org.Token, vars{"email": "mine@example.com"})
	theirs := createCustomer(t, s, org.Token, vars{"email": "theirs@example.com"})
	c := dialLive(t, s, s.NewCustomerSession(t, org.ID, mine.ID))
	subscribe(t, c, "1", `subscription { portalEvents { cursor type objectId customer { email } } }`, nil)
	time.Sleep(200 * time.Millisecond)
	updateEmail(t, s, org.Token, theirs.ID, "theirs2@example.com")
	updateEmail(t, s, org.Token, mine.ID, "mine2@example.com")
	e := nextEvent(t, c, "portalEvents")
	if e.ObjectID != mine.ID || e.Customer == nil || e.Customer.Email != "mine2@example.com" {
		t.Errorf("portal event %+v, want the session's own customer", e)
	}
	wantQuiet(t, c, 500*time.Millisecond)
}

// A user whose role no longer grants the field's permission loses the stream at the next
// recheck, even with no event to deliver.
func TestLiveEndsWhenTheUsersRoleIsLowered(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	u := s.NewUser(t, resolverstest.UserSpec{Scope: "webhooks:read", Orgs: []uuid.UUID{org.ID}, Role: "admin"})
	c := dialLive(t, s, u.Token)
	subscribe(t, c, "1", `subscription { domainEvents(types: ["customer.created"]) { cursor type } }`, nil)
	time.Sleep(200 * time.Millisecond)
	createCustomer(t, s, org.Token, vars{"email": "seen@example.com"})
	nextEvent(t, c, "domainEvents")
	s.Exec(t, `UPDATE user_organizations SET role = 'member' WHERE user_id = $1`, u.ID)
	if errs := liveErrors(t, c, 10*time.Second); errs[0].Extensions.Code != "FORBIDDEN" {
		t.Errorf("error %+v, want FORBIDDEN", errs[0])
	}
}

// A signed-in browser subscribes with its session cookie from Till's own origin.
func TestLiveAcceptsABrowserSessionFromItsOwnOrigin(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	u := s.NewUser(t, resolverstest.UserSpec{Scope: "all", Orgs: []uuid.UUID{org.ID}})
	session, _ := s.NewUserSession(t, u.ID)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	header := http.Header{"Cookie": {"till_session=" + session}, "Origin": {strings.TrimSuffix(s.URL, "/graphql")}}
	c, err := resolverstest.DialLive(ctx, resolverstest.WebsocketURL(s.URL), header, nil)
	if err != nil {
		t.Fatalf("a browser session from Till's origin was refused: %v", err)
	}
	t.Cleanup(c.Close)
	subscribe(t, c, "1", liveCustomersDoc, nil)
	time.Sleep(200 * time.Millisecond)
	a := createCustomer(t, s, org.Token, vars{"email": "browser@example.com"})
	if e := nextEvent(t, c, "customerEvents"); e.ObjectID != a.ID {
		t.Errorf("got %+v, want the new customer", e)
	}
	header.Set("Origin", "https://evil.example")
	if _, err := resolverstest.DialLive(ctx, resolverstest.WebsocketURL(s.URL), header, nil); err == nil {
		t.Error("another origin rode the session cookie")
	}
	header.Del("Origin")
	if _, err := resolverstest.DialLive(ctx, resolverstest.WebsocketURL(s.URL), header, nil); err == nil {
		t.Error("a handshake naming no origin rode the session cookie")
	}
}

// Each transport serves its own kind of operation.
func TestLiveTransportsServeTheirOwnOperations(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	if e := s.QueryError(t, org.Token, liveCustomersDoc, nil); e.Extensions.Code != "BAD_USER_INPUT" {
		t.Errorf("a subscription over HTTP: %+v, want BAD_USER_INPUT", e)
	}
	c := dialLive(t, s, org.Token)
	subscribe(t, c, "1", `mutation { createCustomer(input: {email: "ws@example.com"}) { id } }`, nil)
	if errs := liveErrors(t, c, 10*time.Second); errs[0].Extensions.Code != "BAD_USER_INPUT" {
		t.Errorf("a mutation over the websocket: %+v, want BAD_USER_INPUT", errs[0])
	}
	var n int
	s.Get(t, &n, `SELECT count(*) FROM customers WHERE email = 'ws@example.com'`)
	if n != 0 {
		t.Error("the websocket ran a mutation")
	}
}

// Each event is read with loaders of its own (made only if the event's selection needs
// one): a relation that changed between two events is read anew, not from the first event's.
func TestLiveReadsEachEventsRelationsAnew(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	buyer := createCustomer(t, s, org.Token, vars{"email": "before@example.com"})
	book := createProduct(t, s, org.Token, vars{"name": "Book", "prices": []vars{{"amountType": "fixed", "priceAmount": 500}}})
	order := s.NewPaidOrder(t, org.ID, buyer.ID, book.ID, nil)
	c := dialLive(t, s, org.Token)
	subscribe(t, c, "1", `subscription { orderEvents { order { customer { email } } } }`, nil)
	time.Sleep(200 * time.Millisecond) // the subscription starts after what committed before it

	for _, email := range []string{"before@example.com", "after@example.com"} {
		if email != "before@example.com" {
			updateEmail(t, s, org.Token, buyer.ID, email)
		}
		if _, err := storage.InsertDomainEvent(t.Context(), s.DB, org.ID, "order.updated", order); err != nil {
			t.Fatal(err)
		}
		m := nextMessage(t, c, 15*time.Second)
		var body struct {
			Data struct {
				OrderEvents struct {
					Order struct{ Customer struct{ Email string } }
				}
			}
		}
		if err := json.Unmarshal(m.Payload, &body); err != nil || body.Data.OrderEvents.Order.Customer.Email != email {
			t.Errorf("the order's customer: %s %s, want %s", m.Type, m.Payload, email)
		}
	}
}

// A client failing over to a process that has not yet heard of the last commit resumes there
// from the cursor the other process gave it: the database, not the process's feed, says
// which cursors name an event.
func TestLiveResumesOnAProcessThatHasNotHeardOfTheLastCommit(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	// A hub nobody wakes: this process hears of no commit.
	s := resolverstest.NewWithDB(t, db, func(d *resolvers.Deps) { d.Live = resolvers.NewLiveHub(db, nil) })
	org := s.NewOrg(t, resolverstest.AllScopes)
	first := dialLive(t, s, org.Token)
	subscribe(t, first, "1", liveCustomersDoc, nil) // the feed starts here
	time.Sleep(200 * time.Millisecond)
	createCustomer(t, s, org.Token, vars{"email": "elsewhere@example.com"})
	var last int64
	s.Get(t, &last, `SELECT event_last FROM order_numbers WHERE organization_id = $1`, org.ID)

	c := dialLive(t, s, org.Token)
	subscribe(t, c, "1", liveCustomersDoc, vars{"after": strconv.FormatInt(last, 10)})
	wantQuiet(t, c, 500*time.Millisecond) // accepted, waiting for what follows
	subscribe(t, c, "2", liveCustomersDoc, vars{"after": strconv.FormatInt(last+1, 10)})
	if errs := liveErrors(t, c, 10*time.Second); errs[0].Extensions.Code != "BAD_USER_INPUT" {
		t.Errorf("a cursor past the last commit: %+v, want BAD_USER_INPUT", errs[0])
	}
}
