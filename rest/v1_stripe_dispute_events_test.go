package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/jobs"
	"till/resolvers/resolverstest"
)

// disputeEvent is a Stripe event about a dispute of a charge.
func disputeEvent(id, typ, dispute, charge, status string, amount int64, created time.Time) string {
	return fmt.Sprintf(`{"id":%q,"object":"event","type":%q,"created":%d,
		"data":{"object":{"id":%q,"object":"dispute","charge":%q,"status":%q,"amount":%d,"currency":"usd",
		"reason":"fraudulent","evidence_details":{"due_by":1798761600,"past_due":false,"has_evidence":false,
		"submission_count":0}}}}`, id, typ, created.Unix(), dispute, charge, status, amount)
}

// disputeEvents is an organization on Stripe with charged orders, and a way to deliver
// signed events and apply them.
type disputeEvents struct {
	s        *v1
	org      org
	customer resolverstest.Customer
}

func newDisputeEvents(t *testing.T) disputeEvents {
	t.Helper()
	s := newV1(t)
	d := disputeEvents{s: s, org: s.NewOrg(t, "disputes:read orders:read subscriptions:read")}
	d.customer = s.NewCustomer(t, d.org.ID, "")
	return d
}

// charged stores a charged order of net and tax whose charge Stripe knows as charge.
func (d disputeEvents) charged(t *testing.T, spec resolverstest.ChargedOrder, charge string) uuid.UUID {
	t.Helper()
	order := d.s.NewChargedOrder(t, d.org.ID, d.customer.ID, spec)
	d.s.Exec(t, `UPDATE payments SET processor_id = $2 WHERE order_id = $1`, order, charge)
	return order
}

