package resolvers_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// TestNestedQueriesCostConstantStatements is the dataloader proof (DESIGN §2): a page of
// customers with their payment methods and organization, or of products with prices, benefits
// and organization, costs the same number of SQL statements for 10 rows as for 100. The
// statements are counted at the database/sql driver boundary around lib/pq, so everything the
// request sends to PostgreSQL is seen, the bearer-token lookup included.
//
// It is not parallel on purpose: parallel tests of the package wait until it is done, so the
// loaders' batching window is not disturbed by other tests competing for the CPU.
func TestNestedQueriesCostConstantStatements(t *testing.T) {
	const rows = 110
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedCatalog(t, db, org.ID, rows)

	t.Run("each selected relation costs exactly one statement and unselected ones none", func(t *testing.T) {
		cost := func(query string) int64 {
			counter.Reset()
			s.Query(t, org.Token, query, nil, nil)
			return counter.Snapshot().Statements()
		}
		bare := cost(`{ customers(limit: 100) { items { id } } }`)
		withPM := cost(`{ customers(limit: 100) { items { id paymentMethods { id } } } }`)
		withBoth := cost(`{ customers(limit: 100) { items { id paymentMethods { id } organization { id } } } }`)
		t.Logf("customers(limit: 100): %d statements bare, %d with paymentMethods, %d with organization too", bare, withPM, withBoth)
		if withPM != bare+1 || withBoth != bare+2 {
			t.Errorf("statements: bare %d, +paymentMethods %d, +organization %d; want +1 per relation", bare, withPM, withBoth)
		}
	})

	for _, tc := range []struct {
		name  string
		query string
		check func(t *testing.T, data []byte, n int)
	}{
		{
			name: "customers with payment methods and organization",
			query: `query($n: Int) { customers(limit: $n) { items { id paymentMethods { id isDefault }
				organization { id } } pagination { totalCount } } }`,
			check: func(t *testing.T, data []byte, n int) {
				var out struct {
					Customers struct {
						Items []struct {
							ID             uuid.UUID
							PaymentMethods []struct {
								ID        uuid.UUID
								IsDefault bool
							}
							Organization struct{ ID uuid.UUID }
						}
						Pagination struct{ TotalCount int }
					}
				}
				mustUnmarshal(t, data, &out)
				if len(out.Customers.Items) != n || out.Customers.Pagination.TotalCount != rows {
					t.Fatalf("got %d customers of %d, want %d of %d", len(out.Customers.Items), out.Customers.Pagination.TotalCount, n, rows)
				}
				for _, c := range out.Customers.Items {
					defaults := 0
					for _, pm := range c.PaymentMethods {
						if pm.IsDefault {
							defaults++
						}
					}
					if len(c.PaymentMethods) != 2 || defaults != 1 || c.Organization.ID != org.ID {
						t.Fatalf("customer %s: %d payment methods (%d default), organization %s", c.ID, len(c.PaymentMethods), defaults, c.Organization.ID)
					}
				}
			},
		},
		{
			name: "customers selected through an alias and a fragment",
			query: `query($n: Int) { customers(limit: $n) { page: items { ...C } pagination { totalCount } } }
				fragment C on Customer { id methods: paymentMethods { id isDefault } organization { id } }`,
			check: func(t *testing.T, data []byte, n int) {
				var out struct {
					Customers struct {
						Page []struct {
							Methods      []struct{ ID uuid.UUID }
							Organization struct{ ID uuid.UUID }
						}
					}
				}
				mustUnmarshal(t, data, &out)
				if len(out.Customers.Page) != n || len(out.Customers.Page[n-1].Methods) != 2 {
					t.Fatalf("got %d customers", len(out.Customers.Page))
				}
			},
		},
		{
			name: "products with prices, benefits and organization",
			query: `query($n: Int) { products(limit: $n) { items { id prices { id productId } benefits { id }
				organization { id } } pagination { totalCount } } }`,
			check: func(t *testing.T, data []byte, n int) {
				var out struct {
					Products struct {
						Items []struct {
							ID     uuid.UUID
							Prices []struct {
								ID        uuid.UUID
								ProductID uuid.UUID
							}
							Benefits     []struct{ ID uuid.UUID }
							Organization struct{ ID uuid.UUID }
						}
						Pagination struct{ TotalCount int }
					}
				}
				mustUnmarshal(t, data, &out)
				if len(out.Products.Items) != n || out.Products.Pagination.TotalCount != rows {
					t.Fatalf("got %d products of %d, want %d of %d", len(out.Products.Items), out.Products.Pagination.TotalCount, n, rows)
				}
				for _, p := range out.Products.Items {
					if len(p.Prices) != 2 || len(p.Benefits) != 2 || p.Organization.ID != org.ID ||
						p.Prices[0].ProductID != p.ID || p.Prices[1].ProductID != p.ID {
						t.Fatalf("product %s: %d prices, %d benefits, organization %s", p.ID, len(p.Prices), len(p.Benefits), p.Organization.ID)
					}
				}
			},
		},
	} {
		t.Run(tc.name+" cost the same statements for 10 and 100 rows", func(t *testing.T) {
			counts := requireConstantStatements(t, counter, func(n int) *resolverstest.Response {
				return s.Do(t, org.Token, tc.query, vars{"n": n})
			}, tc.check)
			if counts[100].Begins != 0 {
				t.Errorf("a read opened %d transactions", counts[100].Begins)
			}
		})
	}
}

