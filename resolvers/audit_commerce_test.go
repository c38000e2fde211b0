package resolvers_test

import (
	"testing"

	"github.com/google/uuid"

	"till/internal/payment"
	"till/resolvers/resolverstest"
)

func TestAuditRecordsLicenseKeyMutations(t *testing.T) {
	t.Parallel()
	w := newKeyWorld(t, vars{"activations": vars{"limit": 5, "enable_customer_admin": true}})
	tok, key := w.org.Token, w.key
	first, _ := w.activate(t, vars{"label": "first"})
	second, _ := w.activate(t, vars{"label": "second"})
	ref := func(extra vars) vars {
		in := vars{"key": key.Key, "organizationId": w.org.ID}
		for k, v := range extra {
			in[k] = v
		}
		return vars{"in": in}
	}
	runAuditCases(t, w.s, []auditCase{
		{"validating a key records nothing: its counters are the data plane's", tok,
			`mutation($in: LicenseKeyValidateInput!) { validateLicenseKey(input: $in) { valid } }`, ref(nil), byOrg, nil},
		{"validating a key without a token records nothing either", "",
			`mutation($in: LicenseKeyValidateInput!) { portalValidateLicenseKey(input: $in) { valid } }`, ref(nil), byAnyone, nil},
		{"activating a key records the activation", tok,
			`mutation($in: LicenseKeyActivateInput!) { activateLicenseKey(input: $in) { id } }`, ref(vars{"label": "laptop"}),
			byOrg, []auditWant{{"license_key_activation", created, "label", uuid.Nil}}},
		{"activating a key without a token records an anonymous activation", "",
			`mutation($in: LicenseKeyActivateInput!) { portalActivateLicenseKey(input: $in) { id } }`, ref(vars{"label": "desk"}),
			byAnyone, []auditWant{{"license_key_activation", created, "label", uuid.Nil}}},
		{"deactivating records the activation deleted", tok,
			`mutation($in: LicenseKeyDeactivateInput!) { deactivateLicenseKey(input: $in) }`, ref(vars{"activationId": first}),
			byOrg, []auditWant{{"license_key_activation", deleted, "", first}}},
		{"deactivating without a token records an anonymous delete", "",
			`mutation($in: LicenseKeyDeactivateInput!) { portalDeactivateLicenseKey(input: $in) }`, ref(vars{"activationId": second}),
			byAnyone, []auditWant{{"license_key_activation", deleted, "", second}}},
		{"updating a key records its limits", tok,
			`mutation($id: UUID!) { updateLicenseKey(id: $id, input: {limitUsage: 90}) { id } }`, vars{"id": key.ID},
			byOrg, []auditWant{{"license_key", updated, "limit_usage", key.ID}}},
		{"regenerating a key records that its secret text changed", tok,
			`mutation($id: UUID!) { regenerateLicenseKey(id: $id) { id } }`, vars{"id": key.ID},
			byOrg, []auditWant{{"license_key", updated, "key", key.ID}}},
	})
}

