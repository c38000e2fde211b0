package resolvers_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/payment"
	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// meterView is a SubscriptionMeter as the tests read it.
type meterView struct {
	ID            uuid.UUID  `json:"id"`
	CreatedAt     time.Time  `json:"createdAt"`
	ModifiedAt    *time.Time `json:"modifiedAt"`
	ConsumedUnits float64    `json:"consumedUnits"`
	CreditedUnits int64      `json:"creditedUnits"`
	Amount        int64      `json:"amount"`
	MeterID       uuid.UUID  `json:"meterId"`
	Meter         struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
	} `json:"meter"`
}

const meterViewFields = `meters { id createdAt modifiedAt consumedUnits creditedUnits amount meterId meter { id name } }`

// meters reads a subscription's meters through GraphQL.
func (w *subWorld) meters(tb testing.TB, id uuid.UUID) []meterView {
	tb.Helper()
	var out struct{ Subscription struct{ Meters []meterView } }
	w.s.Query(tb, w.org.Token, `query($id: UUID!) { subscription(id: $id) { `+meterViewFields+` } }`, vars{"id": id}, &out)
	return out.Subscription.Meters
}

// newMeter stores a meter over the events named event, aggregated by aggregation (JSON).
func (w *subWorld) newMeter(tb testing.TB, name, event, aggregation string) uuid.UUID {
	tb.Helper()
	var id uuid.UUID
	w.s.Get(tb, &id, `INSERT INTO meters (organization_id, name, filter, aggregation) VALUES ($1, $2,
		jsonb_build_object('conjunction', 'and', 'clauses', jsonb_build_array(
			jsonb_build_object('property', 'name', 'operator', 'eq', 'value', $3::text))), $4) RETURNING id`,
		w.org.ID, name, event, aggregation)
	return id
}

// usagePlan creates a monthly product: 500 fixed plus a metered price on meter.
func (w *subWorld) usagePlan(tb testing.TB, meter uuid.UUID, unit string, capAmount *int64, benefits ...uuid.UUID) product {
	tb.Helper()
	metered := vars{"amountType": "metered_unit", "unitAmount": unit, "meterId": meter}
	if capAmount != nil {
		metered["capAmount"] = *capAmount
	}
	if benefits == nil {
		benefits = []uuid.UUID{}
	}
	return createProduct(tb, w.s, w.org.Token, vars{"name": "Usage " + uuid.NewString()[:6], "recurringInterval": "month",
		"benefitIds": benefits, "prices": []vars{{"amountType": "fixed", "priceAmount": 500}, metered}})
}

// usage is one event a test sends: by customer id, or by external id only, at a time.
type usage struct {
	customer *uuid.UUID
	external *string
	name     string
	at       time.Time
	metadata string
}

// ingest stores events as ingestion would, in the partition their timestamp falls in.
func (w *subWorld) ingest(tb testing.TB, events ...usage) {
	tb.Helper()
	w.s.Exec(tb, `SELECT ensure_event_partitions($1, 3)`, subBase.AddDate(0, -1, 0))
	for _, e := range events {
		md := e.metadata
		if md == "" {
			md = "{}"
		}
		w.s.Exec(tb, `INSERT INTO events (organization_id, name, customer_id, external_customer_id, "timestamp", metadata)
			VALUES ($1, $2, $3, $4, $5, $6)`, w.org.ID, e.name, e.customer, e.external, e.at, md)
	}
}

// refreshMeters recounts every meter of the organization that is older than staleAfter.
func (w *subWorld) refreshMeters(tb testing.TB, staleAfter time.Duration) int {
	tb.Helper()
	n, err := w.s.Resolver.RefreshSubscriptionMeters(context.Background(), &w.org.ID, staleAfter, 100)
	if err != nil {
		tb.Fatalf("refreshing meters: %v", err)
	}
	return n
}

