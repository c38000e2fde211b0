package rest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/storage"
)

// TestHeldCardsStayOffTheV1Lists checks that a card held for one checkout (brought by a
// buyer who only typed the customer's email) is none of the customer's payment methods on
// the /v1 lists, for the organization as for the customer's own portal.
func TestHeldCardsStayOffTheV1Lists(t *testing.T) {
	t.Parallel()
	w := newCheckoutWorld(t)
	s := w.s
	own := s.AddCard(t, w.org.ID, w.alice.ID, "1111", time.Hour)
	s.AddPaymentMethod(t, w.org.ID, w.alice.ID, storage.PaymentMethodWrite{Type: "card", Brand: ptr("mastercard"), Last4: ptr("4444"),
		ExpMonth: ptr(12), ExpYear: ptr(2030), HeldForCheckoutID: &w.a}, time.Minute)
	orgToken := s.NewToken(t, w.org.ID, "customers:read customer_sessions:write")
	for _, tc := range []struct {
		name  string
		call  call
		total int
	}{
		{"the organization's list by customer id", call{target: "/v1/customers/" + w.alice.ID.String() + "/payment-methods",
			token: orgToken}, 1},
		{"the organization's list by external id", call{target: "/v1/customers/external/ext-alice/payment-methods",
			token: orgToken}, 1},
		{"the customer's portal list", call{target: "/v1/customer-portal/customers/me/payment-methods",
			token: s.NewCustomerSession(t, w.org.ID, w.alice.ID)}, 1},
	} {
		t.Run(tc.name+" shows the customer's own card only", func(t *testing.T) {
			rec := s.do(t, tc.call)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			p := decodeMethods(t, rec.Body.Bytes())
			if diff := cmp.Diff([]uuid.UUID{own}, p.ids()); diff != "" {
				t.Errorf("listed methods (-want +got):\n%s", diff)
			}
			if p.Pagination.TotalCount != tc.total {
				t.Errorf("total_count = %d, want %d", p.Pagination.TotalCount, tc.total)
			}
		})
	}
}
