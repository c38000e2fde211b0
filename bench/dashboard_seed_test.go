package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// dashboardCustomers is how many customers the dashboard benchmark adds to `till demo`'s:
// enough for six pages of 50, so the page a connection asks for is not the only one read.
const dashboardCustomers = 300

// Prices of the demo's products, in cents, and the demo discount's share in basis points.
const (
	oneTimeAmount    = 4900
	recurringAmount  = 1500
	launchBasisPoint = 2000
)

// dashboardCatalog is what the seed needs from `till demo`'s catalog.
type dashboardCatalog struct {
	org                          uuid.UUID
	oneTime, recurring           uuid.UUID // products
	oneTimePrice, recurringPrice uuid.UUID
	licenseKeys, perk            uuid.UUID // benefits
	discount                     uuid.UUID
}

// catalogOf reads the demo's products, prices, benefits and discount by the keys `till demo`
// prints them under.
func catalogOf(b *testing.B, db *sqlx.DB, seed demoSeed) dashboardCatalog {
	b.Helper()
	id := func(what, v string) uuid.UUID {
		u, err := uuid.Parse(v)
		if err != nil {
			b.Fatalf("till demo printed no %s: %v", what, err)
		}
		return u
	}
	c := dashboardCatalog{org: id("organization", seed.Organization.ID),
		oneTime: id("one_time product", seed.Products["one_time"]), recurring: id("recurring product", seed.Products["recurring"]),
		licenseKeys: id("license_keys benefit", seed.Benefits["license_keys"]), perk: id("custom benefit", seed.Benefits["custom"]),
		discount: id("LAUNCH20 discount", seed.Discounts["LAUNCH20"])}
	for _, p := range []struct {
		product uuid.UUID
		price   *uuid.UUID
	}{{c.oneTime, &c.oneTimePrice}, {c.recurring, &c.recurringPrice}} {
		if err := db.Get(p.price, `SELECT id FROM product_prices WHERE product_id = $1 ORDER BY created_at, id LIMIT 1`, p.product); err != nil {
			b.Fatalf("the price of product %s: %v", p.product, err)
		}
	}
	return c
}

// seedDashboard adds dashboardCustomers customers to the demo organization, in one
// transaction through the storage functions Till itself writes with. Customer i has:
//
//   - 1 or 2 subscriptions to the recurring product (i odd: a second, canceled one);
//   - 2 to 5 paid orders, each with one item: a one-time purchase, then the active
//     subscription's first order (with the demo discount for every third customer) and its
//     monthly renewals;
//   - 2 license keys, one from the purchase's grant and one from the subscription's;
//   - 3 or 4 benefit grants: the purchase's license key, the subscription's license key and
//     perk, and the canceled subscription's revoked perk.
//
// Customers are an hour apart (the newest first in a list), their rows a day apart, so every
// list has one order whichever way it breaks ties. It returns the customers, newest first.
func seedDashboard(b *testing.B, db *sqlx.DB, c dashboardCatalog) []uuid.UUID {
	b.Helper()
	ctx := context.Background()
	base := time.Now().Add(-time.Duration(dashboardCustomers) * time.Hour)
	ids := make([]uuid.UUID, dashboardCustomers)
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		for i := range dashboardCustomers {
			created := base.Add(time.Duration(i) * time.Hour)
			id, err := seedDashboardCustomer(ctx, tx, c, i, created)
			if err != nil {
				return fmt.Errorf("customer %d: %w", i, err)
			}
			ids[dashboardCustomers-1-i] = id
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seeding the dashboard: %v", err)
	}
	// Statistics as autovacuum would gather them after a bulk load.
	if _, err := db.Exec(`ANALYZE customers, orders, order_items, subscriptions, benefit_grants, license_keys`); err != nil {
		b.Fatal(err)
	}
	return ids
}

