package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/rest/resttest"
	"till/storage"
)

// meteredWorld is an organization with one active subscription billing a fixed price and a
// capped metered price on an "API calls" meter, in a period that holds now, and usage of its
// customer (by id and by external id) counted.
type meteredWorld struct {
	s     *v1
	org   org
	buyer resolverstest.Customer
	meter *storage.Meter
	sub   *storage.Subscription
}

func newMeteredWorld(t *testing.T) meteredWorld {
	t.Helper()
	ctx := context.Background()
	s := newV1(t)
	w := meteredWorld{s: s, org: s.NewOrg(t, "subscriptions:read customer_sessions:write")}
	w.buyer = s.NewCustomer(t, w.org.ID, "ext-"+randomHex(4))
	var err error
	if w.meter, err = storage.CreateMeter(ctx, s.DB, w.org.ID, "API calls",
		storage.RawJSON(meteredFilter), storage.RawJSON(`{"func": "count"}`)); err != nil {
		t.Fatal(err)
	}
	p, prices, err := resolverstest.StoreProduct(ctx, s.DB, w.org.ID, storage.ProductWrite{Name: "Usage plan", Visibility: "public",
		RecurringInterval: ptr(storage.IntervalMonth), RecurringIntervalCount: ptr(1)}, []storage.ProductPriceWrite{
		{AmountType: "fixed", PriceAmount: ptr(int64(900))},
		{AmountType: "metered_unit", UnitAmount: ptr("12.5"), CapAmount: ptr(int64(10000)), MeterID: &w.meter.ID}})
	if err != nil {
		t.Fatal(err)
	}
	fixed, metered := prices[0], prices[1]
	now := time.Now().UTC()
	start, end := now.Add(-24*time.Hour), now.AddDate(0, 1, 0)
	if w.sub, err = storage.CreateSubscription(ctx, s.DB, w.org.ID, start, storage.SubscriptionWrite{CustomerID: w.buyer.ID,
		ProductID: p.ID, Status: "active", Amount: 900, Currency: "usd", RecurringInterval: "month",
		RecurringIntervalCount: 1, CurrentPeriodStart: start, CurrentPeriodEnd: end, CurrentMeterPeriodStart: &start,
		CurrentMeterPeriodEnd: &end, StartedAt: &start}); err != nil {
		t.Fatal(err)
	}
	if err := storage.SetSubscriptionPrices(ctx, s.DB, w.org.ID, w.sub.ID, []uuid.UUID{fixed.ID, metered.ID}); err != nil {
		t.Fatal(err)
	}
	s.Exec(t, `SELECT ensure_event_partitions(now() - interval '3 months', 6)`)
	for _, e := range []struct {
		customer *uuid.UUID
		external *string
		name     string
		at       time.Time
	}{
		{&w.buyer.ID, nil, "api_call", now.Add(-time.Hour)},
		{&w.buyer.ID, nil, "api_call", now.Add(-2 * time.Hour)},
		{nil, w.buyer.ExternalID, "api_call", now.Add(-3 * time.Hour)},
		{&w.buyer.ID, nil, "api_call", start.Add(-time.Hour)},       // before the period
		{&w.buyer.ID, nil, "page_view", now.Add(-time.Hour)},        // another meter's
		{nil, ptr("someone-else"), "api_call", now.Add(-time.Hour)}, // another customer's
	} {
		s.Exec(t, `INSERT INTO events (organization_id, name, customer_id, external_customer_id, "timestamp")
			VALUES ($1, $2, $3, $4, $5)`, w.org.ID, e.name, e.customer, e.external, e.at)
	}
	if n, err := s.Resolver.RefreshSubscriptionMeters(ctx, &w.org.ID, 0, 10); err != nil || n != 1 {
		t.Fatalf("refreshing meters: %d, %v", n, err)
	}
	return w
}

// meteredFilter counts the api_call events: a comparison and a group that every event meets,
// as the filter's rendering must spell both kinds of clause and each type of value.
const meteredFilter = `{"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "api_call"},
	{"conjunction": "or", "clauses": [{"property": "timestamp", "operator": "gt", "value": 0},
		{"property": "beta", "operator": "ne", "value": true}]}]}`

// meteredItem is the part of a subscription item these tests read.
type meteredItem struct {
	ID     uuid.UUID                    `json:"id"`
	Meters []map[string]json.RawMessage `json:"meters"`
}