// deliver sends each event signed, then applies what was queued.
func (d disputeEvents) deliver(t *testing.T, events ...string) {
	t.Helper()
	for _, e := range events {
		if rec := d.s.do(t, signed(e, stripeWebhookSecret, time.Now())); rec.Code != http.StatusAccepted {
			t.Fatalf("delivery answered %d %s", rec.Code, rec.Body)
		}
	}
	worker := &jobs.Worker{DB: d.s.DB, Handlers: d.s.Resolver.JobHandlers()}
	if _, err := worker.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

type storedDispute struct {
	OrderID   uuid.UUID `db:"order_id"`
	OrgID     uuid.UUID `db:"organization_id"`
	Status    string    `db:"status"`
	Amount    int64     `db:"amount"`
	TaxAmount int64     `db:"tax_amount"`
	Reason    *string   `db:"reason"`
	DueBy     time.Time `db:"evidence_due_by"`
	Count     int       `db:"n"`
}

func (d disputeEvents) stored(t *testing.T, processorID string) storedDispute {
	t.Helper()
	var out storedDispute
	d.s.Get(t, &out, `SELECT order_id, organization_id, status, amount, tax_amount, reason, evidence_due_by,
		(SELECT count(*) FROM disputes WHERE processor_id = $1) AS n FROM disputes WHERE processor_id = $1`, processorID)
	return out
}

// TestStripeDisputeEventsMapStatuses: each of Stripe's dispute statuses opens a dispute in
// upstream's status for it, on the order the charge paid, in that order's organization.
func TestStripeDisputeEventsMapStatuses(t *testing.T) {
	t.Parallel()
	d := newDisputeEvents(t)
	tests := []struct {
		stripe, want string
		order        uuid.UUID
	}{
		{stripe: "warning_needs_response", want: "needs_response"},
		{stripe: "warning_under_review", want: "under_review"},
		{stripe: "warning_closed", want: "prevented"},
		{stripe: "needs_response", want: "needs_response"},
		{stripe: "under_review", want: "under_review"},
		{stripe: "won", want: "won"},
		{stripe: "lost", want: "lost"},
	}
	for i := range tests { // charged by the test processor, before Till runs on Stripe
		tests[i].order = d.charged(t, resolverstest.ChargedOrder{NetAmount: 1000}, "ch_map_"+tests[i].stripe)
	}
	d.s.rebuild(t, onStripe(t))
	now := time.Now()
	for _, tt := range tests {
		t.Run(tt.stripe, func(t *testing.T) {
			dispute := "dp_map_" + tt.stripe
			d.deliver(t, disputeEvent("evt_map_"+tt.stripe, "charge.dispute.created", dispute, "ch_map_"+tt.stripe, tt.stripe, 1000, now))
			got := d.stored(t, dispute)
			if got.Status != tt.want || got.OrderID != tt.order || got.OrgID != d.org.ID {
				t.Errorf("dispute %s of order %s in %s, want %s of %s in %s", got.Status, got.OrderID, got.OrgID,
					tt.want, tt.order, d.org.ID)
			}
		})
	}
}

// TestStripeDisputeEventsFollowADispute follows one dispute from its warning to its
// closing: a duplicated event opens it once, an older event arriving late changes nothing,
// a closed dispute is never reopened, and a charge of no order of Till's is left alone.
func TestStripeDisputeEventsFollowADispute(t *testing.T) {
	t.Parallel()
	d := newDisputeEvents(t)
	d.charged(t, resolverstest.ChargedOrder{NetAmount: 1000, TaxAmount: 250}, "ch_followed")
	d.s.rebuild(t, onStripe(t))
	now := time.Now()
	at := func(minutes int) time.Time { return now.Add(time.Duration(minutes) * time.Minute) }
	opened := disputeEvent("evt_opened", "charge.dispute.created", "dp_followed", "ch_followed", "warning_needs_response", 625, at(0))
	steps := []struct {
		name   string
		events []string
		want   string
	}{
		{"a duplicated event opens the dispute once", []string{opened, opened}, "needs_response"},
		{"a newer event moves it", []string{disputeEvent("evt_review", "charge.dispute.updated", "dp_followed",
			"ch_followed", "under_review", 625, at(2))}, "under_review"},
		{"an older event arriving late is left unapplied", []string{disputeEvent("evt_late", "charge.dispute.updated",
			"dp_followed", "ch_followed", "needs_response", 625, at(1))}, "under_review"},
		{"closing settles it", []string{disputeEvent("evt_won", "charge.dispute.closed", "dp_followed",
			"ch_followed", "won", 625, at(3))}, "won"},
		{"a closed dispute is not reopened", []string{disputeEvent("evt_reopen", "charge.dispute.updated", "dp_followed",
			"ch_followed", "under_review", 625, at(4))}, "won"},
	}
	for _, st := range steps {
		d.deliver(t, st.events...)
		got := d.stored(t, "dp_followed")
		if got.Status != st.want || got.Count != 1 {
			t.Errorf("%s: %d disputes, status %s; want 1, %s", st.name, got.Count, got.Status, st.want)
		}
	}
	got := d.stored(t, "dp_followed")
	// 625 of a 1250 total: the order's tax share, 125, is the tax disputed.
	if got.Amount != 500 || got.TaxAmount != 125 || got.Reason == nil || *got.Reason != "fraudulent" ||
		!got.DueBy.Equal(time.Unix(1798761600, 0)) {
		t.Errorf("dispute %+v, want 500 + 125 tax, fraudulent, due 2027-01-01", got)
	}
	d.deliver(t, disputeEvent("evt_elsewhere", "charge.dispute.created", "dp_elsewhere", "ch_unknown", "needs_response", 100, now))
	var n int
	d.s.Get(t, &n, `SELECT count(*) FROM disputes WHERE processor_id = 'dp_elsewhere'`)
	if n != 0 {
		t.Errorf("a dispute of a charge Till did not make was recorded")
	}
	rec := d.s.do(t, call{target: "/v1/disputes/?status=won", token: d.org.Token})
	want{status: 200, has: []string{`"status":"won"`, `"amount":500`, `"tax_amount":125`,
		`"evidence_due_by":"2027-01-01T00:00:00Z"`}}.check(t, rec)
}
