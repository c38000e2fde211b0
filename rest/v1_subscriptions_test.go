package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
)

// subscriptionWorld is an organization with three started subscriptions (a oldest, c newest)
// of two customers over a fixed, a seat-based and a pay-what-you-want product, with both
// discount kinds, a pending change and a claimed seat, plus one never-started subscription.
// Rows are written through storage, as the purchase flow would.
type subscriptionWorld struct {
	s                   *v1
	org                 org
	alice, bob, carol   resolverstest.Customer // alice has external id ext-alice
	plan, seats, custom *storage.Product
	percent, fixed      *storage.Discount
	a, b, c, incomplete *storage.Subscription
	base                time.Time
}

func newSubscriptionWorld(t *testing.T, s *v1) subscriptionWorld {
	t.Helper()
	ctx := context.Background()
	w := subscriptionWorld{s: s, org: s.NewOrg(t, "subscriptions:read customer_sessions:write"),
		base: time.Date(2030, 3, 1, 10, 0, 0, 0, time.UTC)}
	w.alice, w.bob, w.carol = s.NewCustomer(t, w.org.ID, "ext-alice"), s.NewCustomer(t, w.org.ID, ""), s.NewCustomer(t, w.org.ID, "")
	benefit, err := storage.CreateBenefit(ctx, s.DB, w.org.ID, storage.BenefitWrite{Type: "custom", Description: "Support",
		Visibility: "public", Properties: storage.RawJSON(`{"note": null}`)})
	if err != nil {
		t.Fatal(err)
	}
	product := func(name string, price storage.ProductPriceWrite) (*storage.Product, *storage.ProductPrice) {
		p, prices, err := resolverstest.StoreProduct(ctx, s.DB, w.org.ID, storage.ProductWrite{Name: name, Visibility: "public",
			RecurringInterval: ptr(storage.IntervalMonth), RecurringIntervalCount: ptr(1)}, []storage.ProductPriceWrite{price}, benefit.ID)
		if err != nil {
			t.Fatal(err)
		}
		return p, prices[0]
	}
	var planPrice, seatPrice, customPrice *storage.ProductPrice
	w.plan, planPrice = product("Pro plan", storage.ProductPriceWrite{AmountType: "fixed", PriceAmount: ptr(int64(1500))})
	w.seats, seatPrice = product("Team seats", storage.ProductPriceWrite{AmountType: "seat_based",
		SeatTiers: storage.RawJSON(`{"tiers": [{"min_seats": 1, "max_seats": null, "price_per_seat": 1000}]}`)})
	w.custom, customPrice = product("Patron", storage.ProductPriceWrite{AmountType: "custom", MinimumAmount: ptr(int64(500)),
		PresetAmount: ptr(int64(900))})
	if w.percent, err = storage.CreateDiscount(ctx, s.DB, w.org.ID, storage.DiscountWrite{Name: "Ten off",
		Type: "percentage", BasisPoints: ptr(1000), Duration: "forever"}); err != nil {
		t.Fatal(err)
	}
	if w.fixed, err = storage.CreateDiscount(ctx, s.DB, w.org.ID, storage.DiscountWrite{Name: "Five off",
		Type: "fixed", Amount: ptr(int64(500)), Currency: ptr("usd"), Duration: "once"}); err != nil {
		t.Fatal(err)
	}
	mk := func(c resolverstest.Customer, p *storage.Product, pr *storage.ProductPrice, status storage.SubscriptionStatus, amount int64,
		started *time.Time, edit func(*storage.SubscriptionWrite)) *storage.Subscription {
		sw := storage.SubscriptionWrite{CustomerID: c.ID, ProductID: p.ID, Status: status, Amount: amount, Currency: "usd",
			RecurringInterval: "month", RecurringIntervalCount: 1, CurrentPeriodStart: w.base,
			CurrentPeriodEnd: w.base.AddDate(0, 1, 0), StartedAt: started}
		if edit != nil {
			edit(&sw)
		}
		sub, err := storage.CreateSubscription(ctx, s.DB, w.org.ID, w.base, sw)
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.SetSubscriptionPrices(ctx, s.DB, w.org.ID, sub.ID, []uuid.UUID{pr.ID}); err != nil {
			t.Fatal(err)
		}
		return sub
	}
	w.a = mk(w.alice, w.plan, planPrice, "active", 1500, ptr(w.base.Add(-3*time.Hour)), func(sw *storage.SubscriptionWrite) {
		sw.DiscountID, sw.Metadata = &w.percent.ID, storage.JSONMap{"tier": "gold"}
	})
	w.b = mk(w.bob, w.seats, seatPrice, "trialing", 3000, ptr(w.base.Add(-2*time.Hour)), func(sw *storage.SubscriptionWrite) {
		sw.DiscountID, sw.Seats = &w.fixed.ID, ptr(3)
		sw.TrialStart, sw.TrialEnd = &w.base, ptr(w.base.AddDate(0, 0, 14))
	})
	w.c = mk(w.alice, w.custom, customPrice, "canceled", 900, ptr(w.base.Add(-time.Hour)), nil)
	s.Exec(t, `UPDATE subscriptions SET canceled_at = $2, ended_at = $2, ends_at = $2,
		customer_cancellation_reason = 'unused' WHERE id = $1`, w.c.ID, w.base)
	w.incomplete = mk(w.alice, w.plan, planPrice, "incomplete", 1500, nil, nil)
	if _, err := storage.SchedulePendingUpdate(ctx, s.DB, w.base, storage.PendingSubscriptionUpdate{OrganizationID: w.org.ID,
		SubscriptionID: w.a.ID, ProductID: &w.custom.ID, AppliesAt: w.base.AddDate(0, 1, 0)}); err != nil {
		t.Fatal(err)
	}
	s.Exec(t, `INSERT INTO customer_seats (organization_id, subscription_id, status, customer_id, claimed_at)
		VALUES ($1, $2, 'claimed', $3, now())`, w.org.ID, w.b.ID, w.carol.ID)
	return w
}

