package storage_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"till/storage"
	"till/storage/storagetest"
)

// prefetchFixture holds rows of every record type a prefetch carries, together setting and
// leaving NULL every nullable column (prefetchCoverage checks that they do), and two orders
// that point at them: one with every relation, one with none but its customer.
type prefetchFixture struct {
	org                  uuid.UUID
	ids                  map[string][]uuid.UUID // by table
	fullOrder, bareOrder uuid.UUID
	fullSession          string // the hash of a customer session of the full order's customer
}

// prefetchZones are session time zones the reads are compared under: UTC, one with
// daylight saving time, and one with a half-hour offset.
var prefetchZones = []string{"UTC", "Europe/Berlin", "America/St_Johns"}

func seedPrefetchFixture(t *testing.T, db *sqlx.DB) prefetchFixture {
	t.Helper()
	ctx := context.Background()
	org, err := storage.CreateOrganization(ctx, db, "Prefetch", "prefetch")
	if err != nil {
		t.Fatal(err)
	}
	f := prefetchFixture{org: org.ID, ids: map[string][]uuid.UUID{}, fullSession: "prefetch-session-hash"}
	one := func(query string, args ...any) uuid.UUID {
		t.Helper()
		var id uuid.UUID
		if err := sqlx.GetContext(ctx, db, &id, query+" RETURNING id", append([]any{org.ID}, args...)...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return id
	}
	add := func(table string, id uuid.UUID) uuid.UUID {
		f.ids[table] = append(f.ids[table], id)
		return id
	}
	// A winter and a summer instant (on a DST change in Berlin), and one with microseconds.
	const winter, summer, micro = "2024-03-31 00:59:59+00", "2024-03-31 01:00:00+00", "2023-07-14 12:34:56.789012+00"

	full := add("customers", one(`INSERT INTO customers (organization_id, type, external_id, email, email_verified, name,
		billing_name, billing_address, tax_id, tax_id_format, locale, metadata, avatar_url, first_user_event_at,
		modified_at, deleted_at) VALUES ($1, 'individual', 'ext-1', 'Ünï"code\@example.com', true, 'Zoë "Q" \ Tab	here',
		'Billing Name', '{"line1": "1 Rue", "line2": null, "postal_code": "75001", "city": "Paris", "state": null, "country": "FR"}',
		'FR123', 'eu_vat', 'fr-FR', '{"plan": "gold", "n": 1.5, "big": 12345678901234, "nested": {"a": [1, "x", null, true]}}',
		'https://example.com/a.png', $2, $3, $4)`, winter, summer, micro))
	add("customers", one(`INSERT INTO customers (organization_id, type) VALUES ($1, 'team')`))
	pm := one(`INSERT INTO payment_methods (organization_id, customer_id, processor_id, brand, last4, exp_month, exp_year)
		VALUES ($1, $2, 'pm_1', 'visa', '4242', 12, 2030)`, full)
	if _, err := db.ExecContext(ctx, `UPDATE customers SET default_payment_method_id = $1 WHERE id = $2`, pm, full); err != nil {
		t.Fatal(err)
	}

	product := add("products", one(`INSERT INTO products (organization_id, modified_at, name, description, visibility,
		recurring_interval, recurring_interval_count, meter_interval, meter_interval_count, trial_interval,
		trial_interval_count, is_archived, metadata) VALUES ($1, $2, 'Pro plan', 'All "the" things', 'private',
		'month', 1, 'day', 7, 'week', 2, true, '{"tier": 2}')`, micro))
	add("products", one(`INSERT INTO products (organization_id, name) VALUES ($1, 'Ebook')`))
	price := one(`INSERT INTO product_prices (organization_id, product_id, amount_type) VALUES ($1, $2, 'free')`, product)

	discount := add("discounts", one(`INSERT INTO discounts (organization_id, modified_at, deleted_at, name, type,
		basis_points, currency, duration, duration_in_months, code, starts_at, ends_at, max_redemptions,
		max_redemptions_per_customer, redemptions_count, metadata) VALUES ($1, $2, $3, 'Half', 'percentage', 5000,
		'usd', 'repeating', 3, 'HALF', $2, $3, 10, 1, 4, '{"k": "v"}')`, winter, summer))
	add("discounts", one(`INSERT INTO discounts (organization_id, name, type, amount, currency, duration)
		VALUES ($1, 'Ten off', 'fixed', 1000, 'eur', 'forever')`))
	add("discounts", one(`INSERT INTO discounts (organization_id, name, type, basis_points, duration)
		VALUES ($1, 'Once', 'percentage', 1, 'once')`))

	checkout := one(`INSERT INTO checkouts (organization_id, client_secret, expires_at, success_url)
		VALUES ($1, 'secret', now() + interval '1 hour', 'https://example.com/ok')`)
	subscription := add("subscriptions", one(`INSERT INTO subscriptions (organization_id, customer_id, product_id,
		discount_id, checkout_id, payment_method_id, status, amount, currency, recurring_interval,
		recurring_interval_count, current_period_start, current_period_end, current_meter_period_start,
		current_meter_period_end, trial_start, trial_end, cancel_at_period_end, canceled_at, started_at, ends_at,
		ended_at, past_due_at, pause_at_period_end, paused_at, resumes_at, seats, customer_cancellation_reason,
		customer_cancellation_comment, custom_field_data, metadata, modified_at) VALUES ($1, $2, $3, $4, $5, $6,
		'canceled', 1500, 'usd', 'month', 1, $7, $8, $7, $8, $7, $8, true, $8, $7, $8, $8, $9, true, $9, $8, 3,
		'too_expensive', 'Too "dear"', '{"field": 1}', '{"m": null}', $9)`,
		full, product, discount, checkout, pm, winter, summer, micro))
	add("subscriptions", one(`INSERT INTO subscriptions (organization_id, customer_id, product_id, amount, currency,
		recurring_interval, current_period_start, current_period_end) VALUES ($1, $2, $3, 0, 'usd', 'year', $4, $4)`,
		full, product, summer))

	fullOrder, err := storage.InsertOrder(ctx, db, org.ID, time.Now(), storage.OrderWrite{CustomerID: full,
		ProductID: &product, DiscountID: &discount, SubscriptionID: &subscription, CheckoutID: &checkout, Status: "paid",
		BillingReason: "subscription_create", Currency: "usd", SubtotalAmount: 1500, NetAmount: 1500, TotalAmount: 1500,
		CustomFieldData: storage.JSONMap{}, Metadata: storage.JSONMap{}})
	if err != nil {
		t.Fatal(err)
	}
	bareOrder, err := storage.InsertOrder(ctx, db, org.ID, time.Now(), storage.OrderWrite{CustomerID: f.ids["customers"][1],
		Status: "pending", BillingReason: "purchase", Currency: "usd", CustomFieldData: storage.JSONMap{}, Metadata: storage.JSONMap{}})
	if err != nil {
		t.Fatal(err)
	}
	f.fullOrder, f.bareOrder = fullOrder.ID, bareOrder.ID
	items, err := storage.InsertOrderItems(ctx, db, org.ID, fullOrder, []storage.OrderItemWrite{
		{Label: "Plan", Amount: 1000, TaxAmount: 200, Proration: true, ProductPriceID: &price}, {Label: "Add-on", Amount: 500}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE order_items SET modified_at = $1 WHERE id = $2`, micro, items[0].ID); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		add("order_items", it.ID)
	}
	// The full customer is soft-deleted (to cover deleted_at), so the session is of a live copy.
	if _, err := db.ExecContext(ctx, `UPDATE customers SET deleted_at = NULL WHERE id = $1`, full); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.CreateCustomerSession(ctx, db, org.ID, full, f.fullSession, time.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE customers SET deleted_at = $1 WHERE id = $2`, summer, f.ids["customers"][1]); err != nil {
		t.Fatal(err)
	}
	return f
}

// prefetchCoverage fails unless, for every nullable column of columns, one of the rows has it
// NULL and another has it set: a column added to a record later must join the fixture.
func prefetchCoverage(t *testing.T, q sqlx.ExtContext, table, columns string, ids []uuid.UUID) {
	t.Helper()
	var nullable []string
	if err := sqlx.SelectContext(context.Background(), q, &nullable, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 AND is_nullable = 'YES'`, table); err != nil {
		t.Fatal(err)
	}
	for _, col := range nullable {
		if !strings.Contains(", "+strings.Join(strings.Fields(columns), " ")+",", " "+col+",") {
			continue
		}
		var nulls, set int
		err := q.QueryRowxContext(context.Background(), `SELECT count(*) FILTER (WHERE `+col+` IS NULL),
			count(*) FILTER (WHERE `+col+` IS NOT NULL) FROM `+table+` WHERE id = ANY($1)`, pq.Array(ids)).Scan(&nulls, &set)
		if err != nil {
			t.Fatal(err)
		}
		if nulls == 0 || set == 0 {
			t.Errorf("%s.%s: %d rows NULL and %d set; the fixture needs both", table, col, nulls, set)
		}
	}
}

// compareDecoded reads the rows ids of table with columns both ways, sqlx's scan and to_json
// decoded, and requires them identical, time locations included.
func compareDecoded[T any](t *testing.T, q sqlx.ExtContext, table string, ids []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	columns := storage.RecordColumns[table]
	var scanned []*T
	if err := sqlx.SelectContext(ctx, q, &scanned, `SELECT `+columns+` FROM `+table+` WHERE id = ANY($1) ORDER BY id`,
		pq.Array(ids)); err != nil {
		t.Fatal(err)
	}
	var raws [][]byte
	if err := sqlx.SelectContext(ctx, q, &raws, `SELECT to_json(r) FROM (SELECT `+columns+` FROM `+table+`
		WHERE id = ANY($1)) r ORDER BY r.id`, pq.Array(ids)); err != nil {
		t.Fatal(err)
	}
	var now time.Time
	if err := sqlx.GetContext(ctx, q, &now, `SELECT now()`); err != nil {
		t.Fatal(err)
	}
	if len(scanned) != len(ids) || len(raws) != len(ids) {
		t.Fatalf("read %d and %d rows of %d", len(scanned), len(raws), len(ids))
	}
	for i := range scanned {
		got, err := storage.DecodeRecord[T](raws[i], now.Location())
		if err != nil {
			t.Fatalf("decoding %s: %v", raws[i], err)
		}
		if !reflect.DeepEqual(got, scanned[i]) {
			t.Errorf("row %d:\n decoded %+v\n scanned %+v\n from %s", i, *got, *scanned[i], raws[i])
		}
	}
}

// inZone runs f in a transaction whose session time zone is zone.
func inZone(t *testing.T, db *sqlx.DB, zone string, f func(q sqlx.ExtContext)) {
	t.Helper()
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec(`SELECT set_config('TimeZone', $1, true)`, zone); err != nil {
		t.Fatal(err)
	}
	f(tx)
}

func TestPrefetchedRecordsDecodeExactlyAsSqlxScansThem(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	f := seedPrefetchFixture(t, db)
	tests := []struct {
		table   string
		compare func(t *testing.T, q sqlx.ExtContext, table string, ids []uuid.UUID)
	}{
		{"customers", compareDecoded[storage.Customer]},
		{"products", compareDecoded[storage.Product]},
		{"discounts", compareDecoded[storage.Discount]},
		{"subscriptions", compareDecoded[storage.Subscription]},
		{"order_items", compareDecoded[storage.OrderItem]},
	}
	for _, tc := range tests {
		t.Run(tc.table+" rows decode from to_json as sqlx scans them, NULLs and values alike", func(t *testing.T) {
			prefetchCoverage(t, db, tc.table, storage.RecordColumns[tc.table], f.ids[tc.table])
			for _, zone := range prefetchZones {
				inZone(t, db, zone, func(q sqlx.ExtContext) { tc.compare(t, q, tc.table, f.ids[tc.table]) })
			}
		})
	}
}

func TestOrderReadsCarryTheRelationsTheirLoadersRead(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	f := seedPrefetchFixture(t, db)
	ctx := context.Background()
	all := storage.OrderWith{Customer: true, Product: true, Discount: true, Subscription: true, Items: true}
	orgs := []uuid.UUID{f.org}
	for _, zone := range prefetchZones {
		inZone(t, db, zone, func(q sqlx.ExtContext) {
			for _, id := range []uuid.UUID{f.fullOrder, f.bareOrder} {
				plain, err := storage.GetOrder(ctx, q, orgs, nil, id)
				if err != nil {
					t.Fatal(err)
				}
				o, rels, err := storage.GetOrderWith(ctx, q, orgs, nil, id, all)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(o, plain) {
					t.Errorf("%s: GetOrderWith's order %+v, GetOrder's %+v", zone, o, plain)
				}
				checkOrderRelations(t, q, o, rels)
			}

			page, rels, err := storage.ListOrdersWith(ctx, q, orgs, storage.OrderListFilter{}, nil, storage.Window{Page: 1, Limit: 10}, all)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Items) != 2 || len(rels) != 2 || page.Prefetched != nil {
				t.Fatalf("%d orders with %d relations (%d raw)", len(page.Items), len(rels), len(page.Prefetched))
			}
			for i, o := range page.Items {
				checkOrderRelations(t, q, o, rels[i])
			}

			subs, srels, err := storage.ListSubscriptionsWith(ctx, q, orgs, storage.SubscriptionListFilter{}, nil,
				storage.Window{Page: 1, Limit: 10}, storage.SubscriptionWith{Product: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(subs.Items) != 1 || len(srels) != 1 {
				t.Fatalf("%d subscriptions with %d relations", len(subs.Items), len(srels))
			}
			want, _ := storage.ProductsByIDs(ctx, q, []uuid.UUID{subs.Items[0].ProductID})
			if !reflect.DeepEqual(srels[0].Product, want[0]) {
				t.Errorf("%s: subscription's product %+v, loader's %+v", zone, srels[0].Product, want[0])
			}

			tok, err := storage.ResolveCustomerSession(ctx, q, f.fullSession)
			if err != nil {
				t.Fatal(err)
			}
			c, err := storage.GetCustomer(ctx, q, orgs, tok.CustomerID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tok.Customer, c) {
				t.Errorf("%s: the session's customer %+v, GetCustomer's %+v", zone, tok.Customer, c)
			}
		})
	}

	t.Run("a read without relations carries none", func(t *testing.T) {
		_, rels, err := storage.GetOrderWith(ctx, db, orgs, nil, f.fullOrder, storage.OrderWith{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rels, storage.OrderRelations{}) {
			t.Errorf("relations %+v, want none", rels)
		}
	})
	t.Run("an order of another organization is not found", func(t *testing.T) {
		if _, _, err := storage.GetOrderWith(ctx, db, []uuid.UUID{uuid.New()}, nil, f.fullOrder, all); err != storage.ErrNotFound {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
}

// checkOrderRelations requires the relations carried with o to be what the batch loaders
// read for it: nil where o has no such relation, and its lines in order.
func checkOrderRelations(t *testing.T, q sqlx.ExtContext, o *storage.Order, rels storage.OrderRelations) {
	t.Helper()
	ctx := context.Background()
	customers, _ := storage.CustomersByIDs(ctx, q, []uuid.UUID{o.CustomerID})
	items, _ := storage.OrderItemsByOrders(ctx, q, []uuid.UUID{o.ID})
	want := storage.OrderRelations{Customer: customers[0], Items: items[0]}
	if o.ProductID != nil {
		rows, _ := storage.ProductsByIDs(ctx, q, []uuid.UUID{*o.ProductID})
		want.Product = rows[0]
	}
	if o.DiscountID != nil {
		rows, _ := storage.DiscountsByIDs(ctx, q, []uuid.UUID{*o.DiscountID})
		want.Discount = rows[0]
	}
	if o.SubscriptionID != nil {
		rows, _ := storage.SubscriptionsByIDs(ctx, q, []uuid.UUID{*o.SubscriptionID})
		want.Subscription = rows[0]
	}
	if !reflect.DeepEqual(rels, want) {
		t.Errorf("order %s: carried %+v\n loaders read %+v", o.ID, rels, want)
	}
}