func TestSubscriptionMetersCountTheCurrentPeriod(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	hour := func(n int) time.Time { return subBase.Add(time.Duration(n) * time.Hour) }
	type want struct {
		consumed float64
		credited int64
		amount   int64
	}
	tests := []struct {
		name        string
		aggregation string
		unit        string
		capAmount   *int64
		credit      int // units of a meter_credit benefit of the product; 0 for none
		events      func(event string, c customer, external string, other customer) []usage
		want        want
	}{
		{"events by id and by external id count; earlier, later, other customers' and other names do not",
			`{"func": "count"}`, "50", nil, 0,
			func(event string, c customer, external string, other customer) []usage {
				return []usage{{customer: &c.ID, name: event, at: hour(1)},
					{external: &external, name: event, at: hour(2)},
					{customer: &c.ID, external: &external, name: event, at: hour(3)},
					{customer: &c.ID, name: event, at: hour(-1)},
					{customer: &c.ID, name: event, at: hour(24 * 20)},
					{customer: &other.ID, name: event, at: hour(4)},
					{customer: &c.ID, name: event + "-other", at: hour(5)}}
			}, want{3, 0, 150}},
		{"a fraction of a cent rounds half up", `{"func": "count"}`, "0.5", nil, 0,
			func(event string, c customer, _ string, _ customer) []usage {
				return []usage{{customer: &c.ID, name: event, at: hour(1)}, {customer: &c.ID, name: event, at: hour(2)},
					{customer: &c.ID, name: event, at: hour(3)}}
			}, want{3, 0, 2}},
		{"a sum of fractional units is priced exactly", `{"func": "sum", "property": "tokens"}`, "1", nil, 0,
			func(event string, c customer, _ string, _ customer) []usage {
				return []usage{{customer: &c.ID, name: event, at: hour(1), metadata: `{"tokens": 1.25}`},
					{customer: &c.ID, name: event, at: hour(2), metadata: `{"tokens": 1.25}`}}
			}, want{2.5, 0, 3}},
		{"the cap holds the amount", `{"func": "count"}`, "100", ptr(int64(250)), 0,
			func(event string, c customer, _ string, _ customer) []usage {
				return []usage{{customer: &c.ID, name: event, at: hour(1)}, {customer: &c.ID, name: event, at: hour(2)},
					{customer: &c.ID, name: event, at: hour(3)}, {customer: &c.ID, name: event, at: hour(4)}}
			}, want{4, 0, 250}},
		{"credited units are not charged", `{"func": "count"}`, "10", nil, 2,
			func(event string, c customer, _ string, _ customer) []usage {
				return []usage{{customer: &c.ID, name: event, at: hour(1)}, {customer: &c.ID, name: event, at: hour(2)},
					{customer: &c.ID, name: event, at: hour(3)}, {customer: &c.ID, name: event, at: hour(4)},
					{customer: &c.ID, name: event, at: hour(5)}}
			}, want{5, 2, 30}},
		{"credits beyond the usage leave nothing to pay", `{"func": "count"}`, "10", nil, 10,
			func(event string, c customer, _ string, _ customer) []usage {
				return []usage{{customer: &c.ID, name: event, at: hour(1)}}
			}, want{1, 10, 0}},
		{"no usage is zero", `{"func": "count"}`, "10", nil, 0,
			func(string, customer, string, customer) []usage { return nil }, want{0, 0, 0}},
	}
	type setup struct {
		sub    subView
		meter  uuid.UUID
		before []meterView
	}
	setups := make([]setup, len(tests))
	other := w.s.NewCustomer(t, w.org.ID, "")
	var events []usage
	for i, tc := range tests {
		event := fmt.Sprintf("call-%d", i)
		meter := w.newMeter(t, fmt.Sprintf("Meter %d", i), event, tc.aggregation)
		var benefits []uuid.UUID
		if tc.credit > 0 {
			benefits = append(benefits, createBenefit(t, w.s, w.org.Token, vars{"type": "meter_credit", "description": "Credits",
				"properties": vars{"units": tc.credit, "rollover": false, "meter_id": meter}}).ID)
		}
		plan := w.usagePlan(t, meter, tc.unit, tc.capAmount, benefits...)
		external := "ext-" + uuid.NewString()
		c := w.s.NewCustomer(t, w.org.ID, external)
		sub := w.subscribe(t, plan.ID, c.ID, nil, 500, 0, nil)
		setups[i] = setup{sub: sub, meter: meter, before: w.meters(t, sub.ID)}
		events = append(events, tc.events(event, c, external, other)...)
	}
	w.advance(t, subBase.Add(days(10)))
	w.ingest(t, events...)
	if n := w.refreshMeters(t, 0); n != len(tests) {
		t.Errorf("recounted %d subscriptions, want %d", n, len(tests))
	}

	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := setups[i]
			if len(st.before) != 1 || st.before[0].ConsumedUnits != 0 || st.before[0].Amount != 0 || st.before[0].ModifiedAt != nil {
				t.Errorf("before any count: %+v", st.before)
			}
			got := w.meters(t, st.sub.ID)
			if len(got) != 1 {
				t.Fatalf("meters: %+v", got)
			}
			m := got[0]
			if diff := cmp.Diff(tc.want, want{m.ConsumedUnits, m.CreditedUnits, m.Amount}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("meter (-want +got):\n%s", diff)
			}
			if m.ID != st.before[0].ID || !m.CreatedAt.Equal(st.before[0].CreatedAt) || m.MeterID != st.meter || m.Meter.ID != st.meter ||
				m.Meter.Name != fmt.Sprintf("Meter %d", i) {
				t.Errorf("identity changed or wrong meter: before %+v, after %+v", st.before[0], m)
			}
			if changed := tc.want != (want{}); changed != (m.ModifiedAt != nil) {
				t.Errorf("modifiedAt = %v, want it set only when a figure changed", m.ModifiedAt)
			}
		})
	}

	t.Run("fresh counts are not recounted until they are stale", func(t *testing.T) {
		if n := w.refreshMeters(t, time.Hour); n != 0 {
			t.Errorf("recounted %d fresh subscriptions", n)
		}
		w.mutate(t, w.org.Token, "revokeSubscription", vars{"id": setups[0].sub.ID})
		if n := w.refreshMeters(t, 0); n != len(tests)-1 {
			t.Errorf("recounted %d, want every live subscription (%d)", n, len(tests)-1)
		}
	})
}