// subscriptionPage is a list body: the item ids and the raw items.
type subscriptionPage struct {
	Items []struct {
		ID uuid.UUID `json:"id"`
	} `json:"items"`
	Pagination struct {
		TotalCount int `json:"total_count"`
		MaxPage    int `json:"max_page"`
	} `json:"pagination"`
}

func subscriptionIDs(t *testing.T, body []byte) ([]uuid.UUID, subscriptionPage) {
	t.Helper()
	var p subscriptionPage
	decodeJSON(t, body, &p)
	ids := []uuid.UUID{}
	for _, it := range p.Items {
		ids = append(ids, it.ID)
	}
	return ids, p
}

func TestListSubscriptionsServesTheContract(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	w := newSubscriptionWorld(t, s)
	q := url.QueryEscape
	tests := []struct {
		name   string
		target string
		token  string
		want   want
		ids    []uuid.UUID
	}{
		{"the default order is newest start first; never-started subscriptions are hidden", "/v1/subscriptions/", "",
			want{status: 200}, []uuid.UUID{w.c.ID, w.b.ID, w.a.ID}},
		{"status repeats", "/v1/subscriptions/?status=active&status=trialing", "", want{status: 200}, []uuid.UUID{w.b.ID, w.a.ID}},
		{"active=false is canceled or unpaid", "/v1/subscriptions/?active=false", "", want{status: 200}, []uuid.UUID{w.c.ID}},
		{"metadata filters", "/v1/subscriptions/?metadata[tier]=gold", "", want{status: 200}, []uuid.UUID{w.a.ID}},
		{"external customer id", "/v1/subscriptions/?external_customer_id=ext-alice", "", want{status: 200},
			[]uuid.UUID{w.c.ID, w.a.ID}},
		{"started_after is strict", "/v1/subscriptions/?started_after=" + q(w.a.StartedAt.Format(time.RFC3339Nano)), "",
			want{status: 200}, []uuid.UUID{w.c.ID, w.b.ID}},
		{"canceled_at_before is inclusive", "/v1/subscriptions/?canceled_at_before=" + q(w.base.Format(time.RFC3339)), "",
			want{status: 200}, []uuid.UUID{w.c.ID}},
		{"cancellation reason", "/v1/subscriptions/?customer_cancellation_reason=unused", "", want{status: 200}, []uuid.UUID{w.c.ID}},
		{"discount", "/v1/subscriptions/?discount_id=" + w.fixed.ID.String(), "", want{status: 200}, []uuid.UUID{w.b.ID}},
		{"sorting by amount, descending", "/v1/subscriptions/?sorting=-amount", "", want{status: 200},
			[]uuid.UUID{w.b.ID, w.a.ID, w.c.ID}},
		{"sorting by status rank", "/v1/subscriptions/?sorting=status", "", want{status: 200},
			[]uuid.UUID{w.b.ID, w.a.ID, w.c.ID}},
		{"a second page", "/v1/subscriptions/?limit=2&page=2", "", want{status: 200}, []uuid.UUID{w.a.ID}},
		{"a limit above 100 is clamped", "/v1/subscriptions/?limit=1000", "", want{status: 200,
			has: []string{`"pagination":{"total_count":3,"max_page":1}`}}, []uuid.UUID{w.c.ID, w.b.ID, w.a.ID}},
		{"an unknown status is a 422", "/v1/subscriptions/?status=gone", "", validation(item{Type: "enum",
			Loc: []any{"query", "status", "str-enum[SubscriptionStatus]"}}, item{Type: "enum",
			Loc: []any{"query", "status", sequenceTag("str-enum[SubscriptionStatus]"), 0}}), nil},
		{"an unknown sorting is a 422", "/v1/subscriptions/?sorting=name", "", validation(item{Type: "enum",
			Loc: []any{"query", "sorting", 0}}), nil},
		{"a malformed date is a 422", "/v1/subscriptions/?started_before=yesterday", "", validation(item{Type: "datetime_from_date_parsing",
			Loc: []any{"query", "started_before"}}), nil},
		{"without a token it is 401", "/v1/subscriptions/", "none", unauthorized(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			token := w.org.Token
			switch tc.token {
			case "none":
				token = ""
			case "":
			default:
				token = tc.token
			}
			rec := s.do(t, call{target: tc.target, token: token})
			tc.want.check(t, rec)
			if tc.ids != nil {
				got, _ := subscriptionIDs(t, rec.Body.Bytes())
				if diff := cmp.Diff(tc.ids, got); diff != "" {
					t.Errorf("ids (-want +got):\n%s", diff)
				}
			}
		})
	}

	t.Run("a token without a subscriptions scope is insufficient_scope", func(t *testing.T) {
		tok := s.NewToken(t, w.org.ID, "customers:read")
		insufficientScope("subscriptions:read subscriptions:write").check(t, s.do(t, call{target: "/v1/subscriptions/", token: tok}))
	})

	t.Run("items carry exactly the Subscription fields with the union shapes of prices and discounts", func(t *testing.T) {
		rec := s.do(t, call{target: "/v1/subscriptions/?sorting=started_at", token: w.org.Token})
		want{status: 200}.check(t, rec)
		var body struct{ Items []map[string]json.RawMessage }
		decodeJSON(t, rec.Body.Bytes(), &body)
		a, b := body.Items[0], body.Items[1]
		if diff := cmp.Diff(subscriptionKeys, keysOf(t, mustJSON(t, a))); diff != "" {
			t.Errorf("Subscription keys (-want +got):\n%s", diff)
		}
		for name, pair := range map[string]struct {
			raw  json.RawMessage
			want []string
		}{
			"a fixed price":         {firstOf(t, a["prices"]), priceKeys("price_amount")},
			"a seat-based price":    {firstOf(t, b["prices"]), priceKeys("seat_tiers")},
			"a percentage discount": {a["discount"], discountKeys("basis_points")},
			"a fixed discount":      {b["discount"], discountKeys("amount", "amounts", "currency")},
			"the pending update":    {a["pending_update"], []string{"applies_at", "created_at", "id", "modified_at", "product_id", "seats"}},
		} {
			if diff := cmp.Diff(pair.want, keysOf(t, pair.raw)); diff != "" {
				t.Errorf("%s keys (-want +got):\n%s", name, diff)
			}
		}
		var seatTiers struct {
			SeatTiers json.RawMessage `json:"seat_tiers"`
		}
		decodeJSON(t, firstOf(t, b["prices"]), &seatTiers)
		if got, want := string(seatTiers.SeatTiers), `{"seat_tier_type":"volume","tiers":[{"min_seats":1,"max_seats":null,"price_per_seat":1000}],"minimum_seats":1,"maximum_seats":null}`; got != want {
			t.Errorf("seat_tiers = %s, want %s", got, want)
		}
		if got := string(b["discount"]); !strings.Contains(got, `"amounts":{"usd":500}`) {
			t.Errorf("fixed discount %s lacks amounts", got)
		}
	})

	t.Run("another organization sees none of them", func(t *testing.T) {
		other := s.NewOrg(t, "subscriptions:read")
		rec := s.do(t, call{target: "/v1/subscriptions/", token: other.Token})
		want{status: 200, body: `{"items":[],"pagination":{"total_count":0,"max_page":0}}`}.check(t, rec)
	})
}

