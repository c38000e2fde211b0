package storage_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// costsOf is a meter's buckets as (day of month or hour, costs, events) and its total, the
// part of a MeterCosts a table can state.
type costsOf struct {
	Buckets [][3]float64
	Total   float64
}

func costsSummary(c *storage.MeterCosts, hourly bool) costsOf {
	out := costsOf{Total: c.Total}
	for _, b := range c.Costs {
		at := float64(b.Timestamp.Day())
		if hourly {
			at = float64(b.Timestamp.Hour())
		}
		out.Buckets = append(out.Buckets, [3]float64{at, b.Costs, float64(b.Events)})
	}
	return out
}

// TestMeterCostSeries sums the _cost.amount of the events each meter's filter selects, per
// bucket, among events of another name, another organization, another customer, events
// without a cost and events whose amount is not a number.
func TestMeterCostSeries(t *testing.T) {
	db := storagetest.New(t)
	ctx := t.Context()
	org := newOrganization(t, db, "acme")
	theirs := newOrganization(t, db, "globex")
	cust := newMeterCustomer(t, db, org.ID, "ext-1")
	other := newMeterCustomer(t, db, org.ID, "ext-2")
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	cost := func(amount string) string {
		return `{"_cost": {"amount": ` + amount + `, "currency": "usd"}, "tokens": 10}`
	}
	insertEvents(t, db, org.ID,
		usage{name: "llm", customerID: &cust.ID, at: day(1, 1), metadata: cost("1.5")},
		// No tokens to sum, but a cost: it costs all the same.
		usage{name: "llm", externalID: cust.ExternalID, at: day(1, 2), metadata: `{"_cost": {"amount": "0.25", "currency": "usd"}}`},
		usage{name: "llm", customerID: &cust.ID, at: day(2, 3), metadata: `{"tokens": 5}`},
		usage{name: "llm", customerID: &other.ID, at: day(2, 4), metadata: cost("100")},
		usage{name: "chat", customerID: &cust.ID, at: day(2, 5), metadata: cost("1000")},
		usage{name: "llm", customerID: &cust.ID, at: day(2, 6), metadata: cost(`"a lot"`)},
		usage{name: "llm", customerID: &cust.ID, at: day(2, 7), metadata: cost(`"1e3"`)},
		usage{name: "llm", customerID: &cust.ID, at: day(3, 23), metadata: cost(`"0.1"`)},
		usage{name: "llm", customerID: &cust.ID, at: day(3, 23), metadata: cost("0.2")},
		usage{name: "llm", customerID: &cust.ID, at: day(4, 0), metadata: cost("4")},
	)
	insertEvents(t, db, theirs.ID, usage{name: "llm", at: day(1, 1), metadata: cost("10000")})
	llm := `{"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "llm"}]}`
	chat := `{"conjunction": "and", "clauses": [{"property": "name", "operator": "eq", "value": "chat"}]}`
	sum := newMeter(t, db, org.ID, llm, `{"func": "sum", "property": "tokens"}`)
	unique := newMeter(t, db, org.ID, llm, `{"func": "unique", "property": "tokens"}`)
	chats := newMeter(t, db, org.ID, chat, `{"func": "count"}`)
	theirMeter := newMeter(t, db, theirs.ID, llm, `{"func": "count"}`)

	from, to := day(1, 0), day(4, 0)
	mine := costsOf{Buckets: [][3]float64{{1, 1.75, 2}, {2, 0, 0}, {3, 0.3, 2}}, Total: 2.05}
	for _, c := range []struct {
		name     string
		reads    []storage.MeterCostRead
		interval string
		want     []costsOf
	}{
		{"a customer's costs, whether the event enters the sum or not", []storage.MeterCostRead{
			{Meter: sum, Customer: &cust}, {Meter: unique, Customer: &cust}}, "day", []costsOf{mine, mine}},
		{"the organization's costs", []storage.MeterCostRead{{Meter: sum}}, "day", []costsOf{
			{Buckets: [][3]float64{{1, 1.75, 2}, {2, 100, 1}, {3, 0.3, 2}}, Total: 102.05}}},
		{"another customer's", []storage.MeterCostRead{{Meter: sum, Customer: &other}}, "day", []costsOf{
			{Buckets: [][3]float64{{1, 0, 0}, {2, 100, 1}, {3, 0, 0}}, Total: 100}}},
		{"another meter's events, in order", []storage.MeterCostRead{{Meter: chats, Customer: &cust}, {Meter: sum, Customer: &cust}}, "day",
			[]costsOf{{Buckets: [][3]float64{{1, 0, 0}, {2, 1000, 1}, {3, 0, 0}}, Total: 1000}, mine}},
		{"another organization's meter sees only its own events", []storage.MeterCostRead{{Meter: theirMeter}}, "month",
			[]costsOf{{Buckets: [][3]float64{{1, 10000, 1}}, Total: 10000}}},
		{"one month bucket", []storage.MeterCostRead{{Meter: sum, Customer: &cust}}, "month",
			[]costsOf{{Buckets: [][3]float64{{1, 2.05, 4}}, Total: 2.05}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := storage.MeterCostSeries(ctx, db, c.reads, from, to, c.interval)
			if err != nil {
				t.Fatal(err)
			}
			var summary []costsOf
			for i, g := range got {
				if g.Meter != c.reads[i].Meter {
					t.Errorf("answer %d is for meter %s, want %s", i, g.Meter.ID, c.reads[i].Meter.ID)
				}
				summary = append(summary, costsSummary(g, false))
			}
			if diff := cmp.Diff(c.want, summary); diff != "" {
				t.Errorf("costs (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("hours of one day", func(t *testing.T) {
		got, err := storage.MeterCostSeries(ctx, db, []storage.MeterCostRead{{Meter: sum, Customer: &cust}}, day(1, 0), day(1, 3), "hour")
		if err != nil {
			t.Fatal(err)
		}
		want := costsOf{Buckets: [][3]float64{{0, 0, 0}, {1, 1.5, 1}, {2, 0.25, 1}}, Total: 1.75}
		if diff := cmp.Diff(want, costsSummary(got[0], true)); diff != "" {
			t.Errorf("costs (-want +got):\n%s", diff)
		}
	})
}

// costFixture is an organization with ten days of costed usage from two customers, by id
// and by external id, with costs as numbers, as decimal strings, missing and unreadable, and
// events named otherwise; rolled up on the 8th at noon.
type costFixture struct {
	db   *sqlx.DB
	cust storage.MeterCustomer
	now  time.Time
	org  *storage.Organization
}

func newCostFixture(t *testing.T) *costFixture {
	db := storagetest.New(t)
	org := newOrganization(t, db, "acme")
	f := &costFixture{db: db, org: org, now: rollupStart.AddDate(0, 0, 7).Add(12 * time.Hour)}
	f.cust = newMeterCustomer(t, db, org.ID, "ext-1")
	other := newMeterCustomer(t, db, org.ID, "ext-2")
	rng := rand.New(rand.NewPCG(3, 4))
	var events []storage.EventWrite
	for i := range 500 {
		e := storage.EventWrite{OrganizationID: org.ID, Timestamp: rollupStart.Add(time.Duration(rng.IntN(10*24*60)) * time.Minute)}
		amount := fmt.Sprintf("%d.%03d", rng.IntN(50), rng.IntN(1000))
		switch i % 5 {
		case 0:
			e.Metadata = fmt.Sprintf(`{"tokens": %d, "_cost": {"amount": %s, "currency": "usd"}}`, rng.IntN(100), amount)
		case 1:
			e.Metadata = fmt.Sprintf(`{"_cost": {"amount": %q, "currency": "usd"}}`, amount)
		case 2:
			e.Metadata = fmt.Sprintf(`{"tokens": %d}`, rng.IntN(100))
		case 3:
			e.Metadata = `{"tokens": 1, "_cost": {"amount": "n/a", "currency": "usd"}}`
		}
		switch i % 3 {
		case 0:
			e.CustomerID = &f.cust.ID
		case 1:
			e.ExternalCustomerID = f.cust.ExternalID
		default:
			e.CustomerID = &other.ID
		}
		if i%11 == 0 {
			e.Name = "other"
		}
		events = append(events, e)
	}
	ingest(t, db, events...)
	return f
}

// TestMeterCostRollupsEqualEvents: for every interval, window and customer, the costs read
// through the rollups equal those read from the events alone, digit for digit, while the
// rollups are really read; a late event on a rolled-up day counts at once, before and after
// the refresh that recomputes its day.
func TestMeterCostRollupsEqualEvents(t *testing.T) {
	f := newCostFixture(t)
	ctx := t.Context()
	var meters []*storage.Meter
	for _, a := range []string{`{"func": "count"}`, `{"func": "sum", "property": "tokens"}`, `{"func": "max", "property": "timestamp"}`} {
		meters = append(meters, newMeter(t, f.db, f.org.ID, apiCalls, a))
	}
	refreshRollups(t, f.db, f.now)
	d := func(day, hour int) time.Time {
		return rollupStart.AddDate(0, 0, day).Add(time.Duration(hour) * time.Hour)
	}
	windows := []struct {
		name     string
		from, to time.Time
	}{
		{"whole days, past the rollups", d(0, 0), d(10, 0)},
		{"partial days at both ends", d(1, 5), d(5, 17)},
		{"the month before and after", d(-3, 0), d(31, 0)},
	}
	compare := func(t *testing.T, step string) float64 {
		t.Helper()
		var total float64
		for _, c := range []*storage.MeterCustomer{&f.cust, nil} {
			var reads []storage.MeterCostRead
			for _, m := range meters {
				reads = append(reads, storage.MeterCostRead{Meter: m, Customer: c})
			}
			for _, w := range windows {
				for _, interval := range []string{"day", "week", "month"} {
					_, _, _, used, err := storage.MeterRollupPlan(ctx, f.db, meters[0], w.from, w.to)
					if err != nil || !used {
						t.Fatalf("%s: rollups used = %v (%v), want them read", w.name, used, err)
					}
					got, err := storage.MeterCostSeries(ctx, f.db, reads, w.from, w.to, interval)
					if err != nil {
						t.Fatal(err)
					}
					want, err := storage.MeterCostSeriesFromEvents(ctx, f.db, reads, w.from, w.to, interval)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%s, %s, %s, customer %v: rollups differ from events (-events +rollups):\n%s", step, w.name, interval, c != nil, diff)
					}
					if got[0].Total == 0 || got[0].Total != got[1].Total || got[1].Total != got[2].Total {
						t.Errorf("%s, %s: totals %v, %v, %v; want the same costs, not 0, whatever the aggregation",
							step, w.name, got[0].Total, got[1].Total, got[2].Total)
					}
					if c != nil && w.name == windows[0].name && interval == "day" {
						total = got[0].Total
					}
				}
			}
		}
		return total
	}
	before := compare(t, "rolled up")

	late := d(2, 3)
	ingest(t, f.db, storage.EventWrite{OrganizationID: f.org.ID, Timestamp: late, CustomerID: &f.cust.ID,
		Metadata: `{"_cost": {"amount": "7.125", "currency": "usd"}}`})
	_, _, changed, _, err := storage.MeterRollupPlan(ctx, f.db, meters[0], d(0, 0), d(10, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 1 || time.Unix(changed[0], 0).UTC() != d(2, 0) {
		t.Errorf("changed days = %v, want the 3rd of March only", changed)
	}
	for _, step := range []string{"before the refresh", "after the refresh"} {
		if got := compare(t, step); math.Abs(got-before-7.125) > 1e-9 {
			t.Errorf("%s: total = %v, want %v", step, got, before+7.125)
		}
		refreshRollups(t, f.db, f.now)
	}
}
