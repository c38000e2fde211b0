package resolvers_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/payment"
)

func TestCreateRefund(t *testing.T) {
	t.Parallel()
	w := newRefundWorld(t)
	type step struct {
		amount int64
		tax    int64 // the refund's tax
	}
	tests := []struct {
		name     string
		net, tax int64
		steps    []step // refunds made in turn, each checked
		want     orderRefunds
	}{
		{name: "a partial refund of an untaxed order leaves it partially refunded", net: 1000,
			steps: []step{{400, 0}},
			want:  orderRefunds{Status: "partially_refunded", RefundedAmount: 400, RefundableAmount: 600}},
		{name: "refunding everything left refunds the order", net: 1000,
			steps: []step{{1000, 0}},
			want:  orderRefunds{Status: "refunded", RefundedAmount: 1000}},
		{name: "the tax refunded is the order's rate of the amount", net: 1000, tax: 250,
			steps: []step{{333, 83}},
			want: orderRefunds{Status: "partially_refunded", RefundedAmount: 333, RefundedTaxAmount: 83,
				RefundableAmount: 667, RefundableTaxAmount: 167}},
		{name: "a half cent of tax rounds to even, as upstream's Python rounds", net: 1000, tax: 100,
			steps: []step{{25, 2}, {35, 4}},
			want: orderRefunds{Status: "partially_refunded", RefundedAmount: 60, RefundedTaxAmount: 6,
				RefundableAmount: 940, RefundableTaxAmount: 94}},
		{name: "the last refund takes all the tax left", net: 1000, tax: 250,
			steps: []step{{333, 83}, {333, 83}, {334, 84}},
			want:  orderRefunds{Status: "refunded", RefundedAmount: 1000, RefundedTaxAmount: 250}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := w.order(t, tt.net, tt.tax)
			for _, st := range tt.steps {
				got := w.refund(t, vars{"orderId": id, "reason": "customer_request", "amount": st.amount,
					"metadata": vars{"ticket": "T-1"}})
				want := refundOut{ID: got.ID, Status: "succeeded", Reason: "customer_request", Amount: st.amount,
					TaxAmount: st.tax, Currency: "usd", OrderID: id, CustomerID: w.customer.ID,
					OrganizationID: w.org.ID, Metadata: map[string]any{"ticket": "T-1"}}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("refund of %d (-want +got):\n%s", st.amount, diff)
				}
			}
			if diff := cmp.Diff(tt.want, w.orderState(t, id)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateRefundRefusals(t *testing.T) {
	t.Parallel()
	w := newRefundWorld(t)
	refunded := w.order(t, 1000, 0)
	w.refund(t, vars{"orderId": refunded, "reason": "other", "amount": 1000})
	uncharged := w.s.NewPaidOrder(t, w.org.ID, w.customer.ID, w.product.ID, nil)
	subOrder := w.s.NewChargedOrder(t, w.org.ID, w.customer.ID, chargedSubscriptionOrder(w))
	missing := uuid.New()

	tests := []struct {
		name         string
		order        uuid.UUID // a fresh paid order of 1000 + 100 tax when zero
		in           vars
		code, reason string
		field        *fieldErr
	}{
		{name: "an amount above what is left is refused at the amount", in: vars{"reason": "other", "amount": 1001},
			code: "BAD_USER_INPUT", reason: "PolarRequestValidationError",
			field: &fieldErr{Type: "value_error", Loc: []any{"input", "amount"}, Msg: "Refund amount exceeds refundable amount", Input: float64(1001)}},
		{name: "an amount of 0 is refused", in: vars{"reason": "other", "amount": 0},
			code: "BAD_USER_INPUT", reason: "PolarRequestValidationError",
			field: &fieldErr{Type: "greater_than", Loc: []any{"input", "amount"}, Msg: "Input should be greater than 0", Input: float64(0)}},
		{name: "dispute_prevention is the system's reason only", in: vars{"reason": "dispute_prevention", "amount": 10},
			code: "BAD_USER_INPUT", reason: "PolarRequestValidationError",
			field: &fieldErr{Type: "literal_error", Loc: []any{"input", "reason"},
				Msg:   "Input should be 'duplicate', 'fraudulent', 'customer_request', 'service_disruption', 'satisfaction_guarantee' or 'other'",
				Input: "dispute_prevention"}},
		{name: "a fully refunded order is RefundedAlready", order: refunded, in: vars{"reason": "other", "amount": 1},
			code: "CONFLICT", reason: "RefundedAlready"},
		{name: "benefits of a subscription's order are not revoked by a refund", order: subOrder,
			in: vars{"reason": "other", "amount": 10, "revokeBenefits": true}, code: "BAD_USER_INPUT", reason: "RevokeSubscriptionBenefitsProhibited"},
		{name: "an order Till never charged has no payment to refund", order: uncharged, in: vars{"reason": "other", "amount": 10},
			code: "NOT_FOUND", reason: "RefundUnknownPayment"},
		{name: "an unknown order is refused at the order id", order: missing, in: vars{"reason": "other", "amount": 10},
			code: "BAD_USER_INPUT", reason: "PolarRequestValidationError",
			field: &fieldErr{Type: "value_error", Loc: []any{"input", "orderId"}, Msg: "Order not found", Input: missing.String()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.order
			if id == uuid.Nil {
				id = w.order(t, 1000, 100)
			}
			tt.in["orderId"] = id
			var before int
			w.s.Get(t, &before, `SELECT count(*) FROM refunds`)
			got := w.s.QueryError(t, w.org.Token, createRefundDoc, vars{"in": tt.in})
			if tt.field != nil {
				wantError(t, got, tt.code, tt.reason, *tt.field)
			} else {
				wantError(t, got, tt.code, tt.reason)
			}
			var after int
			w.s.Get(t, &after, `SELECT count(*) FROM refunds`)
			if after != before {
				t.Errorf("%d refunds stored by a refused call", after-before)
			}
		})
	}
}

func TestCreateRefundAtTheProcessor(t *testing.T) {
	t.Parallel()
	w := newRefundWorld(t)

	t.Run("the processor refunds amount and tax under a key naming the order's next refund", func(t *testing.T) {
		id := w.order(t, 1000, 250)
		before := len(w.processor.requests())
		got := w.refund(t, vars{"orderId": id, "reason": "duplicate", "amount": 400})
		reqs := w.processor.requests()[before:]
		if len(reqs) != 1 {
			t.Fatalf("%d refunds asked of the processor, want 1", len(reqs))
		}
		want := payment.RefundRequest{ChargeID: reqs[0].ChargeID, Amount: 500, Currency: "usd",
			IdempotencyKey: "refund_" + id.String() + "_0_500", Reason: "duplicate"}
		if diff := cmp.Diff(want, reqs[0]); diff != "" {
			t.Errorf("processor request (-want +got):\n%s", diff)
		}
		var charge string
		w.s.Get(t, &charge, `SELECT processor_id FROM payments WHERE order_id = $1`, id)
		if reqs[0].ChargeID != charge {
			t.Errorf("refunded charge %q, want the order's %q", reqs[0].ChargeID, charge)
		}
		var processorID string
		w.s.Get(t, &processorID, `SELECT processor_id FROM refunds WHERE id = $1`, got.ID)
		if processorID == "" {
			t.Error("the processor's refund id is not stored")
		}
	})

	t.Run("a refund whose answer was lost is asked again under its key and made once", func(t *testing.T) {
		id := w.order(t, 1000, 0)
		w.processor.mu.Lock()
		w.processor.lose = true
		w.processor.mu.Unlock()
		e := w.s.QueryError(t, w.org.Token, createRefundDoc, vars{"in": vars{"orderId": id, "reason": "other", "amount": 300}})
		wantError(t, e, "CONFLICT", "RefundError")
		if state := w.orderState(t, id); state.RefundedAmount != 0 {
			t.Fatalf("after the lost answer the order shows %d refunded", state.RefundedAmount)
		}
		got := w.refund(t, vars{"orderId": id, "reason": "other", "amount": 300})
		var processorID string
		w.s.Get(t, &processorID, `SELECT processor_id FROM refunds WHERE id = $1`, got.ID)
		w.processor.mu.Lock()
		made := w.processor.made[len(w.processor.made)-2:]
		w.processor.mu.Unlock()
		if made[0] != made[1] || processorID != made[0] {
			t.Errorf("the processor made %v and Till stored %s, want one refund", made, processorID)
		}
		if state := w.orderState(t, id); state.RefundedAmount != 300 {
			t.Errorf("order shows %d refunded, want 300", state.RefundedAmount)
		}
	})

	t.Run("reasons other than duplicate reach the processor as requested_by_customer", func(t *testing.T) {
		id := w.order(t, 1000, 0)
		before := len(w.processor.requests())
		w.refund(t, vars{"orderId": id, "reason": "fraudulent", "amount": 10})
		if got := w.processor.requests()[before].Reason; got != "requested_by_customer" {
			t.Errorf("processor reason = %q, want requested_by_customer", got)
		}
	})

	refusals := []struct {
		code, graphql, reason string
	}{
		{"charge_already_refunded", "CONFLICT", "RefundedAlready"},
		{"charge_disputed", "CONFLICT", "RefundDisputedPayment"},
		{"amount_too_large", "CONFLICT", "RefundError"},
	}
	for _, tt := range refusals {
		t.Run("a processor refusal "+tt.code+" is "+tt.reason+" and changes nothing", func(t *testing.T) {
			w := newRefundWorld(t)
			id := w.order(t, 1000, 0)
			w.processor.refusing(&payment.RefundError{Code: tt.code, Message: "refused"})
			got := w.s.QueryError(t, w.org.Token, createRefundDoc, vars{"in": vars{"orderId": id, "reason": "other", "amount": 10}})
			wantError(t, got, tt.graphql, tt.reason)
			if diff := cmp.Diff(orderRefunds{Status: "paid", RefundableAmount: 1000}, w.orderState(t, id)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			var n int
			w.s.Get(t, &n, `SELECT count(*) FROM refunds`)
			if n != 0 {
				t.Errorf("%d refunds stored", n)
			}
		})
	}
}

func TestCreateRefundEvents(t *testing.T) {
	t.Parallel()
	w := newRefundWorld(t)
	id := w.order(t, 1000, 0)
	got := w.refund(t, vars{"orderId": id, "reason": "other", "amount": 100})
	var events []struct {
		Type     string    `db:"type"`
		ObjectID uuid.UUID `db:"object_id"`
	}
	if err := w.s.DB.Select(&events, `SELECT type, object_id FROM domain_events
		WHERE object_id = ANY(ARRAY[$1, $2]::uuid[]) ORDER BY created_at`, id, got.ID); err != nil {
		t.Fatal(err)
	}
	type ev = struct {
		Type     string    `db:"type"`
		ObjectID uuid.UUID `db:"object_id"`
	}
	want := []ev{{"refund.created", got.ID}, {"order.updated", id}, {"order.refunded", id}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("domain events (-want +got):\n%s", diff)
	}
}

func TestCreateRefundRevokesBenefits(t *testing.T) {
	t.Parallel()
	w := newRefundWorld(t)
	b := newBenefit(t, w.s, w.org.Token, "Community")
	p := w.s.NewProduct(t, w.org.ID, "Course", b.ID)
	grantAndRefund := func(t *testing.T, revoke bool) (revoked bool) {
		t.Helper()
		id := w.s.NewChargedOrder(t, w.org.ID, w.customer.ID, chargedPurchase(p.ID))
		grantOrder(t, w, id, p.ID)
		w.refund(t, vars{"orderId": id, "reason": "other", "amount": 10, "revokeBenefits": revoke})
		w.s.Get(t, &revoked, `SELECT revoked_at IS NOT NULL FROM benefit_grants WHERE order_id = $1`, id)
		return revoked
	}
	if !grantAndRefund(t, true) {
		t.Error("a refund with revokeBenefits left the order's grant granted")
	}
	if grantAndRefund(t, false) {
		t.Error("a refund without revokeBenefits revoked the order's grant")
	}
}

func TestRefundLists(t *testing.T) {
	t.Parallel()
	w := newRefundWorld(t)
	a, b := w.order(t, 1000, 0), w.order(t, 1000, 0)
	for _, amount := range []int64{100, 300, 200} {
		w.refund(t, vars{"orderId": a, "reason": "other", "amount": amount})
	}
	w.refund(t, vars{"orderId": b, "reason": "other", "amount": 50})
	type page struct {
		Items []struct {
			Amount int64 `json:"amount"`
		} `json:"items"`
		Pagination struct {
			TotalCount int `json:"totalCount"`
		} `json:"pagination"`
		PageInfo struct {
			EndCursor   *string `json:"endCursor"`
			HasNextPage bool    `json:"hasNextPage"`
		} `json:"pageInfo"`
	}
	amounts := func(p page) []int64 {
		out := []int64{}
		for _, it := range p.Items {
			out = append(out, it.Amount)
		}
		return out
	}
	const fields = `items { amount } pagination { totalCount } pageInfo { endCursor hasNextPage }`

	t.Run("each order lists its own refunds, with the root list's sorting", func(t *testing.T) {
		var out struct {
			Orders struct {
				Items []struct {
					ID      uuid.UUID `json:"id"`
					Refunds page      `json:"refunds"`
				} `json:"items"`
			} `json:"orders"`
		}
		w.s.Query(t, w.org.Token, `{ orders(sorting: ["created_at"]) { items { id refunds(sorting: ["-amount"]) { `+fields+` } } } }`, nil, &out)
		got := map[uuid.UUID][]int64{}
		for _, o := range out.Orders.Items {
			got[o.ID] = amounts(o.Refunds)
		}
		want := map[uuid.UUID][]int64{a: {300, 200, 100}, b: {50}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("refunds by order (-want +got):\n%s", diff)
		}
	})

	t.Run("the root list pages forward with cursors", func(t *testing.T) {
		var first struct{ Refunds page }
		w.s.Query(t, w.org.Token, `{ refunds(first: 3, sorting: ["amount"]) { `+fields+` } }`, nil, &first)
		var next struct{ Refunds page }
		w.s.Query(t, w.org.Token, `query($after: String) { refunds(first: 3, after: $after, sorting: ["amount"]) { `+fields+` } }`,
			vars{"after": first.Refunds.PageInfo.EndCursor}, &next)
		got := [][]int64{amounts(first.Refunds), amounts(next.Refunds)}
		if diff := cmp.Diff([][]int64{{50, 100, 200}, {300}}, got); diff != "" || first.Refunds.Pagination.TotalCount != 4 || !first.Refunds.PageInfo.HasNextPage {
			t.Errorf("pages (-want +got):\n%s\nfirst page %+v", diff, first.Refunds)
		}
	})

	t.Run("a token without a refunds scope cannot list them", func(t *testing.T) {
		token := w.s.NewToken(t, w.org.ID, "orders:read")
		wantError(t, w.s.QueryError(t, token, `{ refunds { items { id } } }`, nil), "FORBIDDEN", "insufficient_scope")
	})
}