func TestPortalSubscriptionsServeTheContract(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	w := newSubscriptionWorld(t, s)
	alice := s.NewCustomerSession(t, w.org.ID, w.alice.ID)
	carol := s.NewCustomerSession(t, w.org.ID, w.carol.ID)
	tests := []struct {
		name   string
		target string
		token  string
		want   want
		ids    []uuid.UUID
	}{
		{"the session customer's started subscriptions", "/v1/customer-portal/subscriptions/", alice, want{status: 200},
			[]uuid.UUID{w.c.ID, w.a.ID}},
		{"active", "/v1/customer-portal/subscriptions/?active=true", alice, want{status: 200}, []uuid.UUID{w.a.ID}},
		{"query matches the product name", "/v1/customer-portal/subscriptions/?query=patr", alice, want{status: 200},
			[]uuid.UUID{w.c.ID}},
		{"product_id", "/v1/customer-portal/subscriptions/?product_id=" + w.plan.ID.String(), alice, want{status: 200},
			[]uuid.UUID{w.a.ID}},
		{"sorting by product", "/v1/customer-portal/subscriptions/?sorting=-product", alice, want{status: 200},
			[]uuid.UUID{w.a.ID, w.c.ID}},
		{"sorting by organization", "/v1/customer-portal/subscriptions/?sorting=organization&sorting=started_at", alice,
			want{status: 200}, []uuid.UUID{w.a.ID, w.c.ID}},
		{"an unknown portal sorting is a 422", "/v1/customer-portal/subscriptions/?sorting=customer", alice,
			validation(item{Type: "enum", Loc: []any{"query", "sorting", 0}}), nil},
		{"organization tokens are downgraded to anonymous", "/v1/customer-portal/subscriptions/", w.org.Token, unauthorized(), nil},
		{"a claimed seat lists its subscription", "/v1/customer-portal/seats/subscriptions", carol, want{status: 200},
			[]uuid.UUID{w.b.ID}},
		{"no claimed seat, no subscription", "/v1/customer-portal/seats/subscriptions", alice,
			want{status: 200, body: `{"items":[],"pagination":{"total_count":0,"max_page":0}}`}, nil},
		{"the seats list has no trailing slash", "/v1/customer-portal/seats/subscriptions/", carol,
			want{status: http.StatusTemporaryRedirect}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := s.do(t, call{target: tc.target, token: tc.token})
			tc.want.check(t, rec)
			if tc.ids != nil {
				got, _ := subscriptionIDs(t, rec.Body.Bytes())
				if diff := cmp.Diff(tc.ids, got); diff != "" {
					t.Errorf("ids (-want +got):\n%s", diff)
				}
			}
		})
	}

	t.Run("items carry exactly the CustomerSubscription fields and the portal's organization", func(t *testing.T) {
		rec := s.do(t, call{target: "/v1/customer-portal/subscriptions/", token: alice})
		var body struct{ Items []map[string]json.RawMessage }
		decodeJSON(t, rec.Body.Bytes(), &body)
		item := body.Items[0]
		want := slices.DeleteFunc(slices.Clone(subscriptionKeys), func(k string) bool {
			return k == "metadata" || k == "custom_field_data" || k == "customer" || k == "discount"
		})
		if diff := cmp.Diff(want, keysOf(t, mustJSON(t, item))); diff != "" {
			t.Errorf("CustomerSubscription keys (-want +got):\n%s", diff)
		}
		var product struct {
			Organization struct {
				OrganizationFeatures json.RawMessage `json:"organization_features"`
			} `json:"organization"`
		}
		decodeJSON(t, item["product"], &product)
		if got := string(product.Organization.OrganizationFeatures); got != `{"member_model_enabled":false,"checkout_localization_enabled":false}` {
			t.Errorf("organization_features = %s", got)
		}
	})
}

