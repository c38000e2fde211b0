package resolvers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/rest"
	"till/storage"
	"till/storage/storagetest"
)

// TestCheckoutListStatements runs the persisted document of GET /v1/checkouts/ and proves a
// page of 100 costs the statements a page of 10 does.
func TestCheckoutListStatements(t *testing.T) {
	t.Parallel()
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	const rows = 120
	ckSeedCheckouts(t, db, org.ID, rows)
	docs, err := rest.LoadDocuments(rest.Operations())
	if err != nil {
		t.Fatal(err)
	}
	doc := docs["ListCheckouts"]
	requireConstantStatements(t, counter, func(n int) *resolverstest.Response {
		return s.Do(t, org.Token, doc, vars{"limit": n})
	}, func(t *testing.T, data []byte, n int) {
		var out struct {
			Checkouts struct {
				Items []struct {
					Products []struct {
						Prices   []any
						Benefits []any
					}
					Discount *struct{ ID uuid.UUID }
				}
			}
		}
		mustUnmarshal(t, data, &out)
		items := out.Checkouts.Items
		if len(items) != n || len(items[0].Products) != 2 || len(items[0].Products[0].Prices) != 2 ||
			len(items[0].Products[0].Benefits) != 1 || items[0].Discount == nil {
			t.Fatalf("N=%d: unexpected page %s", n, data[:min(len(data), 400)])
		}
	})
}

// ckSeedCheckouts stores n checkouts, each offering its own two products (two prices, one
// benefit each) with a discount, in one transaction.
func ckSeedCheckouts(tb testing.TB, db *sqlx.DB, orgID uuid.UUID, n int) {
	tb.Helper()
	ctx := context.Background()
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		d, err := storage.CreateDiscount(ctx, tx, orgID, storage.DiscountWrite{Name: "Seed", Type: "percentage",
			BasisPoints: ptr(1000), Duration: "once"})
		if err != nil {
			return err
		}
		for i := range n {
			var products []uuid.UUID
			var firstPrice uuid.UUID
			for j := range 2 {
				b, err := storage.CreateBenefit(ctx, tx, orgID, storage.BenefitWrite{Type: "custom",
					Description: fmt.Sprintf("Benefit %d-%d", i, j), Visibility: "public", Properties: storage.RawJSON(`{"note": null}`)})
				if err != nil {
					return err
				}
				p, prices, err := seedPricedProduct(ctx, tx, orgID, storage.ProductWrite{Name: fmt.Sprintf("Product %d-%d", i, j),
					Visibility: "public"}, []uuid.UUID{b.ID})
				if err != nil {
					return err
				}
				if j == 0 {
					firstPrice = prices[0]
				}
				products = append(products, p)
			}
			if _, err := storage.CreateCheckout(ctx, tx, storage.CheckoutWrite{OrganizationID: orgID,
				ClientSecret: fmt.Sprintf("till_c_seed_%d_%s", i, uuid.NewString()), ExpiresAt: time.Now().Add(time.Hour),
				CheckoutUpdate: storage.CheckoutUpdate{SuccessURL: storage.Set("https://example.com"),
					ProductID: storage.Set(products[0]), ProductPriceID: storage.Set(firstPrice), DiscountID: storage.Set(&d.ID),
					Amount: storage.Set[int64](1000), DiscountAmount: storage.Set[int64](100), NetAmount: storage.Set[int64](900),
					TotalAmount: storage.Set[int64](900)}},
				products, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("seeding checkouts: %v", err)
	}
}