// cycleItem is a line of a cycle order.
type cycleItem struct {
	Label   string     `db:"label"`
	Amount  int64      `db:"amount"`
	PriceID *uuid.UUID `db:"product_price_id"`
}

// cycleItems lists the lines of a subscription's cycle orders, by label.
func (w *subWorld) cycleItems(tb testing.TB, subID uuid.UUID) []cycleItem {
	tb.Helper()
	var out []cycleItem
	if err := w.s.DB.SelectContext(context.Background(), &out, `SELECT i.label, i.amount, i.product_price_id
		FROM order_items i JOIN orders o ON o.id = i.order_id
		WHERE o.subscription_id = $1 AND o.billing_reason = 'subscription_cycle' ORDER BY i.label`, subID); err != nil {
		tb.Fatalf("reading order items: %v", err)
	}
	return out
}

func TestRenewalBillsMeteredUsage(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	end := at(2, 28)
	tests := []struct {
		name      string
		unit      string
		capAmount *int64
		events    int
		metered   string // the metered line's label; "" for none
		amount    int64
	}{
		{"usage is billed at the unit amount", "25", nil, 4, "API calls 0 — (4 consumed units) × $0.25", 100},
		{"a capped amount says so", "100", ptr(int64(250)), 5, "API calls 1 — (5 consumed units) × $1.00 — Capped at $2.50", 250},
		{"a unit below a cent keeps its digits", "0.125", nil, 8, "API calls 2 — (8 consumed units) × $0.00125", 1},
		{"no usage adds no line", "25", nil, 0, "", 0},
	}
	type setup struct {
		sub    subView
		plan   product
		fixed  uuid.UUID
		meter  uuid.UUID
		priced uuid.UUID
	}
	setups := make([]setup, len(tests))
	var events []usage
	for i, tc := range tests {
		event := fmt.Sprintf("api-%d", i)
		meter := w.newMeter(t, fmt.Sprintf("API calls %d", i), event, `{"func": "count"}`)
		plan := w.usagePlan(t, meter, tc.unit, tc.capAmount)
		c := w.s.NewCustomer(t, w.org.ID, "")
		card := w.saveCard(t, c.ID, payment.TokenVisa)
		sub := w.subscribe(t, plan.ID, c.ID, &card, 500, 0, nil)
		setups[i] = setup{sub: sub, plan: plan, meter: meter, fixed: plan.Prices[0].ID, priced: plan.Prices[1].ID}
		for j := range tc.events {
			events = append(events, usage{customer: &c.ID, name: event, at: subBase.Add(time.Duration(j+1) * time.Hour)})
		}
		// Usage of the next period is billed with the next period.
		events = append(events, usage{customer: &c.ID, name: event, at: end.Add(time.Hour)})
	}
	w.ingest(t, events...)
	w.advance(t, end.Add(-time.Minute))
	w.refreshMeters(t, 0)
	if n := w.advance(t, end); n != len(tests) {
		t.Fatalf("%d renewals, want %d", n, len(tests))
	}

	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := setups[i]
			want := []cycleItem{{Label: st.plan.Name, Amount: 500, PriceID: &st.fixed}}
			if tc.metered != "" {
				want = append(want, cycleItem{Label: tc.metered, Amount: tc.amount, PriceID: &st.priced})
			}
			sort.Slice(want, func(a, b int) bool { return want[a].Label < want[b].Label })
			if diff := cmp.Diff(want, w.cycleItems(t, st.sub.ID)); diff != "" {
				t.Errorf("cycle order lines (-want +got):\n%s", diff)
			}
			orders := w.orders(t, st.sub.ID)
			if last := orders[len(orders)-1]; last.BillingReason != "subscription_cycle" || last.TotalAmount != 500+tc.amount ||
				last.Status != "paid" {
				t.Errorf("cycle order: %+v", last)
			}
			m := w.meters(t, st.sub.ID)
			if len(m) != 1 || m[0].ConsumedUnits != 0 || m[0].Amount != 0 || (tc.events > 0 && !m[0].ModifiedAt.Equal(end)) {
				t.Errorf("meters after the renewal are not reset at %s: %+v", end, m)
			}
		})
	}

	t.Run("the next count starts at the new period", func(t *testing.T) {
		w.advance(t, end.Add(2*time.Hour))
		w.refreshMeters(t, time.Hour)
		for i := range tests {
			if m := w.meters(t, setups[i].sub.ID); len(m) != 1 || m[0].ConsumedUnits != 1 {
				t.Errorf("%s: meters %+v, want the one event of the new period", tests[i].name, m)
			}
		}
	})
}

