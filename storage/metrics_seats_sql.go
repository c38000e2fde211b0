package storage

import (
	"fmt"
	"strings"
)

// metricsSeatColumns are the MetricsPoint columns read from the seats of seat-based
// subscriptions and orders. Seats are few next to orders and change by hand (an invitation,
// a claim, a revocation), so they are read from customer_seats through its organization
// index rather than kept in rollups.
var metricsSeatColumns = [...]string{"seats_total", "seats_claimed", "seat_customers", "new_seat_customers",
	"churned_seat_customers"}

// metricsSeatRows are the seats a series reads, as upstream reads them: those of a
// subscription or order of a product in sel, of a customer in $8 when it is set; each with
// its billing customer (the subscription's or order's), whether it was created before the
// window's end, and the periods (local starts) it was created, claimed and revoked in.
const metricsSeatRows = `, seat_rows AS (
		SELECT coalesce(b.customer_id, o.customer_id) AS customer, s.created_at < $3 AS counted,
			date_trunc($4, s.created_at AT TIME ZONE $7) AS created,
			date_trunc($4, s.claimed_at AT TIME ZONE $7) AS claimed,
			date_trunc($4, s.revoked_at AT TIME ZONE $7) AS revoked
		FROM customer_seats s
			LEFT JOIN subscriptions b ON b.id = s.subscription_id
			LEFT JOIN orders o ON o.id = s.order_id
		WHERE s.organization_id = ANY($1) AND coalesce(b.product_id, o.product_id) IN (SELECT id FROM sel)
			AND ($8::uuid[] IS NULL OR coalesce(b.customer_id, o.customer_id) = ANY($8))
	)`

// metricsSeatStock counts, at each period, the seats present in it (created in it or
// before, not revoked in it or before), those of them claimed by then, and the billing
// customers holding any: changes per period (a customer's when its present seats go from
// none to some or back), run from the first period on, those before the window included.
const metricsSeatStock = `, seat_changes AS (
		SELECT key, sum(total) AS total, sum(claimed) AS claimed FROM (
			SELECT created AS key, 1 AS total, 0 AS claimed FROM seat_rows WHERE counted
			UNION ALL SELECT revoked, -1, 0 FROM seat_rows WHERE counted AND revoked IS NOT NULL
			UNION ALL SELECT greatest(created, claimed), 0, 1 FROM seat_rows
				WHERE counted AND claimed IS NOT NULL AND (revoked IS NULL OR revoked > greatest(created, claimed))
			UNION ALL SELECT revoked, 0, -1 FROM seat_rows
				WHERE counted AND claimed IS NOT NULL AND revoked > greatest(created, claimed)) c
		GROUP BY key
	), seat_holder_changes AS (
		SELECT key, sum(CASE WHEN held - d <= 0 AND held > 0 THEN 1 WHEN held - d > 0 AND held <= 0 THEN -1 ELSE 0 END) AS customers
		FROM (SELECT key, d, sum(d) OVER (PARTITION BY customer ORDER BY key) AS held
			FROM (SELECT customer, key, sum(d) AS d FROM (
					SELECT customer, created AS key, 1 AS d FROM seat_rows WHERE counted AND customer IS NOT NULL
					UNION ALL SELECT customer, revoked, -1 FROM seat_rows WHERE counted AND customer IS NOT NULL AND revoked IS NOT NULL) x
				GROUP BY customer, key) y) z
		GROUP BY key
	), seat_stock AS (
		SELECT p.local,
			(SELECT coalesce(sum(total), 0) FROM seat_changes WHERE key < (SELECT min(local) FROM periods))
				+ sum(coalesce(c.total, 0)) OVER w AS total,
			(SELECT coalesce(sum(claimed), 0) FROM seat_changes WHERE key < (SELECT min(local) FROM periods))
				+ sum(coalesce(c.claimed, 0)) OVER w AS claimed,
			(SELECT coalesce(sum(customers), 0) FROM seat_holder_changes WHERE key < (SELECT min(local) FROM periods))
				+ sum(coalesce(h.customers, 0)) OVER w AS customers
		FROM periods p LEFT JOIN seat_changes c ON c.key = p.local LEFT JOIN seat_holder_changes h ON h.key = p.local
		WINDOW w AS (ORDER BY p.local)
	)`

// metricsSeatNew counts, per period, the billing customers whose first seat (of any seat
// read, revoked ones included) was created in it and who hold one of those seats through
// it (upstream's new_seat_customers).
const metricsSeatNew = `, seat_new AS (
		SELECT f.first AS key, count(*) AS customers
		FROM (SELECT customer, min(created) AS first FROM seat_rows WHERE customer IS NOT NULL GROUP BY customer) f
		WHERE EXISTS (SELECT 1 FROM seat_rows r WHERE r.customer = f.customer AND r.counted AND r.created = f.first
			AND (r.revoked IS NULL OR r.revoked > r.created))
		GROUP BY f.first
	)`

// metricsSeatChurned counts, per period, the billing customers all of whose seats are
// revoked, the last of them in it (upstream's churned_seat_customers).
const metricsSeatChurned = `, seat_churned AS (
		SELECT key, count(*) AS customers
		FROM (SELECT max(revoked) AS key FROM seat_rows WHERE customer IS NOT NULL
			GROUP BY customer HAVING count(*) = count(revoked)) c
		GROUP BY key
	)`

// metricsSeats writes the seat CTEs the columns in want need, and returns the series'
// outputs (over periods p) and the joins they need.
func metricsSeats(q *strings.Builder, want func(string) bool) (out []string, joins string) {
	stock := want("seats_total") || want("seats_claimed") || want("seat_customers")
	if !stock && !want("new_seat_customers") && !want("churned_seat_customers") {
		return nil, ""
	}
	q.WriteString(metricsSeatRows)
	if stock {
		q.WriteString(metricsSeatStock)
		joins += " JOIN seat_stock ss ON ss.local = p.local"
		for _, c := range [...][2]string{{"seats_total", "total"}, {"seats_claimed", "claimed"}, {"seat_customers", "customers"}} {
			if want(c[0]) {
				out = append(out, fmt.Sprintf("ss.%s::bigint AS %s", c[1], c[0]))
			}
		}
	}
	if want("new_seat_customers") {
		q.WriteString(metricsSeatNew)
		joins += " LEFT JOIN seat_new sn ON sn.key = p.local"
		out = append(out, "coalesce(sn.customers, 0) AS new_seat_customers")
	}
	if want("churned_seat_customers") {
		q.WriteString(metricsSeatChurned)
		joins += " LEFT JOIN seat_churned sc ON sc.key = p.local"
		out = append(out, "coalesce(sc.customers, 0) AS churned_seat_customers")
	}
	return out, joins
}
