package resolvers_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// TestTenancyReferences checks every input that names another object (an id argument, an id
// field of an input, or an id inside a JSON properties input) against an object of another
// organization: the write is refused as if the object did not exist (ResourceNotFound, or a
// validation error at that input), never NotPermitted, and nothing referring to the object
// is stored. A stored reference would let one organization hold on to another's object,
// e.g. a meter credit naming their meter blocks them from archiving it.
func TestTenancyReferences(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	mine := s.NewOrg(t, resolverstest.AllScopes)
	theirs := s.NewOrg(t, resolverstest.AllScopes)
	both := newUserToken(t, s, "all", mine.ID, theirs.ID)
	onlyMine := newUserToken(t, s, "all", mine.ID)
	s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, mine.ID)

	myCustomer := newCustomer(t, s, mine.Token, "mine")
	myMeter := createMeter(t, s, mine.Token, apiCallsInput(nil))
	myFile := insertFile(t, s, mine.ID)
	myCredit := createBenefit(t, s, mine.Token, vars{"type": "meter_credit", "description": "Credits",
		"properties": vars{"units": 10, "meter_id": myMeter.ID}})
	myDownloads := createBenefit(t, s, mine.Token, vars{"type": "downloadables", "description": "Downloads",
		"properties": vars{"files": []uuid.UUID{myFile}}})
	myProduct := newProduct(t, s, mine.Token, "My product")
	myPlan := createProduct(t, s, mine.Token, vars{"name": "My plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 1000}}})
	myDiscount := ckDiscount(t, s, mine.Token, vars{"name": "Mine", "type": "percentage", "basisPoints": 1000, "duration": "once"})
	myCheckout := ckNewCheckout(t, s, mine.Token, vars{"products": []uuid.UUID{myProduct.ID}})
	mySubscription := insertSubscription(t, s, mine.ID, myCustomer.ID, myPlan.ID)

	theirCustomer := newCustomer(t, s, theirs.Token, "theirs")
	var theirMember uuid.UUID
	s.Get(t, &theirMember, `INSERT INTO members (organization_id, customer_id, email) VALUES ($1, $2, 'm@example.com') RETURNING id`,
		theirs.ID, theirCustomer.ID)
	theirMeter := createMeter(t, s, theirs.Token, apiCallsInput(nil))
	theirFile := insertFile(t, s, theirs.ID)
	theirBenefit := newBenefit(t, s, theirs.Token, "Their benefit")
	theirProduct := newProduct(t, s, theirs.Token, "Their product")
	theirPlan := createProduct(t, s, theirs.Token, vars{"name": "Their plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 1000}}})
	theirPrice := theirProduct.Prices[0].ID
	theirDiscount := ckDiscount(t, s, theirs.Token, vars{"name": "Theirs", "type": "percentage", "basisPoints": 1000, "duration": "once"})
	theirSubscription := insertSubscription(t, s, theirs.ID, theirCustomer.ID, theirPlan.ID)
	theirPM := addPaymentMethod(t, s, theirs.ID, theirCustomer.ID, "4242", 0)

	const (
		createBenefitRef  = `mutation($in: BenefitCreateInput!) { createBenefit(input: $in) { id } }`
		updateBenefitRef  = `mutation($in: BenefitUpdateInput!) { updateBenefit(input: $in) { id } }`
		createProductRef  = `mutation($in: ProductCreateInput!) { createProduct(input: $in) { id } }`
		updateProductRef  = `mutation($in: ProductUpdateInput!) { updateProduct(input: $in) { id } }`
		createCheckoutRef = `mutation($in: CheckoutCreateInput!) { createCheckout(input: $in) { id } }`
		updateCheckoutRef = `mutation($in: CheckoutUpdateInput!) { updateCheckout(input: $in) { id } }`
		createDiscountRef = `mutation($in: DiscountCreateInput!) { createDiscount(input: $in) { id } }`
		updateDiscountRef = `mutation($in: DiscountUpdateInput!) { updateDiscount(input: $in) { id } }`
		ingestRef         = `mutation($in: EventsIngestInput!) { ingestEvents(input: $in) { inserted } }`
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
			vars{"in": vars{"type": "meter_credit", "description": "Credits", "properties": vars{"units": 5, "meter_id": theirMeter.ID}}},
			[]any{"input", "properties", "meter_id"},
			`SELECT count(*) FROM benefits WHERE properties->>'meter_id' = $1::text AND organization_id = $2`, theirMeter.ID},
		{"moving my meter credit to their meter", "", updateBenefitRef,
			vars{"in": vars{"id": myCredit.ID, "properties": vars{"units": 5, "meter_id": theirMeter.ID}}},
			[]any{"input", "properties", "meter_id"},
			`SELECT count(*) FROM benefits WHERE properties->>'meter_id' = $1::text AND organization_id = $2`, theirMeter.ID},
		{"creating a meter credit on their meter with a user token of both organizations", both, createBenefitRef,
			vars{"in": vars{"organizationId": mine.ID, "type": "meter_credit", "description": "Credits",
				"properties": vars{"units": 5, "meter_id": theirMeter.ID}}},
			[]any{"input", "properties", "meter_id"},
			`SELECT count(*) FROM benefits WHERE properties->>'meter_id' = $1::text AND organization_id = $2`, theirMeter.ID},
		{"creating downloadables of their file", "", createBenefitRef,
			vars{"in": vars{"type": "downloadables", "description": "Downloads", "properties": vars{"files": []uuid.UUID{myFile, theirFile}}}},
			[]any{"input", "properties", "files", 1},
			`SELECT count(*) FROM benefits WHERE jsonb_exists(properties->'files', $1::text) AND organization_id = $2`, theirFile},
		{"adding their file to my downloadables", "", updateBenefitRef,
			vars{"in": vars{"id": myDownloads.ID, "properties": vars{"files": []uuid.UUID{theirFile}}}},
			[]any{"input", "properties", "files", 0},
			`SELECT count(*) FROM benefits WHERE jsonb_exists(properties->'files', $1::text) AND organization_id = $2`, theirFile},
		{"creating a product with their benefit", "", createProductRef,
			vars{"in": vars{"name": "Sneaky", "prices": []vars{fixed}, "benefitIds": []uuid.UUID{theirBenefit.ID}}},
			[]any{"input", "benefitIds"},
			`SELECT count(*) FROM product_benefits WHERE benefit_id = $1 AND organization_id = $2`, theirBenefit.ID},
		{"attaching their benefit to my product", "", `mutation($in: ProductBenefitsInput!) { updateProductBenefits(input: $in) { id } }`,
			vars{"in": vars{"id": myProduct.ID, "benefitIds": []uuid.UUID{theirBenefit.ID}}},
			[]any{"input", "benefitIds"},
			`SELECT count(*) FROM product_benefits WHERE benefit_id = $1 AND organization_id = $2`, theirBenefit.ID},
		{"creating a metered price on their meter", "", createProductRef,
			vars{"in": vars{"name": "Sneaky", "recurringInterval": "month", "prices": []vars{metered(theirMeter.ID)}}},
			[]any{"input", "prices", 0, "meterId"},
			`SELECT count(*) FROM product_prices WHERE meter_id = $1 AND organization_id = $2`, theirMeter.ID},
		{"adding a metered price on their meter to my plan", "", updateProductRef,
			vars{"in": vars{"id": myPlan.ID, "prices": []vars{metered(theirMeter.ID)}}},
			[]any{"input", "prices", 0, "meterId"},
			`SELECT count(*) FROM product_prices WHERE meter_id = $1 AND organization_id = $2`, theirMeter.ID},
		{"keeping their price on my product", "", updateProductRef,
			vars{"in": vars{"id": myProduct.ID, "prices": []vars{{"id": theirPrice}}}},
			[]any{"input", "prices", 0, "id"},
			`SELECT count(*) FROM product_prices WHERE id = $1 AND organization_id = $2`, theirPrice},
		{"restricting my discount to their product at creation", "", createDiscountRef,
			vars{"in": vars{"name": "Sneaky", "type": "percentage", "basisPoints": 500, "duration": "once",
				"products": []uuid.UUID{theirProduct.ID}}},
			[]any{"input", "products"},
			`SELECT count(*) FROM discount_products WHERE product_id = $1`, theirProduct.ID},
		{"restricting my discount to their product", "", updateDiscountRef,
			vars{"in": vars{"id": myDiscount, "products": []uuid.UUID{theirProduct.ID}}},
			[]any{"input", "products"},
			`SELECT count(*) FROM discount_products WHERE product_id = $1`, theirProduct.ID},
		{"opening a checkout for their product", "", createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{theirProduct.ID}}},
			[]any{"input", "products", 0},
			`SELECT count(*) FROM checkout_products WHERE product_id = $1`, theirProduct.ID},
		{"opening a checkout at their price", "", createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{myProduct.ID}, "productPriceId": theirPrice}},
			[]any{"input", "productPriceId"},
			`SELECT count(*) FROM checkouts WHERE product_price_id = $1`, theirPrice},
		{"opening a checkout for their customer", "", createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{myProduct.ID}, "customerId": theirCustomer.ID}},
			[]any{"input", "customerId"},
			`SELECT count(*) FROM checkouts WHERE customer_id = $1`, theirCustomer.ID},
		{"opening a checkout with their discount", "", createCheckoutRef,
			vars{"in": vars{"products": []uuid.UUID{myProduct.ID}, "discountId": theirDiscount}},
			[]any{"input", "discountId"},
			`SELECT count(*) FROM checkouts WHERE discount_id = $1`, theirDiscount},
		{"switching my checkout to their product", "", updateCheckoutRef,
			vars{"in": vars{"id": myCheckout.ID, "productId": theirProduct.ID}},
			[]any{"input", "productId"},
			`SELECT count(*) FROM checkouts WHERE product_id = $1`, theirProduct.ID},
		{"switching my checkout to their price", "", updateCheckoutRef,
			vars{"in": vars{"id": myCheckout.ID, "productPriceId": theirPrice}},
			[]any{"input", "productPriceId"},
			`SELECT count(*) FROM checkouts WHERE product_price_id = $1`, theirPrice},
		{"applying their discount to my checkout", "", updateCheckoutRef,
			vars{"in": vars{"id": myCheckout.ID, "discountId": theirDiscount}},
			[]any{"input", "discountId"},
			`SELECT count(*) FROM checkouts WHERE discount_id = $1`, theirDiscount},
		{"moving my subscription to their plan", "", `mutation($in: SubscriptionProductChangeInput!) { updateSubscriptionProduct(input: $in) { id } }`,
			vars{"in": vars{"id": mySubscription, "productId": theirPlan.ID}},
			[]any{"input", "productId"},
			`SELECT (SELECT count(*) FROM subscriptions WHERE product_id = $1) + (SELECT count(*) FROM pending_subscription_updates WHERE product_id = $1)`,
			theirPlan.ID},
		{"assigning a seat of their subscription", "", `mutation($in: CustomerSeatAssignInput!) { assignSeat(input: $in) { invitationToken } }`,
			vars{"in": vars{"subscriptionId": theirSubscription, "email": "x@example.com"}}, notFound,
			`SELECT count(*) FROM customer_seats WHERE subscription_id = $1`, theirSubscription},
		{"opening a session for a member of their customer", "", sessionRef,
			vars{"in": vars{"customerId": myCustomer.ID, "memberId": theirMember}},
			[]any{"input", "memberId"},
			`SELECT count(*) FROM member_sessions WHERE member_id = $1`, theirMember},
		{"saving a payment method for their customer", "", `mutation($in: PaymentMethodSaveInput!) { savePaymentMethod(input: $in) { id } }`,
			vars{"in": vars{"customerId": theirCustomer.ID, "token": "tok_visa"}}, notFound,
			`SELECT count(*) FROM payment_methods WHERE customer_id = $1`, theirCustomer.ID},
		{"deleting their payment method", "", `mutation($id: UUID!) { deletePaymentMethod(id: $id) { id } }`,
			vars{"id": theirPM}, notFound,
			`SELECT count(*) FROM payment_methods WHERE id = $1 AND deleted_at IS NULL`, theirPM},
		{"ingesting an event of their customer", "", ingestRef,
			vars{"in": event(vars{"customerId": theirCustomer.ID})},
			[]any{"input", "events", 0, "customerId"},
			`SELECT count(*) FROM events WHERE customer_id = $1`, theirCustomer.ID},
		{"ingesting an event for my organization naming their customer with a user token of both", both, ingestRef,
			vars{"in": event(vars{"organizationId": mine.ID, "customerId": theirCustomer.ID})},
			[]any{"input", "events", 0, "customerId"},
			`SELECT count(*) FROM events WHERE customer_id = $1`, theirCustomer.ID},
		{"ingesting an event for my organization naming their member with a user token of both", both, ingestRef,
			vars{"in": event(vars{"organizationId": mine.ID, "customerId": myCustomer.ID, "memberId": theirMember})},
			[]any{"input", "events", 0, "memberId"},
			`SELECT count(*) FROM events WHERE member_id = $1`, theirMember},
		{"creating a webhook endpoint in their organization", onlyMine, `mutation($in: WebhookEndpointCreateInput!) { createWebhookEndpoint(input: $in) { id } }`,
			vars{"in": vars{"url": "https://example.com/hook", "format": "raw", "events": []string{"order.created"}, "organizationId": theirs.ID}},
			[]any{"input", "organizationId"},
			`SELECT count(*) FROM webhook_endpoints WHERE organization_id = $1`, theirs.ID},
		{"creating a meter in their organization", onlyMine, `mutation($in: MeterCreateInput!) { createMeter(input: $in) { id } }`,
			vars{"in": apiCallsInput(vars{"organizationId": theirs.ID})},
			[]any{"input", "organizationId"},
			`SELECT count(*) FROM meters WHERE organization_id = $1`, theirs.ID},
		{"rotating their license signing key", "", `mutation($org: UUID) { rotateLicenseSigningKey(organizationId: $org) { keyId } }`,
			vars{"org": theirs.ID}, []any{"input", "organizationId"},
			`SELECT count(*) FROM license_signing_keys WHERE organization_id = $1`, theirs.ID},
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
				wantError(t, got, "ResourceNotFound", 404)
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
			VALUES ($1, 'meter_credit', 'Old credits', jsonb_build_object('units', 1, 'meter_id', $2::text))`, mine.ID, theirMeter.ID)
		var out struct{ ArchiveMeter struct{ ArchivedAt *string } }
		s.Query(t, theirs.Token, `mutation($id: UUID!) { archiveMeter(id: $id) { archivedAt } }`, vars{"id": theirMeter.ID}, &out)
		if out.ArchiveMeter.ArchivedAt == nil {
			t.Error("their meter is not archived")
		}
	})
}

// wantRefusedAt checks a validation error whose first field error points at loc.
func wantRefusedAt(tb testing.TB, got gqlError, loc []any) {
	tb.Helper()
	if got.Extensions.Code != "PolarRequestValidationError" || got.Extensions.Status != 422 {
		tb.Fatalf("error code = %s (%d), want PolarRequestValidationError (422); message %q, field errors %+v",
			got.Extensions.Code, got.Extensions.Status, got.Message, got.Extensions.Errors)
	}
	if len(got.Extensions.Errors) == 0 {
		tb.Fatalf("no field errors, want one at %v", loc)
	}
	if diff := cmp.Diff(loc, got.Extensions.Errors[0].Loc); diff != "" {
		tb.Errorf("error location (-want +got):\n%s", diff)
	}
}

// insertFile inserts an uploaded downloadable file of an organization; references to it
// need only its row.
func insertFile(tb testing.TB, s *resolverstest.Server, orgID uuid.UUID) uuid.UUID {
	tb.Helper()
	id := uuid.New()
	s.Exec(tb, `INSERT INTO files (id, organization_id, service, name, path, mime_type, size, is_uploaded)
		VALUES ($1, $2, 'downloadable', 'a.txt', $3, 'text/plain', 1, true)`, id, orgID, "downloadable/"+id.String())
	return id
}

// insertSubscription inserts an active monthly subscription of a product.
func insertSubscription(tb testing.TB, s *resolverstest.Server, orgID, customerID, productID uuid.UUID) uuid.UUID {
	tb.Helper()
	var id uuid.UUID
	s.Get(tb, &id, `INSERT INTO subscriptions (organization_id, customer_id, product_id, status, amount,
			currency, recurring_interval, current_period_start, current_period_end, started_at)
		VALUES ($1, $2, $3, 'active', 1000, 'usd', 'month', now(), now() + interval '1 month', now())
		RETURNING id`, orgID, customerID, productID)
	return id
}
