package main

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/internal/payment"
	"till/resolvers"
	"till/storage"
)

type idOnly struct {
	ID uuid.UUID `json:"id"`
}

// seedDemo builds the demo dataset; every step goes through a GraphQL operation, so the
// data obeys the same rules (and records the same events) as data made through the API.
func seedDemo(ctx context.Context, r *resolvers.Resolver, db *sqlx.DB, secret []byte) (*demoOutput, error) {
	org, token, err := newDemoOrganization(ctx, db, secret)
	if err != nil {
		return nil, err
	}
	out := &demoOutput{Organization: demoOrg{ID: org.ID, Slug: org.Slug}, OrganizationToken: token,
		Products: map[string]string{}, Benefits: map[string]string{}, Discounts: map[string]string{},
		Customers: map[string]string{}, Checkouts: map[string]string{}, Orders: map[string]string{},
		Subscriptions: map[string]string{}, LicenseKeys: map[string]string{}, Seats: map[string]string{}}
	all := auth.NewScopeSet(auth.AllScopes()...)
	s := demoSession{exec: r.Executor(), ctx: auth.WithPrincipal(ctx, auth.Principal{Kind: auth.KindOrganization,
		OrganizationID: org.ID, Scopes: all})}

	// Catalog: benefits, a meter, products, a discount.
	var lk, perk struct{ CreateBenefit idOnly }
	if err := s.run(`mutation($p: JSON) { createBenefit(input: {type: license_keys, description: "Desktop license key", properties: $p}) { id } }`,
		map[string]any{"p": map[string]any{"prefix": "DEMO", "activations": map[string]any{"limit": 3, "enable_customer_admin": true},
			"expires": map[string]any{"ttl": 1, "timeframe": "year"}}}, &lk); err != nil {
		return nil, err
	}
	if err := s.run(`mutation { createBenefit(input: {type: custom, description: "Priority support", properties: {note: "Write to support@demo.test"}}) { id } }`, nil, &perk); err != nil {
		return nil, err
	}
	out.Benefits["license_keys"], out.Benefits["custom"] = lk.CreateBenefit.ID.String(), perk.CreateBenefit.ID.String()
	meter, err := storage.CreateMeter(ctx, db, org.ID, "API requests",
		storage.RawJSON(`{"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "api.request"}]}`),
		storage.RawJSON(`{"func": "count"}`))
	if err != nil {
		return nil, err
	}
	products := []struct {
		key, name string
		input     map[string]any
	}{
		{"one_time", "Desktop App", map[string]any{"prices": []any{map[string]any{"amountType": "fixed", "priceAmount": 4900}},
			"benefitIds": []any{lk.CreateBenefit.ID}}},
		{"recurring", "Pro Plan", map[string]any{"recurringInterval": "month", "trialInterval": "day", "trialIntervalCount": 14,
			"prices": []any{map[string]any{"amountType": "fixed", "priceAmount": 1500}}, "benefitIds": []any{lk.CreateBenefit.ID, perk.CreateBenefit.ID}}},
		{"seat_based", "Team Plan", map[string]any{"recurringInterval": "month",
			"prices": []any{map[string]any{"amountType": "seat_based", "seatTiers": map[string]any{"tiers": []any{
				map[string]any{"minSeats": 1, "maxSeats": nil, "pricePerSeat": 1000}}}}},
			"benefitIds": []any{perk.CreateBenefit.ID}}},
		{"metered", "API Usage", map[string]any{"recurringInterval": "month",
			"prices": []any{map[string]any{"amountType": "metered_unit", "unitAmount": "0.5", "meterId": meter.ID}}}},
	}
	productIDs := map[string]uuid.UUID{}
	for _, p := range products {
		p.input["name"] = p.name
		var res struct{ CreateProduct idOnly }
		if err := s.run(`mutation($in: ProductCreateInput!) { createProduct(input: $in) { id } }`, map[string]any{"in": p.input}, &res); err != nil {
			return nil, err
		}
		productIDs[p.key] = res.CreateProduct.ID
		out.Products[p.key] = res.CreateProduct.ID.String()
	}
	var discount struct{ CreateDiscount idOnly }
	if err := s.run(`mutation { createDiscount(input: {name: "Launch", type: percentage, basisPoints: 2000, duration: once, code: "LAUNCH20"}) { id } }`, nil, &discount); err != nil {
		return nil, err
	}
	out.Discounts["LAUNCH20"] = discount.CreateDiscount.ID.String()

	// Purchases through checkouts.
	buy := func(key, email, name string, product string, token string, extra map[string]any) (*purchase, error) {
		return checkoutAndConfirm(s, key, email, name, productIDs[product], token, extra)
	}
	address := map[string]any{"line1": "1 Demo Street", "city": "Berlin", "postalCode": "10115", "country": "DE"}
	steps := []struct {
		key, email, name, product, token string
		extra                            map[string]any
	}{
		{"alice", "alice@demo.test", "Alice", "one_time", payment.TokenVisa, map[string]any{"customerBillingName": "Alice GmbH", "customerBillingAddress": address}},
		{"bob", "bob@demo.test", "Bob", "recurring", payment.TokenVisa, map[string]any{"discountCode": "LAUNCH20", "allowTrial": false}},
		{"carol", "carol@demo.test", "Carol", "recurring", payment.TokenChargeCustomerFail, map[string]any{"allowTrial": false}},
		{"dave", "dave@demo.test", "Dave", "recurring", payment.TokenVisa, nil},
		{"erin", "erin@demo.test", "Erin", "seat_based", payment.TokenVisa, map[string]any{"seats": 3}},
		{"frank", "frank@demo.test", "Frank", "metered", payment.TokenVisa, nil},
	}
	bought := map[string]*purchase{}
	for _, st := range steps {
		p, err := buy(st.key, st.email, st.name, st.product, st.token, st.extra)
		if err != nil {
			return nil, fmt.Errorf("purchase of %s: %w", st.key, err)
		}
		bought[st.key] = p
		out.Customers[st.key] = p.CustomerID.String()
		out.Checkouts[st.key] = p.CheckoutID.String()
		if p.OrderID != uuid.Nil {
			out.Orders[st.key] = p.OrderID.String()
		}
		if p.SubscriptionID != nil {
			out.Subscriptions[st.key] = p.SubscriptionID.String()
		}
	}
	if err := demoStates(ctx, r, s, org.ID, bought, out); err != nil {
		return nil, err
	}
	return out, nil
}
