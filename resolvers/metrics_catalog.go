package resolvers

import (
	"math"
	"reflect"
	"slices"

	"till/graph/model"
	"till/storage"
)

// metricDef is one metric of upstream's catalog that Till computes: its wire slug, the
// name and type a dashboard shows, how a period's value is read from the rollup point
// (of for counts and amounts in cents, real for fractional amounts, ratio for rates and
// averages), and how the window's total folds the periods. window, when set, is a value of
// the whole window (the same on every point) that the total is instead, or, for a ratio,
// that the summed numerators are divided by.
type metricDef struct {
	slug, display string
	typ           model.MetricType
	agg           aggregation
	of            func(p *storage.MetricsPoint) int64
	real          func(p *storage.MetricsPoint) float64
	ratio         func(p *storage.MetricsPoint) (num, den float64)
	window        func(p *storage.MetricsPoint) float64
	// parts, for a metric of several columns whose value can be 0 with one of them set
	// (average revenue per user without subscribers), are the values it is made of: reads
	// asks them instead.
	parts func(p *storage.MetricsPoint) []float64
}

// reads reports whether d's value at p is not zero: at a point with one column set, whether
// d reads that column.
func (d *metricDef) reads(p *storage.MetricsPoint) bool {
	if d.window != nil && d.window(p) != 0 {
		return true
	}
	switch {
	case d.parts != nil:
		return slices.ContainsFunc(d.parts(p), func(v float64) bool { return v != 0 })
	case d.ratio != nil:
		num, den := d.ratio(p)
		return num != 0 || den != 0
	case d.real != nil:
		return d.real(p) != 0
	}
	return d.of(p) != 0
}

// metricColumns are the storage.MetricsPoint columns (db names) that defs read, found by
// setting each column alone on a point and asking each def whether it moved. Deriving them
// keeps the catalog's functions the one place that says what a metric is made of.
func metricColumns(defs []*metricDef) []string {
	t := reflect.TypeFor[storage.MetricsPoint]()
	cols := []string{}
	for i := range t.NumField() {
		var p storage.MetricsPoint
		switch f := reflect.ValueOf(&p).Elem().Field(i); f.Kind() {
		case reflect.Int64:
			f.SetInt(1)
		case reflect.Float64:
			f.SetFloat(1)
		default:
			continue
		}
		if slices.ContainsFunc(defs, func(d *metricDef) bool { return d.reads(&p) }) {
			cols = append(cols, t.Field(i).Tag.Get("db"))
		}
	}
	return cols
}

// aggregation is how a metric's total over the window comes from its periods.
type aggregation int

const (
	// aggregateSum adds the periods up (flows: orders, revenue, cancellations).
	aggregateSum aggregation = iota
	// aggregateLast takes the last period (stocks and running sums: MRR, cumulative revenue).
	aggregateLast
	// aggregateRatio divides the summed numerators by the summed denominators.
	aggregateRatio
)

