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

// TestBenefitProductsCostPinnedStatements pins what a page of benefits with a window of each
// one's products and the products' prices costs, the same for 10 benefits as for 100:
//  1. the organization token's lookup;
//  2. the benefits page with its total;
//  3. Benefit.products: a window of 3 products per benefit, each with its total, in one
//     statement (ProductWindowsByBenefits);
//  4. Product.prices: the prices of all those products (PricesByProducts).
//
// Not parallel, like the other statement-count tests: the count is of the whole pool.
func TestBenefitProductsCostPinnedStatements(t *testing.T) {
	const benefits, products = 110, 5
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	ctx := context.Background()
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		var ids []uuid.UUID
		for i := range benefits {
			b, err := storage.CreateBenefit(ctx, tx, org.ID, storage.BenefitWrite{Type: "custom",
				Description: fmt.Sprintf("Perk %03d", i), Visibility: "public", Properties: storage.RawJSON(`{"note": null}`)})
			if err != nil {
				return err
			}
			ids = append(ids, b.ID)
		}
		for i := range products {
			if _, _, err := seedPricedProduct(ctx, tx, org.ID, storage.ProductWrite{Name: fmt.Sprintf("Plan %d", i),
				Visibility: "public"}, ids); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	const query = `query($n: Int) { benefits(limit: $n, filter: {type: [custom]}) { items { id
		products(limit: 3, sorting: ["name"]) { items { id prices { id } } pagination { totalCount } } } } }`
	check := func(t *testing.T, data []byte, n int) {
		var out struct {
			Benefits struct {
				Items []struct {
					Products struct {
						Items      []struct{ Prices []struct{ ID uuid.UUID } }
						Pagination struct{ TotalCount int }
					}
				}
			}
		}
		mustUnmarshal(t, data, &out)
		if len(out.Benefits.Items) != n {
			t.Fatalf("%d benefits, want %d", len(out.Benefits.Items), n)
		}
		for i, b := range out.Benefits.Items {
			if len(b.Products.Items) != 3 || b.Products.Pagination.TotalCount != products {
				t.Fatalf("benefit %d: %d products of %d, want 3 of %d", i, len(b.Products.Items), b.Products.Pagination.TotalCount, products)
			}
			for _, p := range b.Products.Items {
				if len(p.Prices) != 2 {
					t.Fatalf("benefit %d: a product with %d prices, want 2", i, len(p.Prices))
				}
			}
		}
	}
	requirePinnedStatements(t, counter, s, org.Token, query, 4, check)
}

// requirePinnedStatements runs query for pages of 10 and 100 parents, three times each, and
// fails unless every run costs exactly want statements and no transaction.
func requirePinnedStatements(t *testing.T, counter *resolverstest.Counter, s *resolverstest.Server, token, query string,
	want int64, check func(t *testing.T, data []byte, n int)) {
	t.Helper()
	for _, n := range []int{10, 100} {
		for run := 1; run <= 3; run++ {
			counter.Reset()
			res := s.Do(t, token, query, vars{"n": n})
			got := counter.Snapshot()
			if len(res.Errors) > 0 {
				t.Fatalf("N=%d: %s", n, res.Body)
			}
			check(t, res.Data, n)
			if got.Statements() != want || got.Begins != 0 {
				t.Errorf("N=%d run %d: %s; want %d statements and no transaction", n, run, got, want)
			}
		}
	}
}

// TestCustomerMetersCostPinnedStatements pins what a page of customers with a window of each
// one's meter balances costs, the same for 10 customers as for 100:
//  1. the organization token's lookup;
//  2. the customers page with its total;
//  3. the organization's meters and 4. every customer's figures on them, windowed per
//     customer (CustomerMeterWindowsByCustomers); CustomerMeter.meter comes with the figures
//     and CustomerMeter.customer is the customer already read.
func TestCustomerMetersCostPinnedStatements(t *testing.T) {
	const customers, meters = 110, 3
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	s.Exec(t, `INSERT INTO customers (organization_id, email, external_id, created_at)
		SELECT $1, 'm' || i || '@example.com', 'ext-' || i, now() - i * interval '1 second' FROM generate_series(1, $2::int) i`,
		org.ID, customers)
	s.Exec(t, `INSERT INTO meters (organization_id, name, filter, aggregation)
		SELECT $1, 'Meter ' || i, jsonb_build_object('conjunction', 'and', 'clauses', jsonb_build_array(
			jsonb_build_object('property', 'name', 'operator', 'eq', 'value', 'e' || i))), '{"func": "count"}'
		FROM generate_series(1, $2::int) i`, org.ID, meters)
	// Each customer sends two events to every meter: one by id, one by external id.
	s.Exec(t, `INSERT INTO events (organization_id, name, customer_id, external_customer_id)
		SELECT c.organization_id, 'e' || i, CASE WHEN j = 1 THEN c.id END, CASE WHEN j = 2 THEN c.external_id END
		FROM customers c, generate_series(1, $2::int) i, generate_series(1, 2) j WHERE c.organization_id = $1`, org.ID, meters)
	const query = `query($n: Int) { customers(limit: $n) { items { id meters(limit: 2, sorting: ["meter_name"]) {
		items { id consumedUnits meter { name } customer { id } } pagination { totalCount } } } } }`
	check := func(t *testing.T, data []byte, n int) {
		var out struct {
			Customers struct {
				Items []struct {
					ID     uuid.UUID
					Meters struct {
						Items []struct {
							ConsumedUnits float64
							Meter         struct{ Name string }
							Customer      struct{ ID uuid.UUID }
						}
						Pagination struct{ TotalCount int }
					}
				}
			}
		}
		mustUnmarshal(t, data, &out)
		if len(out.Customers.Items) != n {
			t.Fatalf("%d customers, want %d", len(out.Customers.Items), n)
		}
		for i, c := range out.Customers.Items {
			m := c.Meters
			if len(m.Items) != 2 || m.Pagination.TotalCount != meters || m.Items[0].Meter.Name != "Meter 1" {
				t.Fatalf("customer %d: %d meters of %d (%+v), want 2 of %d", i, len(m.Items), m.Pagination.TotalCount, m.Items, meters)
			}
			for _, it := range m.Items {
				if it.ConsumedUnits != 2 || it.Customer.ID != c.ID {
					t.Fatalf("customer %d: %+v, want 2 units of its own", i, it)
				}
			}
		}
	}
	requirePinnedStatements(t, counter, s, org.Token, query, 4, check)
}
