package resolvers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// subscriptionGraph selects every relation of a subscription, down to its product's.
const subscriptionGraph = `query($n: Int) { subscriptions(limit: $n) { items { id
	customer { id email } discount { __typename ... on DiscountPercentageOnceForeverDurationBase { id basisPoints } }
	product { id name prices { id } wirePrices { id } benefits { id }
		organization { id organizationFeatures { memberModelEnabled } } medias { id } attachedCustomFields { order } }
	prices { id } wirePrices { id } meters { id } pendingUpdate { id seats } } pagination { totalCount } } }`

// TestSubscriptionPagesCostConstantStatements proves the subscription list's relations are
// batched: a page of 100 costs the statements a page of 10 does.
//
// Not parallel, like TestNestedQueriesCostConstantStatements, so the count is not disturbed.
func TestSubscriptionPagesCostConstantStatements(t *testing.T) {
	const rows = 110
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedSubscriptions(t, db, org.ID, rows)

	requireConstantStatements(t, counter, func(n int) *resolverstest.Response {
		return s.Do(t, org.Token, subscriptionGraph, vars{"n": n})
	}, func(t *testing.T, data []byte, n int) {
		var out struct {
			Subscriptions struct {
				Items []struct {
					Product struct {
						Prices   []struct{ ID uuid.UUID }
						Benefits []struct{ ID uuid.UUID }
					}
					PendingUpdate *struct{ Seats int }
				}
				Pagination struct{ TotalCount int }
			}
		}
		mustUnmarshal(t, data, &out)
		if len(out.Subscriptions.Items) != n || out.Subscriptions.Pagination.TotalCount != rows {
			t.Fatalf("N=%d: got %d of %d", n, len(out.Subscriptions.Items), out.Subscriptions.Pagination.TotalCount)
		}
		for _, it := range out.Subscriptions.Items {
			if len(it.Product.Prices) != 2 || len(it.Product.Benefits) != 1 {
				t.Fatalf("N=%d: product relations %+v", n, it.Product)
			}
		}
	})
}

// seedSubscriptions stores n started subscriptions, each of its own customer and product
// (two prices, one benefit); every other one has a discount and every third a pending change.
func seedSubscriptions(tb testing.TB, db *sqlx.DB, orgID uuid.UUID, n int) {
	tb.Helper()
	ctx := context.Background()
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		b, err := storage.CreateBenefit(ctx, tx, orgID, storage.BenefitWrite{Type: "custom", Description: "Support", Visibility: "public",
			Properties: storage.RawJSON(`{"note": null}`)})
		if err != nil {
			return err
		}
		var discountID uuid.UUID
		if err := sqlx.GetContext(ctx, tx, &discountID, `INSERT INTO discounts (organization_id, name, type, basis_points,
			duration) VALUES ($1, 'Ten', 'percentage', 1000, 'forever') RETURNING id`, orgID); err != nil {
			return err
		}
		month := storage.IntervalMonth
		one := 1
		for i := range n {
			c, err := storage.CreateCustomer(ctx, tx, orgID, storage.CustomerWrite{Email: ptr(fmt.Sprintf("s%03d@example.com", i))})
			if err != nil {
				return err
			}
			productID, priceIDs, err := seedPricedProduct(ctx, tx, orgID, storage.ProductWrite{Name: fmt.Sprintf("Plan %03d", i),
				Visibility: "public", RecurringInterval: &month, RecurringIntervalCount: &one}, []uuid.UUID{b.ID})
			if err != nil {
				return err
			}
			started := base.Add(time.Duration(i) * time.Hour)
			w := storage.SubscriptionWrite{CustomerID: c.ID, ProductID: productID, Status: "active", Amount: 1000,
				Currency: "usd", RecurringInterval: "month", RecurringIntervalCount: 1, CurrentPeriodStart: started,
				CurrentPeriodEnd: started.AddDate(0, 1, 0), StartedAt: &started}
			if i%2 == 0 {
				w.DiscountID = &discountID
			}
			sub, err := storage.CreateSubscription(ctx, tx, orgID, started, w)
			if err != nil {
				return err
			}
			if err := storage.SetSubscriptionPrices(ctx, tx, orgID, sub.ID, priceIDs[:1]); err != nil {
				return err
			}
			if i%3 == 0 {
				seats := 2
				if _, err := storage.SchedulePendingUpdate(ctx, tx, started, storage.PendingSubscriptionUpdate{
					OrganizationID: orgID, SubscriptionID: sub.ID, Seats: &seats, AppliesAt: w.CurrentPeriodEnd}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("seeding subscriptions: %v", err)
	}
}
