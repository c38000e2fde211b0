package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
)

// TestPricesReadTheSameEverywhere renders one product's prices of every amount type (but
// free, which the contract's price unions leave out, so no /v1 body may hold one) through
// the two renderings /v1 has: a subscription's (typed GraphQL selected by ProductPriceShape)
// and a checkout's (written as JSON by the checkout use cases). Clients see one price, so
// both must give the same bytes.
func TestPricesReadTheSameEverywhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newV1(t)
	o := s.NewOrg(t, "subscriptions:read checkouts:read")
	buyer := s.NewCustomer(t, o.ID, "")
	meter, err := storage.CreateMeter(ctx, s.DB, o.ID, "API calls",
		storage.RawJSON(`{"conjunction": "and", "clauses": []}`), storage.RawJSON(`{"func": "count"}`))
	if err != nil {
		t.Fatal(err)
	}
	p, stored, err := resolverstest.StoreProduct(ctx, s.DB, o.ID, storage.ProductWrite{Name: "Everything", Visibility: "public",
		RecurringInterval: ptr(storage.IntervalMonth), RecurringIntervalCount: ptr(1)}, []storage.ProductPriceWrite{
		{AmountType: "fixed", PriceAmount: ptr(int64(1500)), TaxBehavior: ptr("exclusive")},
		{AmountType: "custom", MinimumAmount: ptr(int64(500)), MaximumAmount: ptr(int64(5000)), PresetAmount: ptr(int64(900))},
		{AmountType: "seat_based", SeatTiers: storage.RawJSON(`{"seat_tier_type": "graduated", "tiers": [
			{"min_seats": 5, "max_seats": null, "price_per_seat": 600}, {"min_seats": 1, "max_seats": 4, "price_per_seat": 700}]}`)},
		{AmountType: "metered_unit", UnitAmount: ptr("0.25"), CapAmount: ptr(int64(10000)), MeterID: &meter.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	var priceIDs []uuid.UUID
	for _, pr := range stored {
		priceIDs = append(priceIDs, pr.ID)
	}
	now := time.Now().UTC()
	sub, err := storage.CreateSubscription(ctx, s.DB, o.ID, now, storage.SubscriptionWrite{CustomerID: buyer.ID,
		ProductID: p.ID, Status: "active", Amount: 1500, Currency: "usd", RecurringInterval: "month",
		RecurringIntervalCount: 1, CurrentPeriodStart: now, CurrentPeriodEnd: now.AddDate(0, 1, 0), StartedAt: &now})
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.SetSubscriptionPrices(ctx, s.DB, o.ID, sub.ID, priceIDs); err != nil {
		t.Fatal(err)
	}
	checkoutWorld{s: s}.checkout(t, o.ID, 0, []uuid.UUID{p.ID}, storage.CheckoutWrite{
		CheckoutUpdate: storage.CheckoutUpdate{ProductPriceID: storage.Set(priceIDs[0]), CustomerEmail: storage.Set(ptr("buyer@example.com")),
			Amount: storage.Set[int64](1500), NetAmount: storage.Set[int64](1500), TotalAmount: storage.Set[int64](1500),
			TaxAmount: storage.Set[int64](0)}})

	list := func(target string) map[string]json.RawMessage {
		t.Helper()
		rec := s.do(t, call{target: target, token: o.Token})
		want{status: http.StatusOK}.check(t, rec)
		var page struct{ Items []map[string]json.RawMessage }
		decodeJSON(t, rec.Body.Bytes(), &page)
		if len(page.Items) != 1 {
			t.Fatalf("%s: %s", target, rec.Body)
		}
		return page.Items[0]
	}
	prices := func(raw json.RawMessage) []json.RawMessage {
		t.Helper()
		var out []json.RawMessage
		decodeJSON(t, raw, &out)
		if len(out) != len(priceIDs) {
			t.Fatalf("%d prices: %s", len(out), raw)
		}
		return out
	}
	subscription, checkout := list("/v1/subscriptions/"), list("/v1/checkouts/")
	var subProduct, checkoutProduct struct{ Prices json.RawMessage }
	decodeJSON(t, subscription["product"], &subProduct)
	decodeJSON(t, checkout["product"], &checkoutProduct)
	fromCheckout := prices(checkoutProduct.Prices)
	for name, got := range map[string][]json.RawMessage{
		"a subscription's prices": prices(subscription["prices"]), "its product's prices": prices(subProduct.Prices),
	} {
		for i := range got {
			if string(got[i]) != string(fromCheckout[i]) {
				t.Errorf("%s: price %d reads\n%s\nwhere the checkout has\n%s", name, i, got[i], fromCheckout[i])
			}
		}
	}
}