// seedDashboardCustomer stores customer i and its rows (see seedDashboard).
func seedDashboardCustomer(ctx context.Context, tx *sqlx.Tx, c dashboardCatalog, i int, created time.Time) (uuid.UUID, error) {
	cust, err := storage.CreateCustomer(ctx, tx, c.org, storage.CustomerWrite{
		Email: ptr(fmt.Sprintf("customer%03d@bench.test", i)), Name: ptr(fmt.Sprintf("Customer %03d", i)),
		ExternalID: ptr(fmt.Sprintf("bench-%03d", i)), BillingName: ptr(fmt.Sprintf("Customer %03d GmbH", i)),
		BillingAddress: &storage.Address{Line1: ptr("1 Bench Street"), City: ptr("Berlin"), PostalCode: ptr("10115"), Country: "DE"},
		Metadata:       storage.JSONMap{"segment": []string{"smb", "mid", "enterprise"}[i%3]}})
	if err != nil {
		return uuid.Nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE customers SET created_at = $2 WHERE id = $1`, cust.ID, created); err != nil {
		return uuid.Nil, err
	}
	day := func(n int) time.Time { return created.Add(time.Duration(n) * 24 * time.Hour) }

	// The one-time purchase and its license key.
	purchase, err := seedOrder(ctx, tx, c, storage.OrderWrite{CustomerID: cust.ID, ProductID: &c.oneTime,
		BillingReason: "purchase", SubtotalAmount: oneTimeAmount}, "Desktop App", &c.oneTimePrice, day(0))
	if err != nil {
		return uuid.Nil, err
	}
	if err := seedKeyGrant(ctx, tx, c, storage.GrantKey{CustomerID: cust.ID, OrderID: &purchase}, i, 0, day(0)); err != nil {
		return uuid.Nil, err
	}

	// The active subscription, its orders, its license key and perk.
	start := day(1)
	sub, err := storage.CreateSubscription(ctx, tx, c.org, start, storage.SubscriptionWrite{CustomerID: cust.ID,
		ProductID: c.recurring, Status: "active", Amount: recurringAmount, Currency: "usd", RecurringInterval: "month",
		RecurringIntervalCount: 1, CurrentPeriodStart: start, CurrentPeriodEnd: start.AddDate(0, 1, 0), StartedAt: &start,
		CustomFieldData: storage.JSONMap{}, Metadata: storage.JSONMap{}})
	if err != nil {
		return uuid.Nil, err
	}
	if err := storage.SetSubscriptionPrices(ctx, tx, c.org, sub.ID, []uuid.UUID{c.recurringPrice}); err != nil {
		return uuid.Nil, err
	}
	for n := range 1 + i%4 {
		w := storage.OrderWrite{CustomerID: cust.ID, ProductID: &c.recurring, SubscriptionID: &sub.ID,
			BillingReason: "subscription_cycle", SubtotalAmount: recurringAmount}
		if n == 0 {
			w.BillingReason = "subscription_create"
			if i%3 == 0 {
				w.DiscountID, w.DiscountAmount = &c.discount, recurringAmount*launchBasisPoint/10000
			}
		}
		if _, err := seedOrder(ctx, tx, c, w, "Pro Plan", &c.recurringPrice, day(1+n)); err != nil {
			return uuid.Nil, err
		}
	}
	if err := seedKeyGrant(ctx, tx, c, storage.GrantKey{CustomerID: cust.ID, SubscriptionID: &sub.ID}, i, 1, start); err != nil {
		return uuid.Nil, err
	}
	if _, _, err := storage.UpsertGrant(ctx, tx, storage.GrantKey{OrganizationID: c.org, BenefitID: c.perk,
		CustomerID: cust.ID, SubscriptionID: &sub.ID}, start); err != nil {
		return uuid.Nil, err
	}

	// Odd customers also had a subscription they canceled, whose perk was revoked.
	if i%2 == 1 {
		began, ended := created.Add(-90*24*time.Hour), created.Add(-30*24*time.Hour)
		old, err := storage.CreateSubscription(ctx, tx, c.org, began, storage.SubscriptionWrite{CustomerID: cust.ID,
			ProductID: c.recurring, Status: "canceled", Amount: recurringAmount, Currency: "usd", RecurringInterval: "month",
			RecurringIntervalCount: 1, CurrentPeriodStart: ended.AddDate(0, -1, 0), CurrentPeriodEnd: ended, StartedAt: &began,
			CustomFieldData: storage.JSONMap{}, Metadata: storage.JSONMap{}})
		if err != nil {
			return uuid.Nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE subscriptions SET canceled_at = $2, ended_at = $2 WHERE id = $1`, old.ID, ended); err != nil {
			return uuid.Nil, err
		}
		if _, _, err := storage.UpsertGrant(ctx, tx, storage.GrantKey{OrganizationID: c.org, BenefitID: c.perk,
			CustomerID: cust.ID, SubscriptionID: &old.ID}, began); err != nil {
			return uuid.Nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE benefit_grants SET granted_at = NULL, revoked_at = $2
			WHERE subscription_id = $1`, old.ID, ended); err != nil {
			return uuid.Nil, err
		}
	}
	return cust.ID, nil
}

// seedOrder stores a paid USD order of one item created at `at`, completing w's amounts.
func seedOrder(ctx context.Context, tx *sqlx.Tx, c dashboardCatalog, w storage.OrderWrite, label string,
	price *uuid.UUID, at time.Time) (uuid.UUID, error) {
	w.Status, w.Currency = "paid", "usd"
	w.NetAmount = w.SubtotalAmount - w.DiscountAmount
	w.TotalAmount = w.NetAmount
	w.CustomFieldData, w.Metadata = storage.JSONMap{}, storage.JSONMap{}
	o, err := storage.InsertOrder(ctx, tx, c.org, at, w)
	if err != nil {
		return uuid.Nil, err
	}
	_, err = storage.InsertOrderItems(ctx, tx, c.org, o, []storage.OrderItemWrite{{Label: label,
		Amount: w.SubtotalAmount, ProductPriceID: price}})
	return o.ID, err
}

// seedKeyGrant grants the license-key benefit as k says (customer and subscription or
// order) and issues its key, as the benefit's grant does: the grant's properties name the key.
func seedKeyGrant(ctx context.Context, tx *sqlx.Tx, c dashboardCatalog, k storage.GrantKey, i, n int, at time.Time) error {
	k.OrganizationID, k.BenefitID = c.org, c.licenseKeys
	g, _, err := storage.UpsertGrant(ctx, tx, k, at)
	if err != nil {
		return err
	}
	expires := at.AddDate(1, 0, 0)
	key, err := storage.IssueLicenseKey(ctx, tx, c.org, c.licenseKeys, k.CustomerID, nil,
		fmt.Sprintf("BENCH-%03d-%d-%s", i, n, uuid.NewString()), storage.LicenseKeyTerms{LimitActivations: ptr(3), ExpiresAt: &expires}, at)
	if err != nil {
		return err
	}
	_, err = storage.SetGrantProperties(ctx, tx, g.ID, storage.RawJSON(fmt.Sprintf(`{"license_key_id": %q, "display_key": %q}`,
		key.ID, key.DisplayKey)))
	return err
}

func ptr[T any](v T) *T { return &v }
