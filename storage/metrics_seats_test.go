package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/storage"
	"till/storage/storagetest"
)

// metricsSeat is a seat of the test, at times given as hours after seatsOrigin (claimed and
// revoked are none when the seat was not).
type metricsSeat struct {
	source                    int // index into the test's sources
	created, claimed, revoked int
}

// none is the hour of what did not happen.
const none = -1 << 30

// seatsOrigin is the test's hour 0.
var seatsOrigin = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// seatsReference is upstream's seat metrics (server/polar/metrics/metrics.py and
// get_seats_cte), computed seat by seat for the period starting at local in the zone:
// seats present in the period, claimed by it, their billing customers, customers whose
// first seat is of the period and present in it, and customers whose seats are all revoked,
// the last in the period. Seats created at or after end are not counted present.
func seatsReference(seats []metricsSeat, customerOf func(metricsSeat) uuid.UUID, trunc func(time.Time) time.Time,
	local, end time.Time) storage.MetricsPoint {
	at := func(h int) time.Time { return seatsOrigin.Add(time.Duration(h) * time.Hour) }
	var p storage.MetricsPoint
	holders, fresh := map[uuid.UUID]bool{}, map[uuid.UUID]bool{}
	first, lastRevoked, open := map[uuid.UUID]time.Time{}, map[uuid.UUID]time.Time{}, map[uuid.UUID]bool{}
	for _, s := range seats {
		c := customerOf(s)
		created := trunc(at(s.created))
		if f, ok := first[c]; !ok || created.Before(f) {
			first[c] = created
		}
		if s.revoked == none {
			open[c] = true
		} else if r := trunc(at(s.revoked)); r.After(lastRevoked[c]) {
			lastRevoked[c] = r
		}
		present := at(s.created).Before(end) && !created.After(local) && (s.revoked == none || trunc(at(s.revoked)).After(local))
		if !present {
			continue
		}
		p.SeatsTotal++
		if s.claimed != none && !trunc(at(s.claimed)).After(local) {
			p.SeatsClaimed++
		}
		holders[c] = true
		if created.Equal(local) {
			fresh[c] = true
		}
	}
	p.SeatCustomers = int64(len(holders))
	for c := range fresh {
		if first[c].Equal(local) {
			p.NewSeatCustomers++
		}
	}
	for c, r := range lastRevoked {
		if !open[c] && r.Equal(local) {
			p.ChurnedSeatCustomers++
		}
	}
	return p
}