// metricDefs are the metrics Till computes, in the order of upstream's catalog (the order
// of the response's fields and of the export's columns).
var metricDefs = [...]metricDef{
	{slug: "active_subscriptions", display: "Active Subscriptions", typ: model.MetricTypeScalar, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return p.ActiveSubscriptions }},
	{slug: "committed_subscriptions", display: "Committed Subscriptions", typ: model.MetricTypeScalar, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return p.CommittedSubscriptions }},
	{slug: "monthly_recurring_revenue", display: "Monthly Recurring Revenue", typ: model.MetricTypeCurrency, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return p.MonthlyRecurringRevenue }},
	// Upstream names the trial amount of the subscriptions set to end "including
	// cancelations" and the committed one plainly.
	{slug: "trial_monthly_recurring_revenue", display: "Trialing MRR Including Cancelations", typ: model.MetricTypeCurrency,
		agg: aggregateLast, of: func(p *storage.MetricsPoint) int64 { return p.TrialMonthlyRecurringRevenue }},
	{slug: "committed_monthly_recurring_revenue", display: "Committed Monthly Recurring Revenue", typ: model.MetricTypeCurrency,
		agg: aggregateLast, of: func(p *storage.MetricsPoint) int64 { return p.CommittedMonthlyRecurringRevenue }},
	{slug: "trial_committed_monthly_recurring_revenue", display: "Trialing Monthly Recurring Revenue", typ: model.MetricTypeCurrency,
		agg: aggregateLast, of: func(p *storage.MetricsPoint) int64 { return p.TrialCommittedMonthlyRecurringRevenue }},
	{slug: "average_revenue_per_user", display: "Average Revenue Per User", typ: model.MetricTypeCurrency, agg: aggregateLast,
		of: averageRevenuePerUser, parts: averageRevenuePerUserParts},
	{slug: "checkouts", display: "Checkouts", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.Checkouts }},
	{slug: "succeeded_checkouts", display: "Succeeded Checkouts", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.SucceededCheckouts }},
	{slug: "churned_subscriptions", display: "Churned Subscriptions", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.Churned }},
	{slug: "churn_rate", display: "Churn Rate", typ: model.MetricTypePercentage, agg: aggregateLast,
		ratio: func(p *storage.MetricsPoint) (float64, float64) { return float64(p.Churned), float64(p.ActiveAtStart) }},
	{slug: "seats_total", display: "Seat Count", typ: model.MetricTypeScalar, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return p.SeatsTotal }},
	{slug: "seats_claimed", display: "Claimed Seats", typ: model.MetricTypeScalar, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return p.SeatsClaimed }},
	{slug: "seats_pending", display: "Pending Seats", typ: model.MetricTypeScalar, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return p.SeatsTotal - p.SeatsClaimed }},
	{slug: "seat_customers", display: "Active Customers", typ: model.MetricTypeScalar, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return p.SeatCustomers }},
	{slug: "new_seat_customers", display: "New Customers", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.NewSeatCustomers }},
	{slug: "churned_seat_customers", display: "Churned Customers", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.ChurnedSeatCustomers }},
	{slug: "orders", display: "Orders", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.Orders }},
	{slug: "revenue", display: "Revenue", typ: model.MetricTypeCurrency, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.Revenue }},
	{slug: "net_revenue", display: "Net Revenue", typ: model.MetricTypeCurrency, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.NetRevenue }},
	{slug: "cumulative_revenue", display: "Cumulative Revenue", typ: model.MetricTypeCurrency, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return p.CumulativeRevenue }},
	{slug: "net_cumulative_revenue", display: "Net Cumulative Revenue", typ: model.MetricTypeCurrency, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return p.NetCumulativeRevenue }},
	{slug: "costs", display: "Costs", typ: model.MetricTypeCurrencySubCent, agg: aggregateSum,
		real: func(p *storage.MetricsPoint) float64 { return p.Costs }},
	{slug: "cumulative_costs", display: "Cumulative Costs", typ: model.MetricTypeCurrencySubCent, agg: aggregateLast,
		real: func(p *storage.MetricsPoint) float64 { return p.CumulativeCosts }},
	{slug: "average_order_value", display: "Average Order Value", typ: model.MetricTypeCurrency, agg: aggregateRatio,
		ratio: func(p *storage.MetricsPoint) (float64, float64) { return float64(p.Revenue), float64(p.Orders) }},
	{slug: "net_average_order_value", display: "Net Average Order Value", typ: model.MetricTypeCurrency, agg: aggregateRatio,
		ratio: func(p *storage.MetricsPoint) (float64, float64) { return float64(p.NetRevenue), float64(p.Orders) }},
	{slug: "cost_per_user", display: "Cost Per User", typ: model.MetricTypeCurrencySubCent, agg: aggregateRatio,
		ratio:  func(p *storage.MetricsPoint) (float64, float64) { return p.Costs, float64(p.ActiveUsers) },
		window: func(p *storage.MetricsPoint) float64 { return float64(p.WindowUsers) }},
	{slug: "active_user_by_event", display: "Active User (By event)", typ: model.MetricTypeScalar, agg: aggregateSum,
		of:     func(p *storage.MetricsPoint) int64 { return p.ActiveUsers },
		window: func(p *storage.MetricsPoint) float64 { return float64(p.WindowUsers) }},
	{slug: "one_time_products", display: "One-Time Products", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.OneTimeOrders }},
	{slug: "one_time_products_revenue", display: "One-Time Products Revenue", typ: model.MetricTypeCurrency, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.OneTimeRevenue }},
	{slug: "one_time_products_net_revenue", display: "One-Time Products Net Revenue", typ: model.MetricTypeCurrency, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.OneTimeNetRevenue }},
	{slug: "new_subscriptions", display: "New Subscriptions", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.NewOrders }},
	{slug: "new_subscriptions_revenue", display: "New Subscriptions Revenue", typ: model.MetricTypeCurrency, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.NewRevenue }},
	{slug: "new_subscriptions_net_revenue", display: "New Subscriptions Net Revenue", typ: model.MetricTypeCurrency, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.NewNetRevenue }},
	{slug: "renewed_subscriptions", display: "Renewed Subscriptions", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.RenewalOrders }},
	{slug: "renewed_subscriptions_revenue", display: "Renewed Subscriptions Revenue", typ: model.MetricTypeCurrency, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.RenewalRevenue }},
	{slug: "renewed_subscriptions_net_revenue", display: "Renewed Subscriptions Net Revenue", typ: model.MetricTypeCurrency, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.RenewalNetRevenue }},
	{slug: "canceled_subscriptions", display: "Canceled Subscriptions", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.Canceled }},
	{slug: "canceled_subscriptions_customer_service", display: "Canceled Subscriptions - Customer Service", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.CanceledCustomerService }},
	{slug: "canceled_subscriptions_low_quality", display: "Canceled Subscriptions - Low Quality", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.CanceledLowQuality }},
	{slug: "canceled_subscriptions_missing_features", display: "Canceled Subscriptions - Missing Features", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.CanceledMissingFeatures }},
	{slug: "canceled_subscriptions_switched_service", display: "Canceled Subscriptions - Switched Service", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.CanceledSwitchedService }},
	{slug: "canceled_subscriptions_too_complex", display: "Canceled Subscriptions - Too Complex", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.CanceledTooComplex }},
	{slug: "canceled_subscriptions_too_expensive", display: "Canceled Subscriptions - Too Expensive", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.CanceledTooExpensive }},
	{slug: "canceled_subscriptions_unused", display: "Canceled Subscriptions - Unused", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.CanceledUnused }},
	{slug: "canceled_subscriptions_other", display: "Canceled Subscriptions - Other", typ: model.MetricTypeScalar, agg: aggregateSum,
		of: func(p *storage.MetricsPoint) int64 { return p.CanceledOther }},
	{slug: "annual_recurring_revenue", display: "Annual Recurring Revenue", typ: model.MetricTypeCurrency, agg: aggregateLast,
		of: func(p *storage.MetricsPoint) int64 { return 12 * p.MonthlyRecurringRevenue }},
	{slug: "committed_annual_recurring_revenue", display: "Committed Annual Recurring Revenue", typ: model.MetricTypeCurrency,
		agg: aggregateLast, of: func(p *storage.MetricsPoint) int64 { return 12 * p.CommittedMonthlyRecurringRevenue }},
	{slug: "checkouts_conversion", display: "Checkouts Conversion Rate", typ: model.MetricTypePercentage, agg: aggregateRatio,
		ratio: func(p *storage.MetricsPoint) (float64, float64) {
			return float64(p.SucceededCheckouts), float64(p.Checkouts)
		}},
	{slug: "ltv", display: "Lifetime Value", typ: model.MetricTypeCurrency, agg: aggregateLast,
		of: lifetimeValue, parts: func(p *storage.MetricsPoint) []float64 {
			return append(averageRevenuePerUserParts(p), p.Costs, float64(p.ActiveUsers), float64(p.Churned),
				float64(p.ActiveAtStart))
		}},
	{slug: "gross_margin", display: "Gross Margin", typ: model.MetricTypeCurrency, agg: aggregateLast,
		real: func(p *storage.MetricsPoint) float64 { return float64(p.CumulativeRevenue) - p.CumulativeCosts }},
	{slug: "gross_margin_percentage", display: "Gross Margin %", typ: model.MetricTypePercentage, agg: aggregateLast,
		ratio: func(p *storage.MetricsPoint) (float64, float64) {
			return float64(p.CumulativeRevenue) - p.CumulativeCosts, float64(p.CumulativeRevenue)
		}},
	{slug: "cashflow", display: "Cashflow", typ: model.MetricTypeCurrency, agg: aggregateSum,
		real: func(p *storage.MetricsPoint) float64 { return float64(p.Revenue) - p.Costs }},
	{slug: "average_seats_per_customer", display: "Average Seats per Customer", typ: model.MetricTypeScalar, agg: aggregateLast,
		ratio: func(p *storage.MetricsPoint) (float64, float64) {
			return float64(p.SeatsTotal), float64(p.SeatCustomers)
		}},
	{slug: "seat_utilization_rate", display: "Seat Utilization Rate", typ: model.MetricTypePercentage, agg: aggregateLast,
		ratio: func(p *storage.MetricsPoint) (float64, float64) {
			return float64(p.SeatsClaimed), float64(p.SeatsTotal)
		}},
}

