package resolvers_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// tenancyWorld is two organizations with one of everything an input can name: mine, whose
// token the tests use, and theirs, whose objects the tests try to reach. My organization
// uses the member model, so sessions may name members.
type tenancyWorld struct {
	s            *resolverstest.Server
	mine, theirs resolverstest.Org
	// both is a user token of both organizations, onlyMine of mine only; portal is a
	// portal session of my customer, teamPortal the session of my team customer's owner.
	both, onlyMine, portal, teamPortal string

	myCustomer                                customer
	myMeter                                   meter
	myCredit, myDownloads                     benefit
	myProduct, myPlan                         product
	myCheckout                                ckCheckout
	myFile, myDiscount, mySubscription        uuid.UUID
	theirCustomer                             customer
	theirMeter                                meter
	theirBenefit                              benefit
	theirProduct, theirPlan                   product
	theirCheckout                             ckCheckout
	theirMember, theirFile, theirPrice        uuid.UUID
	theirDiscount, theirSubscription, theirPM uuid.UUID
	theirOrder, theirJob, theirKey, theirHook uuid.UUID
	theirDelivery, theirSeat                  uuid.UUID
	theirGrant, theirEvent, theirRefund       uuid.UUID
	theirDispute, theirDashboard              uuid.UUID
}

func newTenancyWorld(tb testing.TB) *tenancyWorld {
	tb.Helper()
	s := resolverstest.New(tb)
	w := &tenancyWorld{s: s, mine: s.NewOrg(tb, resolverstest.AllScopes), theirs: s.NewOrg(tb, resolverstest.AllScopes)}
	w.both = s.NewUser(tb, resolverstest.UserSpec{Scope: "all", Orgs: []uuid.UUID{w.mine.ID, w.theirs.ID}}).Token
	w.onlyMine = s.NewUser(tb, resolverstest.UserSpec{Scope: "all", Orgs: []uuid.UUID{w.mine.ID}}).Token
	s.Exec(tb, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, w.mine.ID)

	w.myCustomer = w.s.NewCustomer(tb, w.mine.ID, "mine")
	w.myMeter = createMeter(tb, w.s, w.mine.Token, apiCallsInput(nil))
	w.myFile = insertFile(tb, w.s, w.mine.ID)
	w.myCredit = createBenefit(tb, w.s, w.mine.Token, vars{"type": "meter_credit", "description": "Credits",
		"properties": vars{"units": 10, "meter_id": w.myMeter.ID}})
	w.myDownloads = createBenefit(tb, w.s, w.mine.Token, vars{"type": "downloadables", "description": "Downloads",
		"properties": vars{"files": []uuid.UUID{w.myFile}}})
	w.myProduct = w.s.NewProduct(tb, w.mine.ID, "My product")
	w.myPlan = createProduct(tb, w.s, w.mine.Token, vars{"name": "My plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 1000}}})
	w.myDiscount = ckDiscount(tb, w.s, w.mine.Token, vars{"name": "Mine", "type": "percentage", "basisPoints": 1000, "duration": "once"})
	w.myCheckout = ckNewCheckout(tb, w.s, w.mine.Token, vars{"products": []uuid.UUID{w.myProduct.ID}})
	w.mySubscription = w.s.NewSubscription(tb, w.mine.ID, w.myCustomer.ID, w.myPlan.ID, nil)

	w.theirCustomer = w.s.NewCustomer(tb, w.theirs.ID, "theirs")
	w.s.Get(tb, &w.theirMember, `INSERT INTO members (organization_id, customer_id, email) VALUES ($1, $2, 'm@example.com') RETURNING id`,
		w.theirs.ID, w.theirCustomer.ID)
	w.theirMeter = createMeter(tb, w.s, w.theirs.Token, apiCallsInput(nil))
	w.theirFile = insertFile(tb, w.s, w.theirs.ID)
	w.theirBenefit = newBenefit(tb, w.s, w.theirs.Token, "Their benefit")
	w.theirProduct = w.s.NewProduct(tb, w.theirs.ID, "Their product")
	w.theirPlan = createProduct(tb, w.s, w.theirs.Token, vars{"name": "Their plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 1000}}})
	w.theirPrice = w.theirProduct.Prices[0].ID
	w.theirDiscount = ckDiscount(tb, w.s, w.theirs.Token, vars{"name": "Theirs", "type": "percentage", "basisPoints": 1000, "duration": "once"})
	w.theirSubscription = w.s.NewSubscription(tb, w.theirs.ID, w.theirCustomer.ID, w.theirPlan.ID, nil)
	w.theirPM = w.s.AddCard(tb, w.theirs.ID, w.theirCustomer.ID, "4242", 0)

	w.theirCheckout = ckNewCheckout(tb, w.s, w.theirs.Token, vars{"products": []uuid.UUID{w.theirProduct.ID}})
	theirRows := func(query string, args ...any) uuid.UUID {
		tb.Helper()
		var id uuid.UUID
		w.s.Get(tb, &id, query+" RETURNING id", args...)
		return id
	}
	w.theirOrder = w.s.NewPaidOrder(tb, w.theirs.ID, w.theirCustomer.ID, w.theirProduct.ID, nil)
	w.theirJob = theirRows(`INSERT INTO jobs (organization_id, kind) VALUES ($1, 'order_invoice')`, w.theirs.ID)
	w.theirDashboard = theirRows(`INSERT INTO metric_dashboards (organization_id, name, metrics) VALUES ($1, 'Theirs', '{revenue}')`,
		w.theirs.ID)
	w.theirKey = theirRows(`INSERT INTO license_keys (organization_id, benefit_id, customer_id, key)
		VALUES ($1, $2, $3, 'THEIR-KEY')`, w.theirs.ID, w.theirBenefit.ID, w.theirCustomer.ID)
	w.theirHook = theirRows(`INSERT INTO webhook_endpoints (organization_id, url, secret, format, events)
		VALUES ($1, 'https://example.com/hook', 'whsec_x', 'raw', '{order.created}')`, w.theirs.ID)
	w.theirDelivery = theirRows(`INSERT INTO webhook_events (organization_id, webhook_endpoint_id, type, payload)
		VALUES ($1, $2, 'order.created', '{}')`, w.theirs.ID, w.theirHook)
	w.theirSeat = theirRows(`INSERT INTO customer_seats (organization_id, subscription_id) VALUES ($1, $2)`, w.theirs.ID, w.theirSubscription)
	w.theirGrant = theirRows(`INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, granted_at)
		VALUES ($1, $2, $3, now())`, w.theirs.ID, w.theirBenefit.ID, w.theirCustomer.ID)
	w.theirEvent = theirRows(`INSERT INTO events (organization_id, name, customer_id) VALUES ($1, 'api.call', $2)`,
		w.theirs.ID, w.theirCustomer.ID)
	w.theirRefund = theirRows(`INSERT INTO refunds (organization_id, order_id, customer_id, status, reason, amount, currency)
		VALUES ($1, $2, $3, 'succeeded', 'other', 100, 'usd')`, w.theirs.ID, w.theirOrder, w.theirCustomer.ID)
	theirPayment := theirRows(`INSERT INTO payments (organization_id, processor, processor_id, status, amount, currency,
		customer_id, order_id) VALUES ($1, 'stripe', 'ch_theirs', 'succeeded', 1000, 'usd', $2, $3)`,
		w.theirs.ID, w.theirCustomer.ID, w.theirOrder)
	w.theirDispute = theirRows(`INSERT INTO disputes (organization_id, order_id, payment_id, customer_id, status, amount,
		currency, processor, processor_id) VALUES ($1, $2, $3, $4, 'needs_response', 1000, 'usd', 'stripe', 'dp_theirs')`,
		w.theirs.ID, w.theirOrder, theirPayment, w.theirCustomer.ID)
	w.portal = w.s.NewCustomerSession(tb, w.mine.ID, w.myCustomer.ID)
	team := createCustomer(tb, w.s, w.mine.Token, vars{"type": "team", "name": "My team", "owner": vars{"email": "lead@mine.example"}})
	var owner uuid.UUID
	w.s.Get(tb, &owner, `SELECT id FROM members WHERE customer_id = $1 AND role = 'owner'`, team.ID)
	w.teamPortal = w.s.NewMemberSession(tb, w.mine.ID, team.ID, owner)
	return w
}

// wantRefusedAt checks a validation error whose first field error points at loc.
func wantRefusedAt(tb testing.TB, got gqlError, loc []any) {
	tb.Helper()
	if got.Extensions.Code != "BAD_USER_INPUT" || got.Extensions.Reason != "PolarRequestValidationError" {
		tb.Fatalf("error code = %s (%s), want BAD_USER_INPUT (PolarRequestValidationError); message %q, fields %+v",
			got.Extensions.Code, got.Extensions.Reason, got.Message, got.Extensions.Fields)
	}
	if len(got.Extensions.Fields) == 0 {
		tb.Fatalf("no field errors, want one at %v", loc)
	}
	if diff := cmp.Diff(loc, got.Extensions.Fields[0].Loc); diff != "" {
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