// TestMetricsSeats checks the seat metrics against upstream's definitions computed seat by
// seat, per day and per month, in UTC and in a zone of half hours, for all products, one
// product and one customer.
func TestMetricsSeats(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	ctx := context.Background()
	s := newMetricsShop(t, db)
	other, err := storage.CreateProduct(ctx, db, s.org, storage.ProductWrite{Name: "Team", Visibility: "public"})
	if err != nil {
		t.Fatal(err)
	}
	customers := []uuid.UUID{s.customer}
	for i := range 3 {
		c, err := storage.CreateCustomer(ctx, db, s.org, storage.CustomerWrite{Type: storage.CustomerTypeIndividual,
			Email: ptr(fmt.Sprintf("seats%d-%s@example.com", i, s.org))})
		if err != nil {
			t.Fatal(err)
		}
		customers = append(customers, c.ID)
	}
	// Sources: subscriptions of customers 0 and 1 (products s.product and other), a one-time
	// order of customer 2 (s.product), a second subscription of customer 0 (other), a
	// subscription of customer 3 (s.product).
	type source struct {
		customer, product uuid.UUID
		subscription      bool
		id                uuid.UUID
	}
	sources := []source{{customers[0], s.product, true, uuid.Nil}, {customers[1], other.ID, true, uuid.Nil},
		{customers[2], s.product, false, uuid.Nil}, {customers[0], other.ID, true, uuid.Nil},
		{customers[3], s.product, true, uuid.Nil}}
	began := seatsOrigin.AddDate(0, -2, 0)
	for i := range sources {
		src := &sources[i]
		if !src.subscription {
			shop := metricsShop{org: s.org, customer: src.customer, product: src.product}
			src.id = shop.order(t, db, began, 1000, "purchase")
			continue
		}
		sub, err := storage.CreateSubscription(ctx, db, s.org, began, storage.SubscriptionWrite{CustomerID: src.customer,
			ProductID: src.product, Status: "active", Amount: 1000, Currency: "usd", RecurringInterval: "month",
			RecurringIntervalCount: 1, CurrentPeriodStart: began, CurrentPeriodEnd: began.AddDate(0, 1, 0), StartedAt: &began})
		if err != nil {
			t.Fatal(err)
		}
		src.id = sub.ID
	}
	seats := []metricsSeat{
		{0, -400, -300, none}, // before the window, claimed before it, still held
		{0, 5, 30, none},      // claimed the next day
		{0, 10, none, 50},     // revoked two days later, never claimed
		{1, 26, 27, 29},       // created, claimed and revoked within a day
		{1, 100, 101, 200},    // customer 1's last seat: revoked, so the customer churns
		{2, 47, 47, none},     // the order's seat
		{2, 48, 400, 300},     // claimed after it was revoked: never counted claimed
		{3, 70, none, none},   // customer 0's second subscription
		{3, 600, 610, none},   // after a March window's end, in April
		{1, -800, none, -500}, // revoked before the window
		{0, 120, 121, 122},    // revoked within the hour's day
		{2, 12 + 24*15, none, none},
		{4, 150, none, 160},  // customer 3's first seat, gone within its day: not a new customer then
		{4, 200, none, none}, // nor two days later, having had a seat before
	}
	for _, seat := range seats {
		src := sources[seat.source]
		at := func(h int) any {
			if h == none {
				return nil
			}
			return seatsOrigin.Add(time.Duration(h) * time.Hour)
		}
		status := "pending"
		if seat.claimed != none {
			status = "claimed"
		}
		if seat.revoked != none {
			status = "revoked"
		}
		var sub, order any
		if src.subscription {
			sub = src.id
		} else {
			order = src.id
		}
		if _, err := db.Exec(`INSERT INTO customer_seats (organization_id, subscription_id, order_id, status, customer_id,
				created_at, claimed_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			s.org, sub, order, status, src.customer, at(seat.created), at(seat.claimed), at(seat.revoked)); err != nil {
			t.Fatal(err)
		}
	}

	filters := []struct {
		name     string
		products []uuid.UUID
		customer *uuid.UUID
		keep     func(metricsSeat) bool
	}{
		{"all products", nil, nil, func(metricsSeat) bool { return true }},
		{"one product", []uuid.UUID{other.ID}, nil, func(m metricsSeat) bool { return sources[m.source].product == other.ID }},
		{"one customer", nil, &customers[0], func(m metricsSeat) bool { return sources[m.source].customer == customers[0] }},
	}
	windows := []struct {
		interval string
		zone     string
		from, to time.Time // local dates
	}{
		{"day", "UTC", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)},
		{"day", "Asia/Kolkata", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)},
		{"month", "UTC", time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 21, 0, 0, 0, 0, time.UTC)},
	}
	var seen storage.MetricsPoint // sums of the references, so that none is zero throughout
	cols := []string{"seats_total", "seats_claimed", "seat_customers", "new_seat_customers", "churned_seat_customers"}
	for _, w := range windows {
		loc, err := time.LoadLocation(w.zone)
		if err != nil {
			t.Fatal(err)
		}
		trunc := func(at time.Time) time.Time {
			l := at.In(loc)
			if w.interval == "month" {
				return time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
			}
			return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc)
		}
		from := time.Date(w.from.Year(), w.from.Month(), w.from.Day(), 0, 0, 0, 0, loc)
		to := time.Date(w.to.Year(), w.to.Month(), w.to.Day(), 0, 0, 0, 0, loc)
		for _, f := range filters {
			t.Run(fmt.Sprintf("%s in %s, %s", w.interval, w.zone, f.name), func(t *testing.T) {
				mf := storage.MetricsFilter{Orgs: []uuid.UUID{s.org}, From: from, To: to, Interval: w.interval, Zone: w.zone,
					Products: f.products, Exact: w.zone != "UTC", Columns: cols}
				if f.customer != nil {
					mf.Customers = []uuid.UUID{*f.customer}
				}
				points, err := storage.Metrics(ctx, db, mf)
				if err != nil {
					t.Fatal(err)
				}
				var kept []metricsSeat
				for _, seat := range seats {
					if f.keep(seat) {
						kept = append(kept, seat)
					}
				}
				customerOf := func(m metricsSeat) uuid.UUID { return sources[m.source].customer }
				var want, got []storage.MetricsPoint
				for _, p := range points {
					r := seatsReference(kept, customerOf, trunc, trunc(p.Timestamp), to)
					r.Timestamp = p.Timestamp
					seen.SeatsTotal += r.SeatsTotal
					seen.SeatsClaimed += r.SeatsClaimed
					seen.NewSeatCustomers += r.NewSeatCustomers
					seen.ChurnedSeatCustomers += r.ChurnedSeatCustomers
					want = append(want, r)
					got = append(got, storage.MetricsPoint{Timestamp: p.Timestamp, SeatsTotal: p.SeatsTotal,
						SeatsClaimed: p.SeatsClaimed, SeatCustomers: p.SeatCustomers, NewSeatCustomers: p.NewSeatCustomers,
						ChurnedSeatCustomers: p.ChurnedSeatCustomers})
				}
				if len(points) == 0 {
					t.Fatal("no points")
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("seat metrics differ from upstream's definitions (-want +got):\n%s", diff)
				}
			})
		}
	}
	if seen.SeatsTotal == 0 || seen.SeatsClaimed == 0 || seen.NewSeatCustomers == 0 || seen.ChurnedSeatCustomers == 0 {
		t.Errorf("the seats exercise too little: %+v", seen)
	}
}
