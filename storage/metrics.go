package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// MetricsFilter selects the data of a metrics query. Periods start at the truncation of
// From to Interval in Zone and follow each other until To; only data in [From, To) counts.
type MetricsFilter struct {
	Orgs     []uuid.UUID
	From, To time.Time
	// Interval is a PostgreSQL date_trunc unit: hour, day, week, month or year.
	Interval string
	// Zone is an IANA time zone name the periods are cut in, as PostgreSQL reads it
	// (PostgresZone), and Location is that zone in Go, where the window's days are cut
	// (metricsCalendar); nil loads Zone.
	Zone     string
	Location *time.Location
	// Products and BillingTypes (one_time, recurring) narrow to some products; nil is all.
	Products     []uuid.UUID
	BillingTypes []string
	// Customers narrows to some customers; the rollups do not split by customer, so the
	// query reads the base tables through their customer indexes instead.
	Customers []uuid.UUID
	// Exact says Zone's offset is not a whole number of hours over the window, so that the
	// rollups' UTC hours do not cut into its periods: they are cut at the periods' bounds
	// with pieces of the hours (metricsFlowsSplit). Quarters says the offset is a whole number
	// of quarter hours over the window, as every zone's has been since 1972: the pieces come
	// from the quarter-hour rollups, else from the base tables.
	Exact, Quarters bool
	// Columns names the MetricsPoint columns (db names) the caller reads; nil is all. The
	// others are not computed and read as 0: the metrics asked for decide what is summed,
	// and whether the subscriptions are read at all.
	Columns []string
}

// narrowed says f selects some products, by id or by billing type.
func (f MetricsFilter) narrowed() bool { return f.Products != nil || f.BillingTypes != nil }

// MetricsPoint is one period's values. Flows count what happened during the period; the
// subscription stocks are as of the period's end; the cumulative values add up the
// periods from the first.
type MetricsPoint struct {
	Timestamp               time.Time `db:"timestamp"`
	Orders                  int64     `db:"orders"`
	Revenue                 int64     `db:"revenue"`
	NetRevenue              int64     `db:"net_revenue"`
	CumulativeRevenue       int64     `db:"cumulative_revenue"`
	NetCumulativeRevenue    int64     `db:"net_cumulative_revenue"`
	OneTimeOrders           int64     `db:"one_time_orders"`
	OneTimeRevenue          int64     `db:"one_time_revenue"`
	OneTimeNetRevenue       int64     `db:"one_time_net_revenue"`
	NewOrders               int64     `db:"new_orders"`
	NewRevenue              int64     `db:"new_revenue"`
	NewNetRevenue           int64     `db:"new_net_revenue"`
	RenewalOrders           int64     `db:"renewal_orders"`
	RenewalRevenue          int64     `db:"renewal_revenue"`
	RenewalNetRevenue       int64     `db:"renewal_net_revenue"`
	Checkouts               int64     `db:"checkouts"`
	SucceededCheckouts      int64     `db:"succeeded_checkouts"`
	Canceled                int64     `db:"canceled"`
	CanceledCustomerService int64     `db:"canceled_customer_service"`
	CanceledLowQuality      int64     `db:"canceled_low_quality"`
	CanceledMissingFeatures int64     `db:"canceled_missing_features"`
	CanceledSwitchedService int64     `db:"canceled_switched_service"`
	CanceledTooComplex      int64     `db:"canceled_too_complex"`
	CanceledTooExpensive    int64     `db:"canceled_too_expensive"`
	CanceledUnused          int64     `db:"canceled_unused"`
	CanceledOther           int64     `db:"canceled_other"`
	Churned                 int64     `db:"churned"`
	ActiveSubscriptions     int64     `db:"active_subscriptions"`
	MonthlyRecurringRevenue int64     `db:"monthly_recurring_revenue"`
	ActiveAtStart           int64     `db:"active_at_start"`
	MonthlyRecurringAtStart int64     `db:"monthly_recurring_at_start"`
	// The committed stocks count the active subscriptions neither ended nor set to end
	// (canceled at period end), as the subscriptions are now: a cancellation takes a
	// subscription out of every period. The trial amounts are the monthly amounts of the subscriptions still in
	// their trial at the period's end, which MonthlyRecurringRevenue leaves out.
	CommittedSubscriptions                int64 `db:"committed_subscriptions"`
	CommittedMonthlyRecurringRevenue      int64 `db:"committed_monthly_recurring_revenue"`
	TrialMonthlyRecurringRevenue          int64 `db:"trial_monthly_recurring_revenue"`
	TrialCommittedMonthlyRecurringRevenue int64 `db:"trial_committed_monthly_recurring_revenue"`
	// Subscribers counts the distinct customers holding an active subscription (trials
	// included) at the period's end, of the products selected: a customer of several
	// subscriptions counts once (migration 00109_metric_subscribers).
	Subscribers int64 `db:"subscribers"`
	// Costs sums the _cost amounts (cents, fractional) of the period's events, of every
	// event name; CumulativeCosts adds those of every event before the period's end.
	Costs           float64 `db:"costs"`
	CumulativeCosts float64 `db:"cumulative_costs"`
	// ActiveUsers counts who sent events during the period (a customer, or an external
	// customer id no customer holds); WindowUsers counts them over the whole window, the
	// same on every point.
	ActiveUsers int64 `db:"active_users"`
	WindowUsers int64 `db:"window_users"`
	// SeatsTotal counts the seats present at the period's end (created by then and not
	// revoked), SeatsClaimed those of them claimed by then, SeatCustomers the billing
	// customers holding any; NewSeatCustomers counts those whose first seat came during the
	// period, ChurnedSeatCustomers those whose last seat was revoked during it.
	SeatsTotal           int64 `db:"seats_total"`
	SeatsClaimed         int64 `db:"seats_claimed"`
	SeatCustomers        int64 `db:"seat_customers"`
	NewSeatCustomers     int64 `db:"new_seat_customers"`
	ChurnedSeatCustomers int64 `db:"churned_seat_customers"`
}