// TestSubscriptionMetersCostConstantStatements proves meters are batched: a page of 100
// subscriptions with their meters and each meter's meter costs the statements a page of 10
// does. Not parallel, like the other statement counts.
func TestSubscriptionMetersCostConstantStatements(t *testing.T) {
	const rows = 110
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedMeteredSubscriptions(t, db, org.ID, rows)
	w := &subWorld{s: s, org: org}
	if n := w.refreshMeters(t, 0); n != 100 {
		t.Fatalf("recounted %d, want a first batch of 100", n)
	}
	w.refreshMeters(t, time.Hour)

	requireConstantStatements(t, counter, func(n int) *resolverstest.Response {
		return s.Do(t, org.Token, `query($n: Int) { subscriptions(limit: $n) { items { id `+meterViewFields+` } } }`, vars{"n": n})
	}, func(t *testing.T, data []byte, n int) {
		var out struct {
			Subscriptions struct {
				Items []struct{ Meters []meterView }
			}
		}
		mustUnmarshal(t, data, &out)
		if len(out.Subscriptions.Items) != n {
			t.Fatalf("N=%d: got %d items", n, len(out.Subscriptions.Items))
		}
		for _, it := range out.Subscriptions.Items {
			if len(it.Meters) != 1 || it.Meters[0].ConsumedUnits != 1 || it.Meters[0].Amount != 7 || it.Meters[0].Meter.Name != "Calls" {
				t.Fatalf("N=%d: meters %+v", n, it.Meters)
			}
		}
	})
}

