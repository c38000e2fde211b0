package storage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// subscriberInterval is what the subscribers stock reads of a subscription.
type subscriberInterval struct {
	Customer, Product uuid.UUID
	Started           time.Time  `db:"started_at"`
	Ended             *time.Time `db:"ended_at"`
}

// referenceSubscribers counts, subscription by subscription, the distinct customers holding
// an active subscription (of products and customers, all when nil) at the end of each
// period of points (the next period's start, or to for the last).
func referenceSubscribers(t *testing.T, db *sqlx.DB, org uuid.UUID, points []storage.MetricsPoint, to time.Time,
	products, customers []uuid.UUID) []int64 {
	t.Helper()
	out, err := countSubscribers(db, org, points, to, products, customers)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// countSubscribers is referenceSubscribers over q, for goroutines.
func countSubscribers(q sqlx.Queryer, org uuid.UUID, points []storage.MetricsPoint, to time.Time,
	products, customers []uuid.UUID) ([]int64, error) {
	var subs []subscriberInterval
	if err := sqlx.Select(q, &subs, `SELECT customer_id AS customer, product_id AS product, started_at, ended_at
		FROM subscriptions WHERE organization_id = $1 AND deleted_at IS NULL AND started_at IS NOT NULL`, org); err != nil {
		return nil, err
	}
	out := make([]int64, len(points))
	for i := range points {
		end := to
		if i+1 < len(points) {
			end = points[i+1].Timestamp
		}
		holders := map[uuid.UUID]bool{}
		for _, s := range subs {
			if (products != nil && !slices.Contains(products, s.Product)) ||
				(customers != nil && !slices.Contains(customers, s.Customer)) {
				continue
			}
			if s.Started.Before(end) && (s.Ended == nil || (!s.Ended.Before(end) && s.Ended.After(s.Started))) {
				holders[s.Customer] = true
			}
		}
		out[i] = int64(len(holders))
	}
	return out, nil
}

// subscribersWorld is an organization with three customers and three products.
type subscribersWorld struct {
	org       uuid.UUID
	customers [3]uuid.UUID
	products  [3]uuid.UUID
}

func newSubscribersWorld(t *testing.T, db *sqlx.DB) subscribersWorld {
	t.Helper()
	ctx := context.Background()
	s := newMetricsShop(t, db)
	w := subscribersWorld{org: s.org, customers: [3]uuid.UUID{s.customer}, products: [3]uuid.UUID{s.product}}
	for i := 1; i < 3; i++ {
		c, err := storage.CreateCustomer(ctx, db, s.org, storage.CustomerWrite{Type: storage.CustomerTypeIndividual,
			Email: ptr(fmt.Sprintf("c%d-%s@example.com", i, uuid.NewString()[:8]))})
		if err != nil {
			t.Fatal(err)
		}
		p, err := storage.CreateProduct(ctx, db, s.org, storage.ProductWrite{Name: fmt.Sprintf("Plan %d", i), Visibility: "public"})
		if err != nil {
			t.Fatal(err)
		}
		w.customers[i], w.products[i] = c.ID, p.ID
	}
	return w
}

// subscribe stores a monthly subscription of customer c to product p over [from, to) (open
// when to is nil).
func (w subscribersWorld) subscribe(t *testing.T, q sqlx.ExtContext, c, p int, from time.Time, to *time.Time) uuid.UUID {
	t.Helper()
	id, err := w.insert(q, c, p, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// insert is subscribe for goroutines, which may not end the test.
func (w subscribersWorld) insert(q sqlx.ExtContext, c, p int, from time.Time, to *time.Time) (uuid.UUID, error) {
	var id uuid.UUID
	err := sqlx.GetContext(context.Background(), q, &id, `INSERT INTO subscriptions (organization_id, customer_id,
			product_id, status, amount, currency, recurring_interval, current_period_start, current_period_end, started_at,
			ended_at)
		VALUES ($1, $2, $3, CASE WHEN $5::timestamptz IS NULL THEN 'active' ELSE 'canceled' END, 1000 + 100 * $6::int, 'usd',
			'month', $4, $4::timestamptz + interval '1 month', $4, $5) RETURNING id`,
		w.org, w.customers[c], w.products[p], from, to, c)
	return id, err
}

func TestMetricsSubscribersCountDistinctCustomers(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	ctx := context.Background()
	w := newSubscribersWorld(t, db)
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	at := func(d, h int, m ...int) *time.Time {
		t := day.AddDate(0, 0, d).Add(time.Duration(h) * time.Hour)
		if m != nil {
			t = t.Add(time.Duration(m[0]) * time.Minute)
		}
		return &t
	}
	// Customer 0 holds two overlapping subscriptions of product 0, then after a gap one of
	// product 1; customer 1 one of product 1 for a day; customer 2 one of product 0 and a
	// short one of product 2 inside it, and one that ends where another of its starts.
	w.subscribe(t, db, 0, 0, *at(0, 2), at(2, 5))
	w.subscribe(t, db, 0, 0, *at(1, 1), at(3, 0))
	moved := w.subscribe(t, db, 0, 1, *at(4, 3), nil)
	w.subscribe(t, db, 1, 1, *at(0, 10), at(1, 10))
	long := w.subscribe(t, db, 2, 0, *at(1, 0), nil)
	w.subscribe(t, db, 2, 2, *at(2, 0), at(2, 0, 30))
	w.subscribe(t, db, 2, 1, *at(-3, 0), at(1, 0))
	gone := w.subscribe(t, db, 1, 2, *at(3, 4, 15), at(5, 20))
	softGone := w.subscribe(t, db, 1, 0, *at(2, 6), nil)
	// Customer 1 holds products 0 and 1 together over the end of a day, its island of
	// product 1 ending within the windows.
	w.subscribe(t, db, 1, 0, *at(0, 12), at(2, 12))
	// Islands starting and ending within the half hour before a Kolkata midnight (18:30 UTC),
	// which a read cut from the rollups takes from the folded islands.
	w.subscribe(t, db, 1, 2, *at(2, 18, 10), at(5, 18, 20))
	w.subscribe(t, db, 0, 2, *at(6, 18), nil)
	// An island within St John's day of 23 hours (8 March), which a cut read takes from the
	// hourly rows.
	w.subscribe(t, db, 1, 1, *at(-2, 12), at(-1, 5))

	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	stJohns, err := time.LoadLocation("America/St_Johns")
	if err != nil {
		t.Fatal(err)
	}
	windows := []struct {
		name     string
		interval string
		from, to time.Time
		exact    bool
	}{
		{"days", "day", day.AddDate(0, 0, -1), day.AddDate(0, 0, 8), false},
		{"hours", "hour", day.Add(20 * time.Hour), day.AddDate(0, 0, 3).Add(8 * time.Hour), false},
		{"months", "month", time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), false},
		{"days in New York", "day", time.Date(2026, 3, 7, 0, 0, 0, 0, newYork), time.Date(2026, 3, 18, 0, 0, 0, 0, newYork), false},
		{"hours in Kolkata (exact)", "hour", time.Date(2026, 3, 12, 0, 0, 0, 0, kolkata), time.Date(2026, 3, 13, 12, 0, 0, 0, kolkata), true},
		{"days in Kolkata (cut from the rollups)", "day", time.Date(2026, 3, 8, 0, 0, 0, 0, kolkata), time.Date(2026, 3, 17, 0, 0, 0, 0, kolkata), true},
		{"days in St John's across its change (cut)", "day", time.Date(2026, 3, 6, 0, 0, 0, 0, stJohns), time.Date(2026, 3, 17, 0, 0, 0, 0, stJohns), true},
	}
	filters := []struct {
		name                string
		products, customers []int
	}{
		{"all products", nil, nil},
		{"one product", []int{0}, nil},
		{"another product", []int{1}, nil},
		{"two products", []int{0, 1}, nil},
		{"every product holding subscriptions", []int{0, 1, 2}, nil},
		{"one customer", nil, []int{0}},
		{"one customer of one product", []int{1}, []int{2}},
	}
	check := func(t *testing.T, stage string) {
		t.Helper()
		for _, win := range windows {
			zone := win.from.Location().String()
			for _, fl := range filters {
				f := storage.MetricsFilter{Orgs: []uuid.UUID{w.org}, From: win.from, To: win.to, Interval: win.interval,
					Zone: zone, Exact: win.exact, Columns: []string{"subscribers"}}
				for _, p := range fl.products {
					f.Products = append(f.Products, w.products[p])
				}
				for _, c := range fl.customers {
					f.Customers = append(f.Customers, w.customers[c])
				}
				points, err := storage.Metrics(ctx, db, f)
				if err != nil {
					t.Fatalf("%s, %s: %v", win.name, fl.name, err)
				}
				got := subscribersOf(points)
				want := referenceSubscribers(t, db, w.org, points, win.to, f.Products, f.Customers)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: %s, %s (-reference +got):\n%s", stage, win.name, fl.name, diff)
				}
			}
		}
	}
	// checkAll checks the series before and after a fold, and after a rebuild.
	checkAll := func(t *testing.T) {
		t.Helper()
		var queued int
		if err := db.Get(&queued, `SELECT count(*) FROM metric_subscriber_queue WHERE organization_id = $1`, w.org); err != nil {
			t.Fatal(err)
		}
		if queued == 0 {
			t.Fatal("nothing queued: the reads would not exercise the queued customers")
		}
		check(t, "unfolded")
		if _, err := storage.FoldMetrics(ctx, db); err != nil {
			t.Fatal(err)
		}
		check(t, "folded")
		folded := subscriberRollups(t, db, w.org)
		if _, err := db.Exec(`SELECT metric_rebuild($1)`, w.org); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(subscriberRollups(t, db, w.org), folded); diff != "" {
			t.Errorf("folded subscribers differ from a rebuild (-rebuild +folded):\n%s", diff)
		}
		check(t, "rebuilt")
	}

	exec := func(query string, args ...any) func(t *testing.T) {
		return func(t *testing.T) {
			if _, err := db.Exec(query, args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"overlapping, gapped and touching subscriptions count their customers once", func(*testing.T) {}},
		{"a cancellation ends a customer's island", exec(`UPDATE subscriptions SET ended_at = $2, status = 'canceled'
			WHERE id = $1`, long, at(3, 7))},
		{"a subscription moved to another customer moves its island", exec(`UPDATE subscriptions SET customer_id = $2
			WHERE id = $1`, moved, w.customers[1])},
		{"a subscription moved to another product moves its island", exec(`UPDATE subscriptions SET product_id = $2
			WHERE id = $1`, moved, w.products[2])},
		{"a deleted subscription counts nowhere", exec(`DELETE FROM subscriptions WHERE id = $1`, gone)},
		{"a soft-deleted subscription counts nowhere", exec(`UPDATE subscriptions SET deleted_at = now() WHERE id = $1`, softGone)},
		{"a new subscription joins two islands", func(t *testing.T) { w.subscribe(t, db, 0, 0, *at(2, 0), at(5, 0)) }},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.change(t)
			checkAll(t)
		})
	}
}

// subscriberRollups reads an organization's subscriber rollups, hourly and daily, leaving out
// the keys where they are zero.
func subscriberRollups(t *testing.T, db *sqlx.DB, org uuid.UUID) []string {
	t.Helper()
	var rows []string
	if err := db.Select(&rows, `SELECT format('hour %s %s %s', hour, product_id, subscribers) FROM metric_subscription_deltas
			WHERE organization_id = $1 AND subscribers <> 0
		UNION ALL SELECT format('day %s %s %s %s', align, day, product_id, subscribers) FROM metric_subscription_days
			WHERE organization_id = $1 AND subscribers <> 0
		ORDER BY 1`, org); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no subscriber rollups")
	}
	return rows
}

func subscribersOf(points []storage.MetricsPoint) []int64 {
	out := make([]int64, len(points))
	for i, p := range points {
		out[i] = p.Subscribers
	}
	return out
}
