package resolvers_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestTenancyReferences checks every input that names another object (an id argument, an id
// field of an input, or an id inside a JSON properties input) against an object of another
// organization: the write is refused as if the object did not exist (ResourceNotFound, or a
// validation error at that input), never NotPermitted, and nothing referring to the object
// is stored. A stored reference would let one organization hold on to another's object,
// e.g. a meter credit naming their meter blocks them from archiving it. A user token of both
// organizations must not mix them either: what one organization's object names must be
// that organization's.
func TestTenancyReferences(t *testing.T) {
	t.Parallel()
	w := newTenancyWorld(t)
	s, mine, theirs := w.s, w.mine, w.theirs

	const (
		createBenefitRef  = `mutation($in: BenefitCreateInput!) { createBenefit(input: $in) { id } }`
		updateBenefitRef  = `mutation($in: BenefitUpdateInput!) { updateBenefit(input: $in) { id } }`
		createProductRef  = `mutation($in: ProductCreateInput!) { createProduct(input: $in) { id } }`
		updateProductRef  = `mutation($in: ProductUpdateInput!) { updateProduct(input: $in) { id } }`
		createCheckoutRef = `mutation($in: CheckoutCreateInput!) { createCheckout(input: $in) { id } }`
		updateCheckoutRef = `mutation($in: CheckoutUpdateInput!) { updateCheckout(input: $in) { id } }`
		createDiscountRef = `mutation($in: DiscountCreateInput!) { createDiscount(input: $in) { id } }`
		updateDiscountRef = `mutation($in: DiscountUpdateInput!) { updateDiscount(input: $in) { id } }`
		ingestRef         = `mutation($in: UsageEventsIngestInput!) { ingestEvents(input: $in) { inserted } }`
		sessionRef        = `mutation($in: CustomerSessionCreateInput!) { createCustomerSession(input: $in) { token } }`
	)
	fixed := vars{"amountType": "fixed", "priceAmount": 500}
	metered := func(meter uuid.UUID) vars {
		return vars{"amountType": "metered_unit", "unitAmount": "10", "meterId": meter}
	}
	event := func(in vars) vars {
		in["name"] = "api_call"
		return vars{"events": []vars{in}}
	}
	notFound := []any(nil)

	for _, tc := range []struct {
		name  string
		token string // mine.Token when empty
		doc   string
		vars  vars
		loc   []any // where the validation error points; nil for ResourceNotFound
		// stored counts what refers to their object ($1 their object's id, $2 if present my
		// organization); the count must not change.
		stored string
		ref    uuid.UUID
	}{
		{"creating a meter credit on their meter", "", createBenefitRef,
			vars{"in": vars{"type": "meter_credit", "description": "Credits", "properties": vars{"units": 5, "meter_id": w.theirMeter.ID}}},
			[]any{"input", "properties", "meter_id"},
			`SELECT count(*) FROM benefits WHERE properties->>'meter_id' = $1::text AND organization_id = $2`, w.theirMeter.ID},
		{"moving my meter credit to their meter", "", updateBenefitRef,
			vars{"in": vars{"id": w.myCredit.ID, "properties": vars{"units": 5, "meter_id": w.theirMeter.ID}}},
			[]any{"input", "properties", "meter_id"},
			`SELECT count(*) FROM benefits WHERE properties->>'meter_id' = $1::text AND organization_id = $2`, w.theirMeter.ID},
		{"creating a meter credit on their meter with a user token of both organizations", w.both, createBenefitRef,
			vars{"in": vars{"organizationId": mine.ID, "type": "meter_credit", "description": "Credits",
				"properties": vars{"units": 5, "meter_id": w.theirMeter.ID}}},
			[]any{"input", "properties", "meter_id"},
			`SELECT count(*) FROM benefits WHERE properties->>'meter_id' = $1::text AND organization_id = $2`, w.theirMeter.ID},
		{"creating downloadables of their file", "", createBenefitRef,
			vars{"in": vars{"type": "downloadables", "description": "Downloads", "properties": vars{"files": []uuid.UUID{w.myFile, w.theirFile}}}},
			[]any{"input", "properties", "files", 1},
			`SELECT count(*) FROM benefits WHERE jsonb_exists(properties->'files', $1::text) AND organization_id = $2`, w.theirFile},
		{"adding their file to my downloadables", "", updateBenefitRef,
			vars{"in": vars{"id": w.myDownloads.ID, "properties": vars{"files": []uuid.UUID{w.theirFile}}}},
			[]any{"input", "properties", "files", 0},
			`SELECT count(*) FROM benefits WHERE jsonb_exists(properties->'files', $1::text) AND organization_id = $2`, w.theirFile},
		{"creating a product with their benefit", "", createProductRef,
			vars{"in": vars{"name": "Sneaky", "prices": []vars{fixed}, "benefitIds": []uuid.UUID{w.theirBenefit.ID}}},
			[]any{"input", "benefitIds"},
			`SELECT count(*) FROM product_benefits WHERE benefit_id = $1 AND organization_id = $2`, w.theirBenefit.ID},
		{"attaching their benefit to my product", "", `mutation($in: ProductBenefitsInput!) { updateProductBenefits(input: $in) { id } }`,
			vars{"in": vars{"id": w.myProduct.ID, "benefitIds": []uuid.UUID{w.theirBenefit.ID}}},
			[]any{"input", "benefitIds"},
			`SELECT count(*) FROM product_benefits WHERE benefit_id = $1 AND organization_id = $2`, w.theirBenefit.ID},
		{"creating a metered price on their meter", "", createProductRef,
			vars{"in": vars{"name": "Sneaky", "recurringInterval": "month", "prices": []vars{metered(w.theirMeter.ID)}}},
			[]any{"input", "prices", 0, "meterId"},
			`SELECT count(*) FROM product_prices WHERE meter_id = $1 AND organization_id = $2`, w.theirMeter.ID},
		{"adding a metered price on their meter to my plan", "", updateProductRef,
			vars{"in": vars{"id": w.myPlan.ID, "prices": []vars{metered(w.theirMeter.ID)}}},
			[]any{"input", "prices", 0, "meterId"},
			`SELECT count(*) FROM product_prices WHERE meter_id = $1 AND organization_id = $2`, w.theirMeter.ID},
		{"keeping their price on my product", "", updateProductRef,
			vars{"in": vars{"id": w.myProduct.ID, "prices": []vars{{"id": w.theirPrice}}}},
			[]any{"input", "prices", 0, "id"},
			`SELECT count(*) FROM product_prices WHERE id = $1 AND organization_id = $2`, w.theirPrice},
		{"restricting my discount to their product at creation", "", createDiscountRef,
			vars{"in": vars{"name": "Sneaky", "type": "percentage", "basisPoints": 500, "duration": "once",
				"products": []uuid.UUID{w.theirProduct.ID}}},
			[]any{"input", "products"},
			`SELECT count(*) FROM discount_products WHERE product_id = $1`, w.theirProduct.ID},
		{"restricting my discount to their product", "", updateDiscountRef,
			vars{"in": vars{"id": w.myDiscount, "products": []uuid.UUID{w.theirProduct.ID}}},
			[]any{"input", "products"},
			`SELECT count(*) FROM discount_products WHERE product_id = $1`, w.theirProduct.ID},
		{"opening a checkout for their product", "", createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{w.theirProduct.ID}}},
			[]any{"input", "products", 0},
			`SELECT count(*) FROM checkout_products WHERE product_id = $1`, w.theirProduct.ID},
		{"opening a checkout at their price", "", createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{w.myProduct.ID}, "productPriceId": w.theirPrice}},
			[]any{"input", "productPriceId"},
			`SELECT count(*) FROM checkouts WHERE product_price_id = $1`, w.theirPrice},
		{"opening a checkout for their customer", "", createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{w.myProduct.ID}, "customerId": w.theirCustomer.ID}},
			[]any{"input", "customerId"},
			`SELECT count(*) FROM checkouts WHERE customer_id = $1`, w.theirCustomer.ID},
		{"opening a checkout with their discount", "", createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{w.myProduct.ID}, "discountId": w.theirDiscount}},
			[]any{"input", "discountId"},
			`SELECT count(*) FROM checkouts WHERE discount_id = $1`, w.theirDiscount},
		{"switching my checkout to their product", "", updateCheckoutRef,
			vars{"in": vars{"id": w.myCheckout.ID, "productId": w.theirProduct.ID}},
			[]any{"input", "productId"},
			`SELECT count(*) FROM checkouts WHERE product_id = $1`, w.theirProduct.ID},
		{"switching my checkout to their price", "", updateCheckoutRef,
			vars{"in": vars{"id": w.myCheckout.ID, "productPriceId": w.theirPrice}},
			[]any{"input", "productPriceId"},
			`SELECT count(*) FROM checkouts WHERE product_price_id = $1`, w.theirPrice},
		{"applying their discount to my checkout", "", updateCheckoutRef,
			vars{"in": vars{"id": w.myCheckout.ID, "discountId": w.theirDiscount}},
			[]any{"input", "discountId"},
			`SELECT count(*) FROM checkouts WHERE discount_id = $1`, w.theirDiscount},
		{"moving my subscription to their plan", "", `mutation($in: SubscriptionProductChangeInput!) { updateSubscriptionProduct(input: $in) { id } }`,
			vars{"in": vars{"id": w.mySubscription, "productId": w.theirPlan.ID}},
			[]any{"input", "productId"},
			`SELECT (SELECT count(*) FROM subscriptions WHERE product_id = $1) + (SELECT count(*) FROM pending_subscription_updates WHERE product_id = $1)`,
			w.theirPlan.ID},
		{"assigning a seat of their subscription", "", `mutation($in: CustomerSeatAssignInput!) { assignSeat(input: $in) { invitationToken } }`,
			vars{"in": vars{"subscriptionId": w.theirSubscription, "email": "x@example.com"}}, notFound,
			`SELECT count(*) FROM customer_seats WHERE subscription_id = $1`, w.theirSubscription},
		{"opening a session for a member of their customer", "", sessionRef,
			vars{"in": vars{"customerId": w.myCustomer.ID, "memberId": w.theirMember}},
			[]any{"input", "memberId"},
			`SELECT count(*) FROM member_sessions WHERE member_id = $1`, w.theirMember},
		{"saving a payment method for their customer", "", `mutation($in: PaymentMethodSaveInput!) { savePaymentMethod(input: $in) { id } }`,
			vars{"in": vars{"customerId": w.theirCustomer.ID, "token": "tok_visa"}}, notFound,
			`SELECT count(*) FROM payment_methods WHERE customer_id = $1`, w.theirCustomer.ID},
		{"deleting their payment method", "", `mutation($id: UUID!) { deletePaymentMethod(id: $id) { id } }`,
			vars{"id": w.theirPM}, notFound,
			`SELECT count(*) FROM payment_methods WHERE id = $1 AND deleted_at IS NULL`, w.theirPM},
		{"ingesting an event of their customer", "", ingestRef,
			vars{"in": event(vars{"customerId": w.theirCustomer.ID})},
			[]any{"input", "events", 0, "customerId"},
			`SELECT count(*) FROM events WHERE customer_id = $1`, w.theirCustomer.ID},
		{"ingesting an event for my organization naming their customer with a user token of both", w.both, ingestRef,
			vars{"in": event(vars{"organizationId": mine.ID, "customerId": w.theirCustomer.ID})},
			[]any{"input", "events", 0, "customerId"},
			`SELECT count(*) FROM events WHERE customer_id = $1`, w.theirCustomer.ID},
		{"ingesting an event for my organization naming their member with a user token of both", w.both, ingestRef,
			vars{"in": event(vars{"organizationId": mine.ID, "customerId": w.myCustomer.ID, "memberId": w.theirMember})},
			[]any{"input", "events", 0, "memberId"},
			`SELECT count(*) FROM events WHERE member_id = $1`, w.theirMember},
		{"creating a webhook endpoint in their organization", w.onlyMine, `mutation($in: WebhookEndpointCreateInput!) { createWebhookEndpoint(input: $in) { id } }`,
			vars{"in": vars{"url": "https://example.com/hook", "format": "raw", "events": []string{"order.created"}, "organizationId": theirs.ID}},
			[]any{"input", "organizationId"},
			`SELECT count(*) FROM webhook_endpoints WHERE organization_id = $1`, theirs.ID},
		{"creating a meter in their organization", w.onlyMine, `mutation($in: MeterCreateInput!) { createMeter(input: $in) { id } }`,
			vars{"in": apiCallsInput(vars{"organizationId": theirs.ID})},
			[]any{"input", "organizationId"},
			`SELECT count(*) FROM meters WHERE organization_id = $1`, theirs.ID},
		{"rotating their license signing key", "", `mutation($org: UUID) { rotateLicenseSigningKey(organizationId: $org) { keyId } }`,
			vars{"org": theirs.ID}, []any{"input", "organizationId"},
			`SELECT count(*) FROM license_signing_keys WHERE organization_id = $1`, theirs.ID},
		{"advancing their test clock", "", `mutation($org: UUID) { advanceTestClock(input: {organizationId: $org, to: "2100-01-01T00:00:00Z"}) { renewals } }`,
			vars{"org": theirs.ID}, []any{"input", "organizationId"},
			`SELECT count(*) FROM test_clocks WHERE organization_id = $1`, theirs.ID},
		{"creating a product of mine with their benefit with a user token of both", w.both, createProductRef,
			vars{"in": vars{"organizationId": mine.ID, "name": "Sneaky", "prices": []vars{fixed}, "benefitIds": []uuid.UUID{w.theirBenefit.ID}}},
			[]any{"input", "benefitIds"},
			`SELECT count(*) FROM product_benefits WHERE benefit_id = $1 AND organization_id = $2`, w.theirBenefit.ID},
		{"attaching their benefit to my product with a user token of both", w.both, `mutation($in: ProductBenefitsInput!) { updateProductBenefits(input: $in) { id } }`,
			vars{"in": vars{"id": w.myProduct.ID, "benefitIds": []uuid.UUID{w.theirBenefit.ID}}},
			[]any{"input", "benefitIds"},
			`SELECT count(*) FROM product_benefits WHERE benefit_id = $1 AND organization_id = $2`, w.theirBenefit.ID},
		{"creating a metered price of mine on their meter with a user token of both", w.both, createProductRef,
			vars{"in": vars{"organizationId": mine.ID, "name": "Sneaky", "recurringInterval": "month", "prices": []vars{metered(w.theirMeter.ID)}}},
			[]any{"input", "prices", 0, "meterId"},
			`SELECT count(*) FROM product_prices WHERE meter_id = $1 AND organization_id = $2`, w.theirMeter.ID},
		{"restricting my discount to their product with a user token of both", w.both, updateDiscountRef,
			vars{"in": vars{"id": w.myDiscount, "products": []uuid.UUID{w.theirProduct.ID}}},
			[]any{"input", "products"},
			`SELECT count(*) FROM discount_products WHERE product_id = $1`, w.theirProduct.ID},
		{"opening a checkout of my product and theirs with a user token of both", w.both, createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{w.myProduct.ID, w.theirProduct.ID}}},
			[]any{"input", "products"},
			`SELECT count(*) FROM checkout_products WHERE product_id = $1`, w.theirProduct.ID},
		{"opening a checkout of my product for their customer with a user token of both", w.both, createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{w.myProduct.ID}, "customerId": w.theirCustomer.ID}},
			[]any{"input", "customerId"},
			`SELECT count(*) FROM checkouts WHERE customer_id = $1`, w.theirCustomer.ID},
		{"opening a checkout of my product with their discount with a user token of both", w.both, createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{w.myProduct.ID}, "discountId": w.theirDiscount}},
			[]any{"input", "discountId"},
			`SELECT count(*) FROM checkouts WHERE discount_id = $1`, w.theirDiscount},
		{"moving my subscription to their plan with a user token of both", w.both, `mutation($in: SubscriptionProductChangeInput!) { updateSubscriptionProduct(input: $in) { id } }`,
			vars{"in": vars{"id": w.mySubscription, "productId": w.theirPlan.ID}},
			[]any{"input", "productId"},
			`SELECT (SELECT count(*) FROM subscriptions WHERE product_id = $1) + (SELECT count(*) FROM pending_subscription_updates WHERE product_id = $1)`,
			w.theirPlan.ID},
		{"refunding their order", "", `mutation($in: RefundCreateInput!) { createRefund(input: $in) { id } }`,
			vars{"in": vars{"orderId": w.theirOrder, "reason": "other", "amount": 100}},
			[]any{"input", "orderId"},
			`SELECT count(*) FROM refunds WHERE order_id = $1 AND organization_id = $2`, w.theirOrder},
	} {
		t.Run(tc.name+" is refused and stores nothing", func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = mine.Token
			}
			args := []any{tc.ref}
			if strings.Contains(tc.stored, "$2") {
				args = append(args, mine.ID)
			}
			var before, after int
			s.Get(t, &before, tc.stored, args...)
			got := s.QueryError(t, token, tc.doc, tc.vars)
			if tc.loc == nil {
				wantError(t, got, "NOT_FOUND", "ResourceNotFound")
			} else {
				wantRefusedAt(t, got, tc.loc)
			}
			s.Get(t, &after, tc.stored, args...)
			if after != before {
				t.Errorf("rows referring to their object: %d before, %d after", before, after)
			}
		})
	}

	t.Run("a meter credit of mine stored before the check does not keep them from archiving their meter", func(t *testing.T) {
		s.Exec(t, `INSERT INTO benefits (organization_id, type, description, properties)
			VALUES ($1, 'meter_credit', 'Old credits', jsonb_build_object('units', 1, 'meter_id', $2::text))`, mine.ID, w.theirMeter.ID)
		var out struct{ ArchiveMeter struct{ ArchivedAt *string } }
		s.Query(t, theirs.Token, `mutation($id: UUID!) { archiveMeter(id: $id) { archivedAt } }`, vars{"id": w.theirMeter.ID}, &out)
		if out.ArchiveMeter.ArchivedAt == nil {
			t.Error("their meter is not archived")
		}
	})
}