// subscriptionKeys are the Subscription schema's fields, sorted.
var subscriptionKeys = []string{"amount", "cancel_at_period_end", "canceled_at", "checkout_id", "created_at",
	"currency", "current_meter_period_end", "current_meter_period_start", "current_period_end", "current_period_start",
	"custom_field_data", "customer", "customer_cancellation_comment", "customer_cancellation_reason", "customer_id",
	"discount", "discount_id", "ended_at", "ends_at", "id", "metadata", "meters", "modified_at", "past_due_at",
	"pause_at_period_end", "paused_at", "pending_update", "prices", "product", "product_id", "recurring_interval",
	"recurring_interval_count", "resumes_at", "seats", "started_at", "status", "trial_end", "trial_start"}

// priceKeys are a price variant's fields: the common ones plus its own, sorted.
func priceKeys(own ...string) []string {
	keys := append([]string{"amount_type", "created_at", "id", "is_archived", "modified_at", "price_currency",
		"product_id", "source", "tax_behavior"}, own...)
	slices.Sort(keys)
	return keys
}

// discountKeys are a discount variant's fields: the common ones plus its own, sorted.
func discountKeys(own ...string) []string {
	keys := append([]string{"code", "created_at", "duration", "ends_at", "id", "max_redemptions",
		"max_redemptions_per_customer", "metadata", "modified_at", "name", "organization_id", "redemptions_count",
		"starts_at", "type"}, own...)
	slices.Sort(keys)
	return keys
}

// firstOf returns the first element of a JSON array.
func firstOf(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var list []json.RawMessage
	decodeJSON(t, raw, &list)
	if len(list) == 0 {
		t.Fatalf("empty list %s", raw)
	}
	return list[0]
}

// mustJSON encodes a value.
func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sequenceTag is the loc segment of the list half of a MultipleQueryFilter union.
func sequenceTag(item string) string {
	return "json-or-python[json=list[" + item + "],python=chain[is-instance[Sequence],function-wrap[sequence_validator()]]]"
}
