package resolvers_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestTenancyReads checks the id arguments and filters of queries against another
// organization's objects: a get is ResourceNotFound (never NotPermitted), and a list filtered
// by their id answers without their rows. Each of their objects named here would match the
// filter if the list were not limited to my organization.
func TestTenancyReads(t *testing.T) {
	t.Parallel()
	w := newTenancyWorld(t)
	s, mine, theirs := w.s, w.mine, w.theirs

	for _, tc := range []struct {
		name  string
		token string // mine.Token when empty
		doc   string
		id    uuid.UUID // bound to $id
	}{
		{"getting their meter", "", `query($id: UUID!) { meter(id: $id) { id } }`, w.theirMeter.ID},
		{"getting their benefit", "", `query($id: UUID!) { benefit(id: $id) { id } }`, w.theirBenefit.ID},
		{"getting their benefit grant", "", `query($id: UUID!) { benefitGrant(id: $id) { id } }`, w.theirGrant},
		{"getting their customer", "", `query($id: UUID!) { customer(id: $id) { id } }`, w.theirCustomer.ID},
		{"getting their product", "", `query($id: UUID!) { product(id: $id) { id } }`, w.theirProduct.ID},
		{"getting their usage event", "", `query($id: UUID!) { usageEvent(id: $id) { id } }`, w.theirEvent},
		{"getting their meter's quantities", "", `query($id: UUID!) { meterQuantities(id: $id, startTimestamp: "2026-01-01T00:00:00Z",
			endTimestamp: "2026-01-02T00:00:00Z", interval: day) { total } }`, w.theirMeter.ID},
		{"getting their meter's costs", "", `query($id: UUID!) { meterCosts(ids: [$id], startTimestamp: "2026-01-01T00:00:00Z",
			endTimestamp: "2026-01-02T00:00:00Z", interval: day) { total } }`, w.theirMeter.ID},
		{"getting their file", "", `query($id: UUID!) { file(id: $id) { id } }`, w.theirFile},
		{"getting their job", "", `query($id: UUID!) { job(id: $id) { id } }`, w.theirJob},
		{"getting their order", "", `query($id: UUID!) { order(id: $id) { id } }`, w.theirOrder},
		{"getting their refund", "", `query($id: UUID!) { refund(id: $id) { id } }`, w.theirRefund},
		{"getting their dispute", "", `query($id: UUID!) { dispute(id: $id) { id } }`, w.theirDispute},
		{"getting their order's invoice", "", `query($id: UUID!) { orderInvoice(id: $id) { url } }`, w.theirOrder},
		{"getting their order's receipt", "", `query($id: UUID!) { orderReceipt(id: $id) { url } }`, w.theirOrder},
		{"getting their license key", "", `query($id: UUID!) { licenseKey(id: $id) { id } }`, w.theirKey},
		{"getting their webhook endpoint", "", `query($id: UUID!) { webhookEndpoint(id: $id) { id } }`, w.theirHook},
		{"getting their metrics dashboard", "", `query($id: UUID!) { metricDashboard(id: $id) { id } }`, w.theirDashboard},
		{"getting their webhook event", "", `query($id: UUID!) { webhookEvent(id: $id) { id } }`, w.theirDelivery},
		{"getting their seat", "", `query($id: UUID!) { seat(id: $id) { id } }`, w.theirSeat},
		{"getting their member", "", `query($id: UUID!) { member(id: $id) { id } }`, w.theirMember},
		{"getting their member through their customer", "", `query($id: UUID!) { customerMember(ref: {customerId: $id, externalId: "x"}) { id } }`,
			w.theirCustomer.ID},
		{"listing their subscription's seats from my portal", w.portal, `query($id: UUID) { me { seatList(subscriptionId: $id) { totalSeats } } }`,
			w.theirSubscription},
		{"listing their subscription's seats", "", `query($id: UUID!) { seats(subscriptionId: $id) { seats { id } } }`, w.theirSubscription},
		{"listing their order's seats", "", `query($id: UUID!) { seats(orderId: $id) { seats { id } } }`, w.theirOrder},
		{"getting their subscription", "", `query($id: UUID!) { subscription(id: $id) { id } }`, w.theirSubscription},
		{"getting their checkout", "", `query($id: UUID!) { checkout(id: $id) { id } }`, w.theirCheckout.ID},
		{"getting their discount", "", `query($id: UUID!) { discount(id: $id) { id } }`, w.theirDiscount},
		{"listing their benefit's grants", "", `query($id: UUID!) { benefitGrants(benefitId: $id) { items { id } } }`, w.theirBenefit.ID},
		{"getting their license key from my portal", w.portal, `query($id: UUID!) { me { licenseKey(id: $id) { id } } }`, w.theirKey},
		{"getting their order's invoice from my portal", w.portal, `query($id: UUID!) { me { orderInvoice(id: $id) { url } } }`, w.theirOrder},
	} {
		t.Run(tc.name+" is ResourceNotFound", func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = mine.Token
			}
			coverTenancy(tc.doc)
			wantError(t, s.QueryError(t, token, tc.doc, vars{"id": tc.id}), "NOT_FOUND", "ResourceNotFound")
		})
	}

	for _, tc := range []struct {
		name  string
		token string // mine.Token when empty
		doc   string
		arg   uuid.UUID // bound to $id
		their uuid.UUID // their row the filter would match, which the answer must not name
	}{
		{"files by their id", "", `query($id: UUID!) { files(ids: [$id]) { items { id } } }`, w.theirFile, w.theirFile},
		{"files of their organization", w.onlyMine, `query($id: UUID!) { files(organizationId: [$id]) { items { id } } }`, theirs.ID, w.theirFile},
		{"webhook events of their endpoint", "", `query($id: UUID) { webhookEvents(endpointId: $id) { items { id } } }`, w.theirHook, w.theirDelivery},
		{"domain events of their customer", "", `query($id: UUID!) { events(objectId: [$id]) { items { id objectId } } }`,
			w.theirCustomer.ID, w.theirCustomer.ID},
		{"refunds of their order", "", `query($id: UUID!) { refunds(filter: {orderId: [$id]}) { items { id } } }`, w.theirOrder, w.theirRefund},
		{"disputes of their order", "", `query($id: UUID!) { disputes(filter: {orderId: [$id]}) { items { id } } }`, w.theirOrder, w.theirDispute},
		{"disputes of their organization", w.onlyMine, `query($id: UUID!) { disputes(filter: {organizationId: [$id]}) { items { id } } }`,
			w.theirs.ID, w.theirDispute},
		{"orders of their customer", "", `query($id: UUID!) { orders(filter: {customerId: [$id]}) { items { id } } }`, w.theirCustomer.ID, w.theirOrder},
		{"subscriptions of their plan", "", `query($id: UUID!) { subscriptions(filter: {productId: [$id]}) { items { id } } }`,
			w.theirPlan.ID, w.theirSubscription},
		{"checkouts of their product", "", `query($id: UUID!) { checkouts(filter: {productId: [$id]}) { items { id } } }`,
			w.theirProduct.ID, w.theirCheckout.ID},
		{"license keys of their benefit", "", `query($id: UUID!) { licenseKeys(benefitId: [$id]) { items { id } } }`, w.theirBenefit.ID, w.theirKey},
		{"my portal's subscriptions of their plan", w.portal,
			`query($id: UUID!) { me { subscriptions(filter: {productId: [$id]}) { items { id } } } }`, w.theirPlan.ID, w.theirSubscription},
	} {
		t.Run("the list of "+tc.name+" names none of their objects", func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = mine.Token
			}
			res := s.Do(t, token, tc.doc, vars{"id": tc.arg})
			for _, e := range res.Errors {
				if e.Extensions.Code == "FORBIDDEN" && e.Extensions.Reason == "NotPermitted" {
					t.Fatalf("NotPermitted confirms their object exists: %s", res.Body)
				}
			}
			if strings.Contains(string(res.Body), tc.their.String()) {
				t.Errorf("answer names their object %s: %s", tc.their, res.Body)
			}
		})
	}
}
