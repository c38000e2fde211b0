package resolvers_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
)

// TestDisputesInGraphQL reads disputes through their relations and the root fields, and
// accepts one: only a dispute that needs a response is accepted, and it comes back lost.
func TestDisputesInGraphQL(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	customer := s.NewCustomer(t, org.ID, "ext-1")
	order := s.NewChargedOrder(t, org.ID, customer.ID, resolverstest.ChargedOrder{NetAmount: 1000, TaxAmount: 200})
	charge, err := storage.SucceededCharge(context.Background(), s.DB, order)
	if err != nil {
		t.Fatal(err)
	}
	insert := func(status, processorID string) uuid.UUID {
		var id uuid.UUID
		s.Get(t, &id, `INSERT INTO disputes (organization_id, order_id, payment_id, customer_id, status, amount, tax_amount,
			currency, processor, processor_id) VALUES ($1, $2, $3, $4, $5, 1000, 200, 'usd', $6, $7) RETURNING id`,
			org.ID, order, charge.ID, customer.ID, status, charge.Processor, processorID)
		return id
	}
	reviewed := insert("under_review", "dp_reviewed")
	open := insert("needs_response", "dp_open")
	elsewhere := insert("needs_response", "dp_elsewhere")
	s.Exec(t, `UPDATE disputes SET processor = 'another_processor' WHERE id = $1`, elsewhere)

	type disputeOut struct {
		ID       uuid.UUID
		Status   string
		Resolved bool
		Closed   bool
		Customer struct{ ID uuid.UUID }
	}
	var rel struct {
		Order struct {
			Disputes struct {
				Items      []disputeOut
				Pagination struct{ TotalCount int }
			}
		}
	}
	s.Query(t, org.Token, `query($id: UUID!) { order(id: $id) { disputes(sorting: ["created_at"]) {
		items { id status resolved closed customer { id } } pagination { totalCount } } } }`, vars{"id": order}, &rel)
	wantRel := []disputeOut{{ID: reviewed, Status: "under_review"}, {ID: open, Status: "needs_response"},
		{ID: elsewhere, Status: "needs_response"}}
	for i := range wantRel {
		wantRel[i].Customer.ID = customer.ID
	}
	if diff := cmp.Diff(wantRel, rel.Order.Disputes.Items); diff != "" || rel.Order.Disputes.Pagination.TotalCount != 3 {
		t.Errorf("Order.disputes (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		id   uuid.UUID
		want string // the status it comes back with, or the error reason
	}{
		{"a dispute under review is not open", reviewed, "DisputeNotOpenError"},
		{"a dispute that needs a response is accepted", open, "lost"},
		{"an accepted dispute is not open any more", open, "DisputeNotOpenError"},
		{"an unknown dispute is not found", uuid.New(), "ResourceNotFound"},
		{"a dispute of a processor Till does not run now is refused, not a fault", elsewhere, "PaymentError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const doc = `mutation($id: UUID!) { acceptDispute(id: $id) { id status resolved closed } }`
			switch tc.want {
			case "DisputeNotOpenError":
				wantError(t, s.QueryError(t, org.Token, doc, vars{"id": tc.id}), "CONFLICT", tc.want)
			case "PaymentError":
				wantError(t, s.QueryError(t, org.Token, doc, vars{"id": tc.id}), "BAD_USER_INPUT", tc.want)
			case "ResourceNotFound":
				wantError(t, s.QueryError(t, org.Token, doc, vars{"id": tc.id}), "NOT_FOUND", tc.want)
			default:
				var out struct{ AcceptDispute disputeOut }
				s.Query(t, org.Token, doc, vars{"id": tc.id}, &out)
				got := out.AcceptDispute
				if got.Status != tc.want || !got.Resolved || !got.Closed {
					t.Errorf("accepted dispute %+v, want %s, resolved and closed", got, tc.want)
				}
			}
		})
	}
}