// Metrics computes one point per period of f: from the base tables when f names customers,
// else from the hourly rollups for hourly points and the daily ones for longer points; in a
// zone whose offset is not whole hours (f.Exact), from the rollups and pieces of the quarter
// rollups (or of the base tables, f.Quarters unset) at the cuts inside an hour
// (metricsFlowsSplit) for points of a day or longer, and
// from the base tables for hourly points (at most a week, whose hours would all be cut). The
// statement relies on JIT compilation being off (sessionSettings).
func Metrics(ctx context.Context, q sqlx.ExtContext, f MetricsFilter) ([]MetricsPoint, error) {
	return metricsFrom(ctx, q, f, metricsSourcesOf(f))
}

// metricsSourcesOf chooses the sources of f's points, as Metrics says. The rollups hold the
// subscribers of all products and of each product, cut like the other stock in a zone whose
// offset is not whole hours; several products sum their own less the customers holding
// several of them (unless they hold every subscription), and some customers' and hourly
// exact cuts come from the base tables.
func metricsSourcesOf(f MetricsFilter) metricsSources {
	narrowed := f.narrowed()
	rollups := f.Customers == nil && !f.Exact
	subscribers := metricsSubscribersAll
	switch {
	case f.Customers == nil && f.Exact && f.Interval != "hour" && (!narrowed || (len(f.Products) == 1 && f.BillingTypes == nil)):
		subscribers = metricsSubscribersCut
	case !rollups:
		subscribers = metricsSubscribersBase
	case narrowed && (len(f.Products) != 1 || f.BillingTypes != nil):
		subscribers = metricsSubscribersSome
	case narrowed:
		subscribers = metricsSubscribersOne
	}
	src := metricsSources{flowsBefore: metricsFlowsBeforeRollups, subscribers: subscribers, wholeStock: rollups && narrowed}
	switch {
	case f.Customers != nil:
		src.flows, src.deltas, src.flowsBefore = metricsFlowsBase, metricsDeltasBase, metricsFlowsBeforeBase
	case f.Exact && f.Interval == "hour":
		src.flows, src.deltas = metricsFlowsBase, metricsDeltasBase
	case f.Exact:
		// The cuts are the local midnights and the window's bounds: all on quarter hours
		// when the offsets and the bounds are.
		src.split = true
		src.quarters = f.Quarters && f.From.Equal(f.From.Truncate(15*time.Minute)) && f.To.Equal(f.To.Truncate(15*time.Minute))
	case f.Interval == "hour":
		src.flows, src.deltas = metricsFlowsHours, metricsDeltasHours
	default:
		src.flows, src.deltas, src.days = metricsFlowsDays, metricsDeltasDays, true
	}
	return src
}