// seedMeteredSubscriptions stores n active subscriptions of one metered product (7 per
// call), each of its own customer with one call in the current period.
func seedMeteredSubscriptions(tb testing.TB, db *sqlx.DB, orgID uuid.UUID, n int) {
	tb.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		if _, err := storage.EnsureEventPartitions(ctx, tx, now.AddDate(0, -1, 0), 3); err != nil {
			return err
		}
		meter, err := storage.CreateMeter(ctx, tx, orgID, "Calls", storage.RawJSON(`{"conjunction": "and", "clauses": []}`),
			storage.RawJSON(`{"func": "count"}`))
		if err != nil {
			return err
		}
		month, one := storage.IntervalMonth, 1
		p, err := storage.CreateProduct(ctx, tx, orgID, storage.ProductWrite{Name: "Metered", Visibility: "public",
			RecurringInterval: &month, RecurringIntervalCount: &one})
		if err != nil {
			return err
		}
		unit := "7"
		price, err := storage.CreatePrice(ctx, tx, orgID, p.ID, storage.ProductPriceWrite{AmountType: "metered_unit",
			PriceCurrency: "usd", UnitAmount: &unit, MeterID: &meter.ID})
		if err != nil {
			return err
		}
		start, end := now.Add(-time.Hour), now.AddDate(0, 1, 0)
		for i := range n {
			c, err := storage.CreateCustomer(ctx, tx, orgID, storage.CustomerWrite{Email: ptr(fmt.Sprintf("m%d@example.com", i))})
			if err != nil {
				return err
			}
			sub, err := storage.CreateSubscription(ctx, tx, orgID, start, storage.SubscriptionWrite{CustomerID: c.ID,
				ProductID: p.ID, Status: "active", Currency: "usd", RecurringInterval: month, RecurringIntervalCount: one,
				CurrentPeriodStart: start, CurrentPeriodEnd: end, CurrentMeterPeriodStart: &start,
				CurrentMeterPeriodEnd: &end, StartedAt: &start})
			if err != nil {
				return err
			}
			if err := storage.SetSubscriptionPrices(ctx, tx, orgID, sub.ID, []uuid.UUID{price.ID}); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO events (organization_id, name, customer_id, "timestamp")
				VALUES ($1, 'call', $2, $3)`, orgID, c.ID, now.Add(-time.Minute)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// TestCanceledSubscriptionBillsItsLastUsage ends a subscription at its period end: no
// renewal follows, so the period's usage is billed in a last order of metered lines only.
func TestCanceledSubscriptionBillsItsLastUsage(t *testing.T) {
	t.Parallel()
	w := newSubWorld(t, payment.TokenVisa)
	end := at(2, 28)
	meter := w.newMeter(t, "API calls", "api", `{"func": "count"}`)
	plan := w.usagePlan(t, meter, "25", nil)
	c := w.s.NewCustomer(t, w.org.ID, "")
	card := w.saveCard(t, c.ID, payment.TokenVisa)
	sub := w.subscribe(t, plan.ID, c.ID, &card, 500, 0, nil)
	var events []usage
	for j := range 4 {
		events = append(events, usage{customer: &c.ID, name: "api", at: subBase.Add(time.Duration(j+1) * time.Hour)})
	}
	w.ingest(t, events...)
	w.mutate(t, w.org.Token, "cancelSubscription", vars{"id": sub.ID})
	w.advance(t, end)
	if got := w.get(t, sub.ID); got.Status != "canceled" {
		t.Fatalf("subscription after its last period: %+v", got)
	}
	want := []cycleItem{{Label: "API calls — (4 consumed units) × $0.25", Amount: 100, PriceID: &plan.Prices[1].ID}}
	if diff := cmp.Diff(want, w.cycleItems(t, sub.ID)); diff != "" {
		t.Errorf("final order lines (-want +got):\n%s", diff)
	}
	orders := w.orders(t, sub.ID)
	if last := orders[len(orders)-1]; last.TotalAmount != 100 || last.Status != "paid" {
		t.Errorf("final usage order: %+v", last)
	}
}