func TestAuditRecordsCommerceMutations(t *testing.T) {
	t.Parallel()
	w := newRetryWorld(t, payment.TokenChargeDeclined)
	tok, portal, s := w.org.Token, w.portal, w.s
	good := w.saveCard(t, w.customer.ID, payment.TokenVisa)
	sub := w.subscribePlan(t)
	team := createProduct(t, s, tok, vars{"name": "Team plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 2000}}})
	three := 3
	seats := w.subscribe(t, w.seatPlan(t, "Seats", nil).ID, w.customer.ID, &good, 3000, 0, &three)
	paid := s.NewChargedOrder(t, w.org.ID, w.customer.ID, resolverstest.ChargedOrder{NetAmount: 1000})
	var dispute uuid.UUID
	s.Get(t, &dispute, `INSERT INTO disputes (organization_id, order_id, payment_id, customer_id, status, amount, currency,
		processor, processor_id) SELECT organization_id, order_id, id, customer_id, 'needs_response', 1000, 'usd', processor, 'dp_1'
		FROM payments WHERE order_id = $1 RETURNING id`, paid)
	spare := s.AddCard(t, w.org.ID, w.customer.ID, "1111", 0)
	portalSpare := s.AddCard(t, w.org.ID, w.customer.ID, "2222", 0)
	ref := func(id uuid.UUID, extra vars) vars {
		in := vars{"id": id}
		for k, v := range extra {
			in[k] = v
		}
		return vars{"in": in}
	}
	subDoc := func(field, input string) string {
		return `mutation($in: ` + input + `!) { ` + field + `(input: $in) { id } }`
	}
	runAuditCases(t, s, []auditCase{
		{"saving a card records the payment method", tok, `mutation($c: UUID!) { savePaymentMethod(input: {customerId: $c,
			token: "tok_mastercard"}) { id } }`, vars{"c": w.customer.ID}, byOrg,
			[]auditWant{{"payment_method", created, "last4", uuid.Nil}}},
		{"saving a card from the portal records it as the customer's session", portal, `mutation {
			portalSavePaymentMethod(input: {token: "tok_mastercard"}) { id } }`, nil, byCustomer,
			[]auditWant{{"payment_method", created, "last4", uuid.Nil}}},
		{"deleting a card records a delete", tok, `mutation($id: UUID!) { deletePaymentMethod(id: $id) { id } }`,
			vars{"id": spare}, byOrg, []auditWant{{"payment_method", deleted, "deleted_at", spare}}},
		{"deleting a card from the portal records a delete", portal, `mutation($id: UUID!) { portalDeletePaymentMethod(id: $id) { id } }`,
			vars{"id": portalSpare}, byCustomer, []auditWant{{"payment_method", deleted, "deleted_at", portalSpare}}},
		{"cancelling a subscription records cancel_at_period_end", tok, subDoc("cancelSubscription", "SubscriptionCancelInput"),
			ref(sub.ID, nil), byOrg, []auditWant{{"subscription", updated, "cancel_at_period_end", sub.ID}}},
		{"uncancelling records it back", tok, subDoc("uncancelSubscription", "SubscriptionRefInput"),
			ref(sub.ID, nil), byOrg, []auditWant{{"subscription", updated, "cancel_at_period_end", sub.ID}}},
		{"cancelling from the portal records the customer's reason", portal, subDoc("portalCancelSubscription", "SubscriptionCancelInput"),
			ref(sub.ID, vars{"customerCancellationReason": "too_expensive"}), byCustomer,
			[]auditWant{{"subscription", updated, "customer_cancellation_reason", sub.ID}}},
		{"uncancelling from the portal records it back", portal, subDoc("portalUncancelSubscription", "SubscriptionRefInput"),
			ref(sub.ID, nil), byCustomer, []auditWant{{"subscription", updated, "cancel_at_period_end", sub.ID}}},
		{"pausing records pause_at_period_end", tok, subDoc("pauseSubscription", "SubscriptionRefInput"),
			ref(sub.ID, nil), byOrg, []auditWant{{"subscription", updated, "pause_at_period_end", sub.ID}}},
		{"resuming records it back", tok, subDoc("resumeSubscription", "SubscriptionRefInput"),
			ref(sub.ID, nil), byOrg, []auditWant{{"subscription", updated, "pause_at_period_end", sub.ID}}},
		{"moving to another product records the product", tok, subDoc("updateSubscriptionProduct", "SubscriptionProductChangeInput"),
			ref(sub.ID, vars{"productId": team.ID, "prorationBehavior": "prorate"}), byOrg,
			[]auditWant{{"subscription", updated, "product_id", sub.ID}}},
		{"moving back from the portal records the product", portal, subDoc("portalUpdateSubscriptionProduct", "SubscriptionProductChangeInput"),
			ref(sub.ID, vars{"productId": w.plan.ID}), byCustomer, []auditWant{{"subscription", updated, "product_id", sub.ID}}},
		{"changing seats records the seats", tok, subDoc("updateSubscriptionSeats", "SubscriptionSeatsChangeInput"),
			ref(seats.ID, vars{"seats": 4, "prorationBehavior": "prorate"}), byOrg,
			[]auditWant{{"subscription", updated, "seats", seats.ID}}},
		{"changing seats from the portal records the seats", portal, subDoc("portalUpdateSubscriptionSeats", "SubscriptionSeatsChangeInput"),
			ref(seats.ID, vars{"seats": 5}), byCustomer, []auditWant{{"subscription", updated, "seats", seats.ID}}},
		{"the customer's billing name from the portal is recorded", portal, `mutation {
			portalUpdateCustomer(input: {billingName: "Ada Ltd"}) { id } }`, nil, byCustomer,
			[]auditWant{{"customer", updated, "billing_name", w.customer.ID}}},
		{"updating an order records its billing details", tok, `mutation($id: UUID!) { updateOrder(id: $id,
			input: {billingName: "Ada", billingAddress: {line1: "1 Main St", city: "Berlin", postalCode: "10115", country: "DE"}})
			{ id } }`, vars{"id": paid}, byOrg,
			[]auditWant{{"order", updated, "billing_name", paid}, {"order", updated, "billing_address", paid}}},
		{"updating an order from the portal records it too", portal, `mutation($id: UUID!) { portalUpdateOrder(id: $id,
			input: {billingName: "Ada Ltd"}) { id } }`, vars{"id": paid}, byCustomer,
			[]auditWant{{"order", updated, "billing_name", paid}}},
		{"asking for an invoice records nothing: rendering is the system's job", tok,
			`mutation($id: UUID!) { generateOrderInvoice(id: $id) }`, vars{"id": paid}, byOrg, nil},
		{"asking for an invoice from the portal records nothing either", portal,
			`mutation($id: UUID!) { portalGenerateOrderInvoice(id: $id) }`, vars{"id": paid}, byCustomer, nil},
		{"refunding records the refund and the order's refunded amount", tok, `mutation($id: UUID!) {
			createRefund(input: {orderId: $id, reason: customer_request, amount: 100}) { id } }`, vars{"id": paid}, byOrg,
			[]auditWant{{"refund", created, "amount", uuid.Nil}, {"order", updated, "refunded_amount", paid}}},
		{"accepting a dispute records its status", tok, `mutation($id: UUID!) { acceptDispute(id: $id) { id } }`,
			vars{"id": dispute}, byOrg, []auditWant{{"dispute", updated, "status", dispute}}},
		{"paying a failed order from the portal records the payment and the order paid", portal,
			`mutation($id: UUID!) { portalConfirmOrderPayment(id: $id, input: {confirmationTokenId: "tok_visa"}) { status } }`,
			vars{"id": w.order}, byCustomer,
			[]auditWant{{"payment", created, "status", uuid.Nil}, {"order", updated, "status", w.order}}},
		{"revoking a subscription records it ended", tok, subDoc("revokeSubscription", "SubscriptionRevokeInput"),
			ref(sub.ID, nil), byOrg, []auditWant{{"subscription", updated, "status", sub.ID}}},
	})
}