// metricsFrom computes the points of f from src. The plan is q's connection's: reads of the
// rollups are meant for a pool that plans them generically (OpenAnalytics), reads for
// customers for one that plans them with their arguments.
func metricsFrom(ctx context.Context, q sqlx.ExtContext, f MetricsFilter, src metricsSources) ([]MetricsPoint, error) {
	query, args, err := metricsStatement(f, src)
	if err != nil {
		return nil, err
	}
	points, err := scanMetricsArrays(ctx, q, query, args...)
	return points, mapErr(err)
}

// metricsStatement writes the series statement of f over src and its arguments.
func metricsStatement(f MetricsFilter, src metricsSources) (string, []any, error) {
	narrowed := f.narrowed()
	query := metricsQuery(src, f.Columns, narrowed)
	var customers, products any
	if f.Customers != nil {
		customers = pq.Array(f.Customers)
	}
	if f.Products != nil {
		products = pq.Array(f.Products)
	}
	var billing any
	if f.BillingTypes != nil {
		billing = pq.Array(f.BillingTypes)
	}
	args := []any{pq.Array(f.Orgs), f.From, f.To, f.Interval, products, billing, f.Zone, customers, narrowed}
	if !src.days {
		return query, append(args, nil, nil, nil, nil, nil), nil
	}
	loc := f.Location
	if loc == nil {
		var err error
		if loc, err = time.LoadLocation(f.Zone); err != nil {
			return "", nil, ErrUnknownTimeZone
		}
	}
	return query, append(args, metricsCalendarOf(f.From, f.To, loc).args()...), nil
}

// FoldMetrics moves the metric changes that writers appended (migration
// 00096_metric_changes), the subscriber islands of the customers they queued (migration
// 00109_metric_subscribers) and the events ingested since the last fold (migration
// 00100_metric_costs) into the rollups, one organization per transaction, and returns how
// many change rows and events it folded. An organization another process is folding is
// skipped. Readers are exact either way; folding keeps what they read beyond the rollups
// small.
func FoldMetrics(ctx context.Context, db *sqlx.DB) (int, error) {
	var orgs []uuid.UUID
	if err := sqlx.SelectContext(ctx, db, &orgs, `SELECT organization_id FROM metric_hour_changes
		UNION SELECT organization_id FROM metric_subscription_delta_changes
		UNION SELECT organization_id FROM metric_subscriber_queue
		UNION SELECT o.id FROM organizations o WHERE EXISTS (SELECT 1 FROM events
			WHERE organization_id = o.id AND xid < pg_snapshot_xmin(pg_current_snapshot())
				AND xid >= coalesce((SELECT below FROM metric_event_folds WHERE organization_id = o.id), '0'::xid8))`); err != nil {
		return 0, mapErr(err)
	}
	total := 0
	for _, org := range orgs {
		err := InTx(ctx, db, func(tx *sqlx.Tx) error {
			var n *int
			err := tx.GetContext(ctx, &n, `SELECT CASE WHEN pg_try_advisory_xact_lock(hashtextextended('till.metric_fold.' || $1::uuid, 0))
				THEN metric_fold($1::uuid) + metric_events_fold($1::uuid) END`, org)
			if n != nil {
				total += *n
			}
			return err
		})
		if err != nil {
			return total, mapErr(err)
		}
	}
	return total, nil
}