// seedCatalog stores n customers with two payment methods each (the second the default) and
// n products with two prices and two benefits each, in one transaction.
func seedCatalog(tb testing.TB, db *sqlx.DB, orgID uuid.UUID, n int) {
	tb.Helper()
	ctx := context.Background()
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		for i := range n {
			c, err := storage.CreateCustomer(ctx, tx, orgID, storage.CustomerWrite{Email: ptr(fmt.Sprintf("c%03d@example.com", i))})
			if err != nil {
				return err
			}
			var last uuid.UUID
			for j := range 2 {
				pm, err := storage.CreatePaymentMethod(ctx, tx, orgID, c.ID, storage.PaymentMethodWrite{Processor: "stripe",
					ProcessorID: fmt.Sprintf("pm_%d_%d", i, j), Type: "card", Brand: ptr("visa"), Last4: ptr("4242"),
					ExpMonth: ptr(1), ExpYear: ptr(2031)})
				if err != nil {
					return err
				}
				last = pm.ID
			}
			if _, err := storage.UpdateCustomer(ctx, tx, []uuid.UUID{orgID}, c.ID, storage.CustomerUpdate{DefaultPaymentMethodID: storage.Set(last)}); err != nil {
				return err
			}

			var benefits []uuid.UUID
			for j := range 2 {
				b, err := storage.CreateBenefit(ctx, tx, orgID, storage.BenefitWrite{Type: "custom",
					Description: fmt.Sprintf("Benefit %03d-%d", i, j), Visibility: "public", Properties: storage.RawJSON(`{"note": null}`)})
				if err != nil {
					return err
				}
				benefits = append(benefits, b.ID)
			}
			if _, _, err := seedPricedProduct(ctx, tx, orgID, storage.ProductWrite{Name: fmt.Sprintf("Product %03d", i),
				Visibility: "public"}, benefits); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("seeding: %v", err)
	}
}

// seedPricedProduct stores a product with two fixed USD prices (1000 and 2000, in that
// order) and the given benefits: the product every statement-count seed lists. It returns
// the product's and the prices' ids.
func seedPricedProduct(ctx context.Context, tx *sqlx.Tx, orgID uuid.UUID, w storage.ProductWrite,
	benefitIDs []uuid.UUID) (uuid.UUID, []uuid.UUID, error) {
	p, stored, err := resolverstest.StoreProduct(ctx, tx, orgID, w, []storage.ProductPriceWrite{
		{AmountType: "fixed", PriceAmount: ptr(int64(1000))}, {AmountType: "fixed", PriceAmount: ptr(int64(2000))}}, benefitIDs...)
	if err != nil {
		return uuid.Nil, nil, err
	}
	prices := make([]uuid.UUID, len(stored))
	for i, pr := range stored {
		prices[i] = pr.ID
	}
	return p.ID, prices, nil
}

// requireConstantStatements is the measurement of every dataloader proof: it sends do's
// request for a page of 10 rows and of 100, three times each, lets check verify each answer,
// and fails when even the fewest statements a page of 100 took exceed the most a page of 10
// took. Runs of one size may differ by the reads a loader's cache saves: a record reached at
// two depths of the query (a checkout's selected product and the same product among its
// offered ones) is read by whichever depth asks first, and the other finds it cached. It
// returns the largest counts by page size for further checks.
func requireConstantStatements(t *testing.T, counter *resolverstest.Counter, do func(n int) *resolverstest.Response,
	check func(t *testing.T, data []byte, n int)) map[int]resolverstest.Counts {
	t.Helper()
	most, fewest := map[int]resolverstest.Counts{}, map[int]resolverstest.Counts{}
	for _, n := range []int{10, 100} {
		for run := range 3 {
			counter.Reset()
			res := do(n)
			got := counter.Snapshot()
			if len(res.Errors) > 0 {
				t.Fatalf("N=%d: %s", n, res.Body)
			}
			check(t, res.Data, n)
			t.Logf("N=%d run %d: %s", n, run+1, got)
			if got.Statements() > most[n].Statements() {
				most[n] = got
			}
			if run == 0 || got.Statements() < fewest[n].Statements() {
				fewest[n] = got
			}
		}
	}
	if fewest[100].Statements() > most[10].Statements() {
		t.Errorf("statements grow with the page size: N=10 at most %s, N=100 at least %s", most[10], fewest[100])
	}
	return most
}

func mustUnmarshal(tb testing.TB, data []byte, out any) {
	tb.Helper()
	if err := jsonUnmarshal(data, out); err != nil {
		tb.Fatalf("decoding %s: %v", data, err)
	}
}
