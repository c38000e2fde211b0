package resolvers_test

import (
	"testing"

	"github.com/google/uuid"
)

// TestTenancyTargets checks that every mutation whose id argument names the object it acts
// on refuses another organization's object as ResourceNotFound (never NotPermitted, which
// would confirm it exists) and leaves its row exactly as it was; portal sessions likewise
// reach only their own customer's objects.
func TestTenancyTargets(t *testing.T) {
	t.Parallel()
	w := newTenancyWorld(t)
	s, mine, theirs := w.s, w.mine, w.theirs
	subRef := vars{"in": vars{"id": w.theirSubscription}}
	const updateDiscountRef = `mutation($in: DiscountUpdateInput!) { updateDiscount(input: $in) { id } }`

	for _, tc := range []struct {
		name  string
		token string // mine.Token when empty
		doc   string
		vars  vars
		table string // their row, which must not change
		id    uuid.UUID
	}{
		{"archiving their meter", "", `mutation($id: UUID!) { archiveMeter(id: $id) { id } }`, vars{"id": w.theirMeter.ID}, "meters", w.theirMeter.ID},
		{"renaming their meter", "", `mutation($in: MeterUpdateInput!) { updateMeter(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirMeter.ID, "name": "Mine now"}}, "meters", w.theirMeter.ID},
		{"renaming their file", "", `mutation($id: UUID!) { updateFile(id: $id, input: {name: "mine.txt"}) { id } }`,
			vars{"id": w.theirFile}, "files", w.theirFile},
		{"deleting their file", "", `mutation($id: UUID!) { deleteFile(id: $id) { id } }`, vars{"id": w.theirFile}, "files", w.theirFile},
		{"completing their file's upload", "", `mutation($id: UUID!) { completeFileUpload(id: $id, input: {id: "u", path: "p", parts: []}) { id } }`,
			vars{"id": w.theirFile}, "files", w.theirFile},
		{"accepting their dispute", "", `mutation($id: UUID!) { acceptDispute(id: $id) { id } }`, vars{"id": w.theirDispute},
			"disputes", w.theirDispute},
		{"renaming their metrics dashboard", "", `mutation($in: MetricDashboardUpdateInput!) { updateMetricDashboard(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirDashboard, "name": "Mine now"}}, "metric_dashboards", w.theirDashboard},
		{"deleting their metrics dashboard", "", `mutation($id: UUID!) { deleteMetricDashboard(id: $id) { id } }`,
			vars{"id": w.theirDashboard}, "metric_dashboards", w.theirDashboard},
		{"retrying their job", "", `mutation($id: UUID!) { retryJob(id: $id) { id } }`, vars{"id": w.theirJob}, "jobs", w.theirJob},
		{"cancelling their job", "", `mutation($id: UUID!) { cancelJob(id: $id) { id } }`, vars{"id": w.theirJob}, "jobs", w.theirJob},
		{"updating their order", "", `mutation($id: UUID!) { updateOrder(id: $id, input: {billingName: "Me"}) { id } }`,
			vars{"id": w.theirOrder}, "orders", w.theirOrder},
		{"invoicing their order", "", `mutation($id: UUID!) { generateOrderInvoice(id: $id) }`, vars{"id": w.theirOrder}, "orders", w.theirOrder},
		{"updating their order from my portal", w.portal, `mutation($id: UUID!) { portalUpdateOrder(id: $id, input: {billingName: "Me"}) { id } }`,
			vars{"id": w.theirOrder}, "orders", w.theirOrder},
		{"invoicing their order from my portal", w.portal, `mutation($id: UUID!) { portalGenerateOrderInvoice(id: $id) }`,
			vars{"id": w.theirOrder}, "orders", w.theirOrder},
		{"retrying their order's payment from my portal", w.portal,
			`mutation($id: UUID!) { portalConfirmOrderPayment(id: $id, input: {confirmationTokenId: "tok_visa"}) { status } }`,
			vars{"id": w.theirOrder}, "orders", w.theirOrder},
		{"updating their license key", "", `mutation($id: UUID!) { updateLicenseKey(id: $id, input: {usage: 5}) { id } }`,
			vars{"id": w.theirKey}, "license_keys", w.theirKey},
		{"regenerating their license key", "", `mutation($id: UUID!) { regenerateLicenseKey(id: $id) { id } }`,
			vars{"id": w.theirKey}, "license_keys", w.theirKey},
		{"activating their license key", "", `mutation { activateLicenseKey(input: {key: "THEIR-KEY", organizationId: "` + theirs.ID.String() + `", label: "x"}) { id } }`,
			nil, "license_keys", w.theirKey},
		{"updating their webhook endpoint", "", `mutation($in: WebhookEndpointUpdateInput!) { updateWebhookEndpoint(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirHook, "name": "Mine now"}}, "webhook_endpoints", w.theirHook},
		{"rotating their webhook secret", "", `mutation($id: UUID!) { rotateWebhookEndpointSecret(id: $id) { id } }`,
			vars{"id": w.theirHook}, "webhook_endpoints", w.theirHook},
		{"deleting their webhook endpoint", "", `mutation($id: UUID!) { deleteWebhookEndpoint(id: $id) { id } }`,
			vars{"id": w.theirHook}, "webhook_endpoints", w.theirHook},
		{"redelivering their webhook event", "", `mutation($id: UUID!) { redeliverWebhookEvent(id: $id) { id } }`,
			vars{"id": w.theirDelivery}, "webhook_events", w.theirDelivery},
		{"revoking their seat", "", `mutation($id: UUID!) { revokeSeat(input: {id: $id}) { id } }`,
			vars{"id": w.theirSeat}, "customer_seats", w.theirSeat},
		{"resending their seat's invitation", "", `mutation($id: UUID!) { resendSeatInvitation(input: {id: $id}) { invitationToken } }`,
			vars{"id": w.theirSeat}, "customer_seats", w.theirSeat},
		{"revoking their seat from my portal", w.portal, `mutation($id: UUID!) { portalRevokeSeat(input: {id: $id}) { id } }`,
			vars{"id": w.theirSeat}, "customer_seats", w.theirSeat},
		{"resending their seat's invitation from my portal", w.portal, `mutation($id: UUID!) { portalResendSeatInvitation(input: {id: $id}) { id } }`,
			vars{"id": w.theirSeat}, "customer_seats", w.theirSeat},
		{"assigning a seat of their subscription from my portal", w.portal,
			`mutation($id: UUID!) { portalAssignSeat(input: {subscriptionId: $id, email: "x@example.com"}) { id } }`,
			vars{"id": w.theirSubscription}, "subscriptions", w.theirSubscription},
		{"changing their member", "", `mutation($c: UUID!, $id: UUID!) { updateMember(input: {member: {customerId: $c, id: $id}, name: "Mine"}) { id } }`,
			vars{"c": w.theirCustomer.ID, "id": w.theirMember}, "members", w.theirMember},
		{"changing their member through my customer", "", `mutation($c: UUID!, $id: UUID!) { updateMember(input: {member: {customerId: $c, id: $id}, name: "Mine"}) { id } }`,
			vars{"c": w.myCustomer.ID, "id": w.theirMember}, "members", w.theirMember},
		{"removing their member", "", `mutation($c: UUID!, $id: UUID!) { deleteMember(input: {member: {customerId: $c, id: $id}}) { id } }`,
			vars{"c": w.theirCustomer.ID, "id": w.theirMember}, "members", w.theirMember},
		{"adding a member to their customer", "", `mutation($c: UUID!) { createMember(input: {customerId: $c, email: "x@example.com"}) { id } }`,
			vars{"c": w.theirCustomer.ID}, "customers", w.theirCustomer.ID},
		{"changing their member from my team's portal", w.teamPortal, `mutation($id: UUID!) { portalUpdateMember(input: {id: $id, name: "Mine"}) { id } }`,
			vars{"id": w.theirMember}, "members", w.theirMember},
		{"removing their member from my team's portal", w.teamPortal, `mutation($id: UUID!) { portalRemoveMember(input: {id: $id}) { id } }`,
			vars{"id": w.theirMember}, "members", w.theirMember},
		{"cancelling their subscription", "", `mutation($in: SubscriptionCancelInput!) { cancelSubscription(input: $in) { id } }`,
			subRef, "subscriptions", w.theirSubscription},
		{"revoking their subscription", "", `mutation($in: SubscriptionRevokeInput!) { revokeSubscription(input: $in) { id } }`,
			subRef, "subscriptions", w.theirSubscription},
		{"pausing their subscription", "", `mutation($in: SubscriptionRefInput!) { pauseSubscription(input: $in) { id } }`,
			subRef, "subscriptions", w.theirSubscription},
		{"changing their subscription's seats", "", `mutation($in: SubscriptionSeatsChangeInput!) { updateSubscriptionSeats(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirSubscription, "seats": 3}}, "subscriptions", w.theirSubscription},
		{"moving their subscription to my plan", "", `mutation($in: SubscriptionProductChangeInput!) { updateSubscriptionProduct(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirSubscription, "productId": w.myPlan.ID}}, "subscriptions", w.theirSubscription},
		{"cancelling their subscription from my portal", w.portal, `mutation($in: SubscriptionCancelInput!) { portalCancelSubscription(input: $in) { id } }`,
			subRef, "subscriptions", w.theirSubscription},
		{"deleting their payment method from my portal", w.portal, `mutation($id: UUID!) { portalDeletePaymentMethod(id: $id) { id } }`,
			vars{"id": w.theirPM}, "payment_methods", w.theirPM},
		{"updating their checkout", "", `mutation($in: CheckoutUpdateInput!) { updateCheckout(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirCheckout.ID, "customerName": "Me"}}, "checkouts", w.theirCheckout.ID},
		{"updating their benefit", "", `mutation($in: BenefitUpdateInput!) { updateBenefit(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirBenefit.ID, "description": "Mine now"}}, "benefits", w.theirBenefit.ID},
		{"deleting their benefit", "", `mutation($id: UUID!) { deleteBenefit(id: $id) { id } }`, vars{"id": w.theirBenefit.ID}, "benefits", w.theirBenefit.ID},
		{"updating their customer", "", `mutation($in: CustomerUpdateInput!) { updateCustomer(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirCustomer.ID, "name": "Mine now"}}, "customers", w.theirCustomer.ID},
		{"deleting their customer", "", `mutation($id: UUID!) { deleteCustomer(id: $id) { id } }`,
			vars{"id": w.theirCustomer.ID}, "customers", w.theirCustomer.ID},
		{"deleting their customer's payment method", "", `mutation($id: UUID!) { deletePaymentMethod(id: $id) { id } }`,
			vars{"id": w.theirPM}, "payment_methods", w.theirPM},
		{"updating their product", "", `mutation($in: ProductUpdateInput!) { updateProduct(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirProduct.ID, "name": "Mine now"}}, "products", w.theirProduct.ID},
		{"archiving their product", "", `mutation($id: UUID!) { archiveProduct(id: $id) { id } }`,
			vars{"id": w.theirProduct.ID}, "products", w.theirProduct.ID},
		{"giving their product my benefits", "", `mutation($in: ProductBenefitsInput!) { updateProductBenefits(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirProduct.ID, "benefitIds": []uuid.UUID{w.myCredit.ID}}}, "products", w.theirProduct.ID},
		{"uncancelling their subscription", "", `mutation($in: SubscriptionRefInput!) { uncancelSubscription(input: $in) { id } }`,
			subRef, "subscriptions", w.theirSubscription},
		{"resuming their subscription", "", `mutation($in: SubscriptionRefInput!) { resumeSubscription(input: $in) { id } }`,
			subRef, "subscriptions", w.theirSubscription},
		{"uncancelling their subscription from my portal", w.portal, `mutation($in: SubscriptionRefInput!) { portalUncancelSubscription(input: $in) { id } }`,
			subRef, "subscriptions", w.theirSubscription},
		{"moving their subscription from my portal", w.portal, `mutation($in: SubscriptionProductChangeInput!) { portalUpdateSubscriptionProduct(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirSubscription, "productId": w.myPlan.ID}}, "subscriptions", w.theirSubscription},
		{"changing their subscription's seats from my portal", w.portal, `mutation($in: SubscriptionSeatsChangeInput!) { portalUpdateSubscriptionSeats(input: $in) { id } }`,
			vars{"in": vars{"id": w.theirSubscription, "seats": 3}}, "subscriptions", w.theirSubscription},
		{"updating their discount", "", updateDiscountRef, vars{"in": vars{"id": w.theirDiscount, "name": "Mine now"}}, "discounts", w.theirDiscount},
		{"deleting their discount", "", `mutation($id: UUID!) { deleteDiscount(id: $id) { id } }`, vars{"id": w.theirDiscount}, "discounts", w.theirDiscount},
	} {
		t.Run(tc.name+" is ResourceNotFound and changes nothing", func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = mine.Token
			}
			coverTenancy(tc.doc)
			row := `SELECT to_jsonb(t)::text FROM ` + tc.table + ` t WHERE id = $1`
			var before, after string
			s.Get(t, &before, row, tc.id)
			wantError(t, s.QueryError(t, token, tc.doc, tc.vars), "NOT_FOUND", "ResourceNotFound")
			s.Get(t, &after, row, tc.id)
			if after != before {
				t.Errorf("their row changed:\n before %s\n after  %s", before, after)
			}
		})
	}

	theirClient := createOAuth2Client(t, s, theirs.Token, oauth2ClientInput(nil)).Client.ClientID
	for _, tc := range []struct{ name, doc string }{
		{"updating their OAuth2 client", `mutation($id: String!) { updateOAuth2Client(clientId: $id, input: {clientName: "Mine"}) { clientSecret } }`},
		{"rotating their OAuth2 client's secret", `mutation($id: String!) { rotateOAuth2ClientSecret(clientId: $id) { clientSecret } }`},
		{"deleting their OAuth2 client", `mutation($id: String!) { deleteOAuth2Client(clientId: $id) { clientId } }`},
	} {
		t.Run(tc.name+" is ResourceNotFound and changes nothing", func(t *testing.T) {
			row := `SELECT to_jsonb(t)::text FROM oauth2_clients t WHERE client_id = $1`
			var before, after string
			s.Get(t, &before, row, theirClient)
			wantError(t, s.QueryError(t, mine.Token, tc.doc, vars{"id": theirClient}), "NOT_FOUND", "ResourceNotFound")
			s.Get(t, &after, row, theirClient)
			if after != before {
				t.Errorf("their client changed:\n before %s\n after  %s", before, after)
			}
		})
	}

	t.Run("validating their license key answers NOT_FOUND, as for an unknown key, and counts nothing", func(t *testing.T) {
		row := `SELECT to_jsonb(t)::text FROM license_keys t WHERE id = $1`
		var before, after string
		s.Get(t, &before, row, w.theirKey)
		var out struct{ ValidateLicenseKey struct{ Code string } }
		s.Query(t, mine.Token, `mutation($org: UUID!) { validateLicenseKey(input: {key: "THEIR-KEY", organizationId: $org}) { code } }`,
			vars{"org": theirs.ID}, &out)
		if out.ValidateLicenseKey.Code != "not_found" {
			t.Errorf("code = %s, want NOT_FOUND", out.ValidateLicenseKey.Code)
		}
		s.Get(t, &after, row, w.theirKey)
		if after != before {
			t.Errorf("their key changed:\n before %s\n after  %s", before, after)
		}
	})
}