// averageRevenuePerUser is the monthly recurring revenue per customer holding an active
// subscription at the period's end, rounded half away from zero as upstream's SQL round;
// 0 without any.
func averageRevenuePerUser(p *storage.MetricsPoint) int64 {
	if p.Subscribers == 0 {
		return 0
	}
	return int64(math.Round(float64(p.MonthlyRecurringRevenue) / float64(p.Subscribers)))
}

func averageRevenuePerUserParts(p *storage.MetricsPoint) []float64 {
	return []float64{float64(p.MonthlyRecurringRevenue), float64(p.Subscribers)}
}

// lifetimeValue is upstream's: the period's average revenue per user less its cost per user,
// over its churn rate, truncated toward zero as Python's int and at least 0; 0 when the churn
// rate is.
func lifetimeValue(p *storage.MetricsPoint) int64 {
	churn := ratioOf(float64(p.Churned), float64(p.ActiveAtStart))
	if churn == 0 {
		return 0
	}
	return max(0, int64((float64(averageRevenuePerUser(p))-ratioOf(p.Costs, float64(p.ActiveUsers)))/churn))
}

// upstreamMetricSlugs are every slug upstream accepts in the metrics parameter, all of which
// Till computes.
var upstreamMetricSlugs = [...]string{
	"active_subscriptions", "committed_subscriptions", "monthly_recurring_revenue",
	"trial_monthly_recurring_revenue", "committed_monthly_recurring_revenue",
	"trial_committed_monthly_recurring_revenue", "average_revenue_per_user", "checkouts",
	"succeeded_checkouts", "churned_subscriptions", "churn_rate", "seats_total", "seats_claimed",
	"seats_pending", "seat_customers", "new_seat_customers", "churned_seat_customers", "orders",
	"revenue", "net_revenue", "cumulative_revenue", "net_cumulative_revenue", "costs",
	"cumulative_costs", "average_order_value", "net_average_order_value", "cost_per_user",
	"active_user_by_event", "one_time_products", "one_time_products_revenue",
	"one_time_products_net_revenue", "new_subscriptions", "new_subscriptions_revenue",
	"new_subscriptions_net_revenue", "renewed_subscriptions", "renewed_subscriptions_revenue",
	"renewed_subscriptions_net_revenue", "canceled_subscriptions",
	"canceled_subscriptions_customer_service", "canceled_subscriptions_low_quality",
	"canceled_subscriptions_missing_features", "canceled_subscriptions_switched_service",
	"canceled_subscriptions_too_complex", "canceled_subscriptions_too_expensive",
	"canceled_subscriptions_unused", "canceled_subscriptions_other", "annual_recurring_revenue",
	"committed_annual_recurring_revenue", "checkouts_conversion", "ltv", "gross_margin",
	"gross_margin_percentage", "cashflow", "average_seats_per_customer", "seat_utilization_rate",
}
