package resolvers_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// liveCostlyDoc selects a hundred orders with their lines for every event: 1 + 1 + 1 +
// 100 × (1 + 21) = 2,203 points per event, under the ceiling of one query (25,000) and over
// that of a subscription (1,000).
const liveCostlyDoc = `subscription { customerEvents { cursor customer { orders(limit: 100) { items { items { id } } } } } }`

// TestLiveSubscriptionCostIsCappedPerEvent checks that a subscription is priced as the
// selection it runs for every event, refused at subscribe time over maxLiveEventCost with
// the code of other cost refusals, and that a refusal holds none of the connection's or the
// credential's slots.
func TestLiveSubscriptionCostIsCappedPerEvent(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)

	cases := []struct {
		name, doc string
		cost      int
		refused   bool
	}{
		{"an event with its customer's email is cheap", liveCustomersDoc, 2, false},
		{"a checkout with its products, their prices and benefits fits: 1 + 1 + 10 × (1 + 20 + 20)",
			`subscription { checkoutEvents { cursor checkout { id products { id prices { id } benefits { id } } } } }`, 412, false},
		{"forty orders with their lines fit: 1 + 1 + 1 + 40 × 22",
			`subscription { customerEvents { cursor customer { orders(limit: 40) { items { items { id } } } } } }`, 883, false},
		{"fifty orders with their lines do not: 1 + 1 + 1 + 50 × 22",
			`subscription { customerEvents { cursor customer { orders(limit: 50) { items { items { id } } } } } }`, 1103, true},
		{"a hundred orders with their lines do not", liveCostlyDoc, 2203, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dialLive(t, s, org.Token)
			subscribe(t, c, "1", tc.doc, nil)
			if !tc.refused {
				wantQuiet(t, c, 300*time.Millisecond)
				return
			}
			errs := liveRefusal(t, c, "1")
			if errs[0].Extensions.Code != "COST_LIMIT_EXCEEDED" || !strings.Contains(errs[0].Message, strconv.Itoa(tc.cost)+" points") {
				t.Errorf("error %+v, want COST_LIMIT_EXCEEDED naming %d points", errs[0], tc.cost)
			}
		})
	}

	t.Run("refusals hold no slot, and a normal subscription still delivers", func(t *testing.T) {
		c := dialLive(t, s, org.Token)
		for i := range 200 { // over both the connection's 25 and the credential's 100
			subscribe(t, c, strconv.Itoa(i), liveCostlyDoc, nil)
			if errs := liveRefusal(t, c, strconv.Itoa(i)); errs[0].Extensions.Code != "COST_LIMIT_EXCEEDED" {
				t.Fatalf("subscription %d: error %+v, want COST_LIMIT_EXCEEDED", i, errs[0])
			}
		}
		subscribe(t, c, "normal", liveCustomersDoc, nil)
		time.Sleep(200 * time.Millisecond) // the subscription starts after what committed before it
		created := createCustomer(t, s, org.Token, vars{"email": "after-refusals@example.com"})
		if e := nextEvent(t, c, "customerEvents"); e.ObjectID != created.ID || e.Type != "customer.created" {
			t.Errorf("event %s %s, want customer.created %s", e.Type, e.ObjectID, created.ID)
		}
	})
}

// liveRefusal reads a subscription's refusal: one payload of errors without data, then its
// completion, with no event between.
func liveRefusal(t *testing.T, c *resolverstest.LiveClient, id string) []gqlError {
	t.Helper()
	m := nextMessage(t, c, 10*time.Second)
	var body struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if m.Type != "next" || m.ID != id || json.Unmarshal(m.Payload, &body) != nil || len(body.Errors) != 1 ||
		(len(body.Data) > 0 && string(body.Data) != "null") {
		t.Fatalf("got %s %s %s, want subscription %s refused before any event", m.Type, m.ID, m.Payload, id)
	}
	if m := nextMessage(t, c, 10*time.Second); m.Type != "complete" || m.ID != id {
		t.Fatalf("got %s %s %s after the refusal, want subscription %s complete", m.Type, m.ID, m.Payload, id)
	}
	return body.Errors
}

// TestLiveEventsWaitForTheCredentialsBudget checks that a credential's events spend its
// budget per second, each its subscription's price: over it, the stream waits and still
// delivers every event once, in commit order.
func TestLiveEventsWaitForTheCredentialsBudget(t *testing.T) {
	t.Parallel()
	// liveCustomersDoc costs 2: the bucket's 4 points pass two events at once, then one every
	// half second.
	s := resolverstest.NewLiveWithHub(t, []resolvers.LiveHubOption{resolvers.WithLiveEventBudget(4)})
	org := s.NewOrg(t, resolverstest.AllScopes)
	var want []uuid.UUID
	for i := range 6 {
		want = append(want, createCustomer(t, s, org.Token, vars{"email": fmt.Sprintf("paced-%d@example.com", i)}).ID)
	}
	c := dialLive(t, s, org.Token)
	subscribe(t, c, "1", liveCustomersDoc, vars{"after": "0"})
	var got []uuid.UUID
	var first time.Time
	for range want {
		got = append(got, nextEvent(t, c, "customerEvents").ObjectID)
		if first.IsZero() {
			first = time.Now()
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("events about %v, want %v", got, want)
	}
	// Four events wait for half a second of budget each, so the last comes 2 s after the
	// first on any machine, however slow; without the budget the replay takes milliseconds.
	if took := time.Since(first); took < 1500*time.Millisecond {
		t.Errorf("six events of a 2-point subscription arrived within %s on a budget of 4 points a second", took)
	}
	wantQuiet(t, c, 300*time.Millisecond)
}
