package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
)

// disputesFixture is an organization with one customer and a read-only disputes token, and
// another organization with all scopes.
type disputesFixture struct {
	s        *v1
	org      org
	other    org
	read     string
	customer resolverstest.Customer
	product  resolverstest.Product
}

func newDisputesFixture(t *testing.T) disputesFixture {
	t.Helper()
	s := newV1(t)
	f := disputesFixture{s: s, org: s.NewOrg(t, resolverstest.AllScopes), other: s.NewOrg(t, resolverstest.AllScopes)}
	f.read = s.NewToken(t, f.org.ID, "disputes:read")
	f.customer = s.NewCustomer(t, f.org.ID, "ext-1")
	f.product = s.NewProduct(t, f.org.ID, "Ebook")
	return f
}

// dispute stores a dispute of a new charged order as the processor would have opened it.
func (f disputesFixture) dispute(t *testing.T, spec resolverstest.ChargedOrder, status string, amount int64) (dispute, order uuid.UUID) {
	t.Helper()
	order = f.s.NewChargedOrder(t, f.org.ID, f.customer.ID, spec)
	charge, err := storage.SucceededCharge(context.Background(), f.s.DB, order)
	if err != nil {
		t.Fatal(err)
	}
	f.s.Get(t, &dispute, `INSERT INTO disputes (organization_id, order_id, payment_id, customer_id, status, amount, currency,
		reason, processor, processor_id) VALUES ($1, $2, $3, $4, $5, $6, 'usd', 'fraudulent', $7, $8) RETURNING id`,
		f.org.ID, order, charge.ID, f.customer.ID, status, amount, charge.Processor, "dp_"+uuid.NewString())
	return dispute, order
}

func TestDisputeGetAndAcceptServeTheContract(t *testing.T) {
	t.Parallel()
	f := newDisputesFixture(t)
	open, order := f.dispute(t, resolverstest.ChargedOrder{ProductID: &f.product.ID, NetAmount: 1000}, "needs_response", 1000)
	reviewed, _ := f.dispute(t, resolverstest.ChargedOrder{NetAmount: 500}, "under_review", 500)
	missing := uuid.New()
	get := func(token string, id uuid.UUID) call {
		return call{target: "/v1/disputes/" + id.String(), token: token}
	}
	accept := func(token string, id uuid.UUID) call {
		return call{method: http.MethodPost, target: "/v1/disputes/" + id.String() + "/accept", token: token}
	}
	notOpen := func(id uuid.UUID) want {
		return want{status: 409, body: fmt.Sprintf(`{"error":"DisputeNotOpenError","detail":"Dispute %s is not awaiting a response."}`, id)}
	}
	notFound := want{status: 404, error: "ResourceNotFound"}
	tests := []struct {
		name string
		call call
		want want
	}{
		{"a dispute is read with its customer", get(f.read, open), want{status: 200, has: []string{`"status":"needs_response"`,
			`"resolved":false`, `"closed":false`, `"amount":1000`, `"tax_amount":0`, `"currency":"usd"`, `"reason":"fraudulent"`,
			`"evidence_due_by":null`, `"past_due":false`, `"order_id":"` + order.String() + `"`, `"case_id":null`,
			`"customer":{"id":"` + f.customer.ID.String() + `"`}}},
		{"an unknown dispute is not found", get(f.read, missing), notFound},
		{"another organization's dispute is not found", get(f.other.Token, open), notFound},
		{"a malformed id is refused", call{target: "/v1/disputes/nope", token: f.read},
			validation(item{Type: "uuid_parsing", Loc: []any{"path", "id"}})},
		{"an anonymous caller may not read", get("", open), unauthorized()},
		{"a read token may not accept", accept(f.read, open), insufficientScope("disputes:write")},
		{"another organization may not accept", accept(f.other.Token, open), notFound},
		{"a dispute under review cannot be accepted", accept(f.org.Token, reviewed), notOpen(reviewed)},
		{"a dispute that needs a response is accepted and lost", accept(f.org.Token, open),
			want{status: 200, has: []string{`"status":"lost"`, `"resolved":true`, `"closed":true`, `"reason":"fraudulent"`}}},
		{"an accepted dispute cannot be accepted again", accept(f.org.Token, open), notOpen(open)},
		{"an unknown dispute cannot be accepted", accept(f.org.Token, missing), notFound},
	}
	for _, tt := range tests { // in order: the acceptance cases build on each other
		t.Run(tt.name, func(t *testing.T) { tt.want.check(t, f.s.do(t, tt.call)) })
	}
}

