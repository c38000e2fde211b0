package resolvers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
)

// subListWorld holds six started subscriptions of two customers over two products, one
// never-started subscription and one of another organization, with distinct start times,
// statuses and amounts, so every filter and sort has something to tell apart.
type subListWorld struct {
	s                      *resolverstest.Server
	org, other             resolverstest.Org
	alice, bob, carol      customer
	alpha, beta            product
	discount               uuid.UUID
	s1, s2, s3, s4, s5, s6 uuid.UUID
	incomplete, foreign    uuid.UUID
	base                   time.Time
}

func newSubListWorld(t *testing.T) *subListWorld {
	t.Helper()
	s := resolverstest.New(t)
	w := &subListWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes), other: s.NewOrg(t, resolverstest.AllScopes),
		base: time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)}
	w.alice = createCustomer(t, s, w.org.Token, vars{"email": "alice@example.com", "externalId": "alice-ext"})
	w.bob = createCustomer(t, s, w.org.Token, vars{"email": "bob@example.com", "externalId": "bob-ext"})
	w.carol = createCustomer(t, s, w.org.Token, vars{"email": "carol@example.com"})
	w.alpha = createProduct(t, s, w.org.Token, vars{"name": "Alpha monthly", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 1500}}})
	w.beta = createProduct(t, s, w.org.Token, vars{"name": "Beta yearly", "recurringInterval": "year",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 12000}}})
	s.Get(t, &w.discount, `INSERT INTO discounts (organization_id, name, type, basis_points, duration)
		VALUES ($1, 'Launch 10%', 'percentage', 1000, 'forever') RETURNING id`, w.org.ID)
	day := func(n int) time.Time { return w.base.Add(time.Duration(n) * 24 * time.Hour) }
	mk := func(c customer, p product, status storage.SubscriptionStatus, amount int64, started *time.Time, edit func(*storage.SubscriptionWrite)) uuid.UUID {
		sw := storage.SubscriptionWrite{CustomerID: c.ID, ProductID: p.ID, Status: status, Amount: amount, Currency: "usd",
			RecurringInterval: *p.RecurringInterval, RecurringIntervalCount: 1, CurrentPeriodStart: w.base,
			CurrentPeriodEnd: w.base.AddDate(0, 1, 0), StartedAt: started}
		if edit != nil {
			edit(&sw)
		}
		sub, err := storage.CreateSubscription(context.Background(), s.DB, w.org.ID, w.base, sw)
		if err != nil {
			t.Fatalf("inserting subscription: %v", err)
		}
		if err := storage.SetSubscriptionPrices(context.Background(), s.DB, w.org.ID, sub.ID, []uuid.UUID{p.Prices[0].ID}); err != nil {
			t.Fatal(err)
		}
		return sub.ID
	}
	w.s1 = mk(w.alice, w.alpha, "active", 1500, ptr(day(-5)), func(sw *storage.SubscriptionWrite) {
		sw.Metadata = storage.JSONMap{"tier": "gold"}
	})
	w.s2 = mk(w.bob, w.beta, "trialing", 12000, ptr(day(-4)), func(sw *storage.SubscriptionWrite) { sw.DiscountID = &w.discount })
	w.s3 = mk(w.alice, w.beta, "active", 6000, ptr(day(-3)), nil)
	s.Exec(t, `UPDATE subscriptions SET cancel_at_period_end = true, canceled_at = $2,
		customer_cancellation_reason = 'too_expensive' WHERE id = $1`, w.s3, day(-1))
	w.s4 = mk(w.bob, w.alpha, "past_due", 2000, ptr(day(-2)), nil)
	w.s5 = mk(w.alice, w.alpha, "canceled", 2500, ptr(day(-1)), nil)
	s.Exec(t, `UPDATE subscriptions SET canceled_at = $2, ended_at = $2 WHERE id = $1`, w.s5, day(-2))
	w.s6 = mk(w.bob, w.alpha, "unpaid", 3000, ptr(day(0)), nil)
	w.incomplete = mk(w.alice, w.alpha, "incomplete", 1500, nil, nil)
	foreignCustomer := s.NewCustomer(t, w.other.ID, "")
	foreignProduct := createProduct(t, s, w.other.Token, vars{"name": "Foreign plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 100}}})
	sub, err := storage.CreateSubscription(context.Background(), s.DB, w.other.ID, w.base, storage.SubscriptionWrite{
		CustomerID: foreignCustomer.ID, ProductID: foreignProduct.ID, Status: "active", Amount: 100, Currency: "usd",
		RecurringInterval: "month", RecurringIntervalCount: 1, CurrentPeriodStart: w.base,
		CurrentPeriodEnd: w.base.AddDate(0, 1, 0), StartedAt: ptr(day(1))})
	if err != nil {
		t.Fatal(err)
	}
	w.foreign = sub.ID
	return w
}

// list runs subscriptions(...) and returns the item ids and the total count.
func (w *subListWorld) list(t *testing.T, token string, args vars) ([]uuid.UUID, int) {
	t.Helper()
	var out struct {
		Subscriptions struct {
			Items      []struct{ ID uuid.UUID }
			Pagination struct{ TotalCount, MaxPage int }
		}
	}
	w.s.Query(t, token, `query($page: Int, $limit: Int, $sorting: [String!], $filter: SubscriptionFilter) {
		subscriptions(page: $page, limit: $limit, sorting: $sorting, filter: $filter) {
			items { id } pagination { totalCount maxPage } } }`, args, &out)
	return itemIDs(out.Subscriptions.Items), out.Subscriptions.Pagination.TotalCount
}

func TestListSubscriptions(t *testing.T) {
	t.Parallel()
	w := newSubListWorld(t)
	day := func(n int) string { return w.base.Add(time.Duration(n) * 24 * time.Hour).Format(time.RFC3339) }
	tests := []struct {
		name string
		args vars
		want []uuid.UUID
	}{
		{"by default the newest start comes first and never-started ones are hidden", vars{},
			[]uuid.UUID{w.s6, w.s5, w.s4, w.s3, w.s2, w.s1}},
		{"active true is trialing or active", vars{"filter": vars{"active": true}}, []uuid.UUID{w.s3, w.s2, w.s1}},
		{"active false is canceled or unpaid", vars{"filter": vars{"active": false}}, []uuid.UUID{w.s6, w.s5}},
		{"statuses are OR-ed", vars{"filter": vars{"status": []string{"past_due", "unpaid"}}}, []uuid.UUID{w.s6, w.s4}},
		{"by product", vars{"filter": vars{"productId": []uuid.UUID{w.beta.ID}}}, []uuid.UUID{w.s3, w.s2}},
		{"by customer", vars{"filter": vars{"customerId": []uuid.UUID{w.alice.ID}}}, []uuid.UUID{w.s5, w.s3, w.s1}},
		{"by external customer id", vars{"filter": vars{"externalCustomerId": []string{"bob-ext"}}}, []uuid.UUID{w.s6, w.s4, w.s2}},
		{"by discount", vars{"filter": vars{"discountId": []uuid.UUID{w.discount}}}, []uuid.UUID{w.s2}},
		{"by organization", vars{"filter": vars{"organizationId": []uuid.UUID{w.org.ID}}},
			[]uuid.UUID{w.s6, w.s5, w.s4, w.s3, w.s2, w.s1}},
		{"set to cancel", vars{"filter": vars{"cancelAtPeriodEnd": true}}, []uuid.UUID{w.s3}},
		{"by cancellation reason", vars{"filter": vars{"customerCancellationReason": []string{"too_expensive"}}}, []uuid.UUID{w.s3}},
		{"canceledAtAfter is inclusive", vars{"filter": vars{"canceledAtAfter": day(-1)}}, []uuid.UUID{w.s3}},
		{"canceledAtBefore is inclusive", vars{"filter": vars{"canceledAtBefore": day(-2)}}, []uuid.UUID{w.s5}},
		{"startedAfter is strict", vars{"filter": vars{"startedAfter": day(-1)}}, []uuid.UUID{w.s6}},
		{"startedBefore is strict", vars{"filter": vars{"startedBefore": day(-4)}}, []uuid.UUID{w.s1}},
		{"by metadata", vars{"filter": vars{"metadata": []vars{{"key": "tier", "values": []string{"gold", "silver"}}}}}, []uuid.UUID{w.s1}},
		{"status sorts by rank: trialing, active, active set to cancel, past_due, canceled, unpaid",
			vars{"sorting": []string{"status"}}, []uuid.UUID{w.s2, w.s1, w.s3, w.s4, w.s5, w.s6}},
		{"amount sorts by the monthly amount (a yearly 12000 is 1000 a month)",
			vars{"sorting": []string{"amount"}}, []uuid.UUID{w.s3, w.s2, w.s1, w.s4, w.s5, w.s6}},
		{"customer sorts by email", vars{"sorting": []string{"customer", "-started_at"}},
			[]uuid.UUID{w.s5, w.s3, w.s1, w.s6, w.s4, w.s2}},
		{"product sorts by name, descending", vars{"sorting": []string{"-product", "started_at"}},
			[]uuid.UUID{w.s2, w.s3, w.s1, w.s4, w.s5, w.s6}},
		{"discount sorts by name, subscriptions without one last", vars{"sorting": []string{"discount", "-started_at"}},
			[]uuid.UUID{w.s2, w.s6, w.s5, w.s4, w.s3, w.s1}},
		{"ended_at sorts by column, nulls last", vars{"sorting": []string{"ended_at", "started_at"}},
			[]uuid.UUID{w.s5, w.s1, w.s2, w.s3, w.s4, w.s6}},
		{"a page past the first", vars{"page": 2, "limit": 2}, []uuid.UUID{w.s4, w.s3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, total := w.list(t, w.org.Token, tc.args)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if _, paged := tc.args["page"]; !paged && total != len(tc.want) {
				t.Errorf("totalCount = %d, want %d", total, len(tc.want))
			}
		})
	}

	t.Run("an unknown sorting criterion is bad input", func(t *testing.T) {
		e := w.s.QueryError(t, w.org.Token, `{ subscriptions(sorting: ["nope"]) { items { id } } }`, nil)
		wantError(t, e, "BAD_USER_INPUT", "RequestValidationError", fieldErr{Type: "enum", Loc: []any{"query", "sorting"},
			Msg: "Invalid sorting criterion.", Input: "nope"})
	})

	t.Run("another organization's subscription is not found and never listed", func(t *testing.T) {
		e := w.s.QueryError(t, w.org.Token, `query($id: UUID!) { subscription(id: $id) { id } }`, vars{"id": w.foreign})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
		got, _ := w.list(t, w.other.Token, vars{})
		if diff := cmp.Diff([]uuid.UUID{w.foreign}, got); diff != "" {
			t.Errorf("the other organization's list (-want +got):\n%s", diff)
		}
	})

	t.Run("relations resolve: customer, product, discount variant, prices and their wire shapes", func(t *testing.T) {
		var out struct {
			Subscription struct {
				Customer struct{ Email string }
				Product  struct {
					Name       string
					WirePrices []wirePrice
				}
				Discount struct {
					Typename    string `json:"__typename"`
					BasisPoints int
				}
				Prices     []struct{ PriceAmount int }
				WirePrices []wirePrice
				Meters     []struct{ ID uuid.UUID }
			}
		}
		w.s.Query(t, w.org.Token, `query($id: UUID!) { subscription(id: $id) { customer { email }
			product { name wirePrices { `+wirePriceFields+` } } discount { __typename ... on DiscountPercentageOnceForeverDurationBase { basisPoints } }
			prices { priceAmount } wirePrices { `+wirePriceFields+` } meters { id } } }`, vars{"id": w.s2}, &out)
		got := out.Subscription
		if got.Customer.Email != "bob@example.com" || got.Product.Name != "Beta yearly" ||
			got.Discount.Typename != "DiscountPercentageOnceForeverDurationBase" || got.Discount.BasisPoints != 1000 ||
			len(got.Prices) != 1 || got.Prices[0].PriceAmount != 12000 || len(got.Meters) != 0 {
			t.Errorf("relations: %+v", got)
		}
		for _, p := range append(got.WirePrices, got.Product.WirePrices...) {
			if p.Typename != "ProductPriceFixed" || p.AmountType != "fixed" || p.PriceAmount == nil || *p.PriceAmount != 12000 {
				t.Errorf("a fixed price reads as %+v", p)
			}
		}
	})
}

func TestPortalSubscriptions(t *testing.T) {
	t.Parallel()
	w := newSubListWorld(t)
	alice := w.s.NewCustomerSession(t, w.org.ID, w.alice.ID)
	list := func(t *testing.T, token string, args vars) []uuid.UUID {
		t.Helper()
		var out struct {
			Me struct {
				Subscriptions struct{ Items []struct{ ID uuid.UUID } }
			}
		}
		w.s.Query(t, token, `query($sorting: [String!], $filter: PortalSubscriptionFilter) { me {
			subscriptions(sorting: $sorting, filter: $filter) { items { id } } } }`, args, &out)
		return itemIDs(out.Me.Subscriptions.Items)
	}
	for _, tc := range []struct {
		name string
		args vars
		want []uuid.UUID
	}{
		{"only the session customer's started subscriptions", vars{}, []uuid.UUID{w.s5, w.s3, w.s1}},
		{"active", vars{"filter": vars{"active": true}}, []uuid.UUID{w.s3, w.s1}},
		{"by product", vars{"filter": vars{"productId": []uuid.UUID{w.alpha.ID}}}, []uuid.UUID{w.s5, w.s1}},
		{"query matches the product name, wildcards escaped", vars{"filter": vars{"query": "beta"}}, []uuid.UUID{w.s3}},
		{"a % in the query is literal", vars{"filter": vars{"query": "%"}}, []uuid.UUID{}},
		{"status sorts as text", vars{"sorting": []string{"status", "-started_at"}}, []uuid.UUID{w.s3, w.s1, w.s5}},
		{"amount sorts raw", vars{"sorting": []string{"-amount"}}, []uuid.UUID{w.s3, w.s5, w.s1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, list(t, alice, tc.args)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("claimed seats list the subscriptions the customer or member holds a seat in", func(t *testing.T) {
		w.s.Exec(t, `INSERT INTO customer_seats (organization_id, subscription_id, status, customer_id, claimed_at)
			VALUES ($1, $2, 'claimed', $3, now()), ($1, $4, 'pending', $3, NULL)`, w.org.ID, w.s1, w.carol.ID, w.s3)
		carol := w.s.NewCustomerSession(t, w.org.ID, w.carol.ID)
		claimed := func(token string) []uuid.UUID {
			var out struct {
				Me struct {
					ClaimedSeatSubscriptions struct {
						Items      []struct{ ID uuid.UUID }
						Pagination struct{ TotalCount int }
					}
				}
			}
			w.s.Query(t, token, `{ me { claimedSeatSubscriptions { items { id } pagination { totalCount } } } }`, nil, &out)
			return itemIDs(out.Me.ClaimedSeatSubscriptions.Items)
		}
		if diff := cmp.Diff([]uuid.UUID{w.s1}, claimed(carol)); diff != "" {
			t.Errorf("carol's claimed seats (-want +got):\n%s", diff)
		}
		if got := claimed(alice); len(got) != 0 {
			t.Errorf("alice holds no seat but lists %v", got)
		}
		// A member of bob's team holding a claimed seat sees it through a member session.
		var memberID uuid.UUID
		w.s.Get(t, &memberID, `INSERT INTO members (organization_id, customer_id, email, role)
			VALUES ($1, $2, 'dev@example.com', 'member') RETURNING id`, w.org.ID, w.bob.ID)
		w.s.Exec(t, `INSERT INTO customer_seats (organization_id, subscription_id, status, customer_id, member_id, claimed_at)
			VALUES ($1, $2, 'claimed', $3, $4, now())`, w.org.ID, w.s4, w.bob.ID, memberID)
		token := w.s.NewMemberSession(t, w.org.ID, w.bob.ID, memberID)
		if diff := cmp.Diff([]uuid.UUID{w.s4}, claimed(token)); diff != "" {
			t.Errorf("the member's claimed seats (-want +got):\n%s", diff)
		}
	})

	t.Run("organization tokens have no portal", func(t *testing.T) {
		e := w.s.QueryError(t, w.org.Token, `{ me { subscriptions { items { id } } } }`, nil)
		wantError(t, e, "FORBIDDEN", "Unauthorized")
	})
}

// sortedStrings returns the strings sorted.
func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if strings.Compare(out[j], out[i]) < 0 {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// wirePriceFields selects what tests read of a ProductPriceVariant.
const wirePriceFields = `__typename amountType ... on ProductPriceFixed { priceAmount }`

// wirePrice is a ProductPriceVariant as wirePriceFields selects it.
type wirePrice struct {
	Typename    string `json:"__typename"`
	AmountType  string
	PriceAmount *int
}