// meterFigures are a rendered subscription meter's figures.
type meterFigures struct {
	ConsumedUnits float64   `json:"consumed_units"`
	CreditedUnits int64     `json:"credited_units"`
	Amount        int64     `json:"amount"`
	MeterID       uuid.UUID `json:"meter_id"`
}

func TestSubscriptionMetersRenderTheContract(t *testing.T) {
	t.Parallel()
	w := newMeteredWorld(t)
	subscriptionMeterKeys := []string{"amount", "consumed_units", "created_at", "credited_units", "id", "meter", "meter_id", "modified_at"}
	// 3 calls at 12.5 cents: 37.5, rounded half up.
	figures := meterFigures{ConsumedUnits: 3, CreditedUnits: 0, Amount: 38, MeterID: w.meter.ID}
	tests := []struct {
		name      string
		target    string
		schema    string // the contract's schema of the body
		token     func(t *testing.T) string
		meterKeys []string
	}{
		{"the organization's list renders the meter in full", "/v1/subscriptions/", "ListResource_Subscription_",
			func(*testing.T) string { return w.org.Token },
			[]string{"aggregation", "archived_at", "created_at", "custom_label", "custom_multiplier", "filter", "id",
				"metadata", "modified_at", "name", "organization_id", "unit"}},
		{"the portal shows the customer the meter's name only", "/v1/customer-portal/subscriptions/",
			"ListResource_CustomerSubscription_", func(t *testing.T) string { return w.s.NewCustomerSession(t, w.org.ID, w.buyer.ID) },
			[]string{"created_at", "id", "modified_at", "name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := serveMetered(t, w.s, call{target: tc.target, token: tc.token(t)}, tc.schema)
			want{status: http.StatusOK}.check(t, rec)
			var page struct{ Items []meteredItem }
			decodeJSON(t, rec.Body.Bytes(), &page)
			if len(page.Items) != 1 || page.Items[0].ID != w.sub.ID || len(page.Items[0].Meters) != 1 {
				t.Fatalf("items: %s", rec.Body)
			}
			m := page.Items[0].Meters[0]
			if diff := cmp.Diff(subscriptionMeterKeys, keysOf(t, mustJSON(t, m))); diff != "" {
				t.Errorf("SubscriptionMeter keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.meterKeys, keysOf(t, m["meter"])); diff != "" {
				t.Errorf("meter keys (-want +got):\n%s", diff)
			}
			if tc.meterKeys[0] == "aggregation" {
				var meter struct{ Filter, Aggregation json.RawMessage }
				decodeJSON(t, m["meter"], &meter)
				var filter bytes.Buffer
				if err := json.Compact(&filter, []byte(meteredFilter)); err != nil {
					t.Fatal(err)
				}
				if string(meter.Filter) != filter.String() || string(meter.Aggregation) != `{"func":"count"}` {
					t.Errorf("filter %s, aggregation %s; want %s and the count", meter.Filter, meter.Aggregation, filter.String())
				}
			}
			var got meterFigures
			decodeJSON(t, mustJSON(t, m), &got)
			if diff := cmp.Diff(figures, got); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
			var meter struct {
				ID   uuid.UUID `json:"id"`
				Name string    `json:"name"`
			}
			decodeJSON(t, m["meter"], &meter)
			if meter.ID != w.meter.ID || meter.Name != "API calls" {
				t.Errorf("meter = %+v", meter)
			}
		})
	}
}

// serveMetered sends a call whose answer holds a metered price through the shared
// contract check (which reads the lookahead in ProductPriceMeteredUnit's unit_amount
// pattern with resttest.ECMAPattern) and, on success, also validates the body against the
// named contract schema.
func serveMetered(t *testing.T, s *v1, c call, schema string) *httptest.ResponseRecorder {
	t.Helper()
	rec := s.do(t, c)
	if rec.Code != http.StatusOK {
		return rec
	}
	ref := resttest.Contract(t).Components.Schemas[schema]
	if ref == nil {
		t.Fatalf("no schema %s in the contract", schema)
	}
	var body any
	decodeJSON(t, rec.Body.Bytes(), &body)
	if err := ref.Value.VisitJSON(body, openapi3.MultiErrors(), openapi3.SetSchemaRegexCompiler(resttest.ECMAPattern)); err != nil {
		t.Errorf("%s does not conform to %s: %v\nbody: %s", c.target, schema, err, rec.Body)
	}
	return rec
}