// TestAcceptedDisputeRevokesWhatWasDisputed: losing a dispute ends the subscription its
// order billed, as upstream revokes it.
func TestAcceptedDisputeRevokesWhatWasDisputed(t *testing.T) {
	t.Parallel()
	f := newDisputesFixture(t)
	sub := f.s.NewSubscription(t, f.org.ID, f.customer.ID, f.product.ID, nil)
	d, _ := f.dispute(t, resolverstest.ChargedOrder{SubscriptionID: &sub, NetAmount: 500}, "needs_response", 500)
	rec := f.s.do(t, call{method: http.MethodPost, target: "/v1/disputes/" + d.String() + "/accept", token: f.org.Token})
	want{status: 200}.check(t, rec)
	var status string
	f.s.Get(t, &status, `SELECT status FROM subscriptions WHERE id = $1`, sub)
	if status != "canceled" {
		t.Errorf("subscription %s after its dispute was lost, want canceled", status)
	}
}

func TestDisputeListServesTheContract(t *testing.T) {
	t.Parallel()
	f := newDisputesFixture(t)
	small, first := f.dispute(t, resolverstest.ChargedOrder{NetAmount: 100}, "needs_response", 100)
	large, _ := f.dispute(t, resolverstest.ChargedOrder{NetAmount: 900}, "won", 900)
	middle, _ := f.dispute(t, resolverstest.ChargedOrder{NetAmount: 500}, "under_review", 500)
	list := func(query string) call { return call{target: "/v1/disputes/" + query, token: f.read} }
	tests := []struct {
		name  string
		call  call
		want  []uuid.UUID
		total int
	}{
		{"newest first by default", list(""), []uuid.UUID{middle, large, small}, 3},
		{"sorted by amount", list("?sorting=amount"), []uuid.UUID{small, middle, large}, 3},
		{"sorted by amount, largest first", list("?sorting=-amount&limit=1"), []uuid.UUID{large}, 3},
		{"by order", list("?order_id=" + first.String()), []uuid.UUID{small}, 1},
		{"by status", list("?status=won&status=under_review"), []uuid.UUID{middle, large}, 2},
		{"by organization", list("?organization_id=" + f.org.ID.String()), []uuid.UUID{middle, large, small}, 3},
		{"another organization sees none", call{target: "/v1/disputes/", token: f.other.Token}, []uuid.UUID{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkListed(t, f.s.do(t, tt.call), tt.want, tt.total)
		})
	}
	refusals := []struct {
		name string
		call call
		want want
	}{
		{"an unknown sort is refused", list("?sorting=status"), validation(item{Type: "enum", Loc: []any{"query", "sorting", 0}})},
		{"an unknown status is refused", list("?status=open"), validation(item{Type: "enum", Loc: []any{"query", "status", "str-enum[DisputeStatus]"}},
			item{Type: "enum", Loc: []any{"query", "status", "json-or-python[json=list[str-enum[DisputeStatus]],python=chain[is-instance[Sequence],function-wrap[sequence_validator()]]]", 0},
				Msg: "Input should be 'prevented', 'early_warning', 'needs_response', 'under_review', 'lost' or 'won'"})},
		{"a token without a disputes scope is refused",
			call{target: "/v1/disputes/", token: f.s.NewToken(t, f.org.ID, "orders:read")}, insufficientScope("disputes:read disputes:write")},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) { tt.want.check(t, f.s.do(t, tt.call)) })
	}
}
