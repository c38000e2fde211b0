package rest

import (
	"io"
	"strconv"
	"time"

	"till/resolvers"

	"till/rest/fastapi"
)

// csvColumn is one column of a CSV export: its name in the columns parameter, its header
// and how a row's cell is written in the export's time zone.
type csvColumn[T any] struct {
	name, header string
	cell         func(row *T, tz *time.Location) string
}

// csvColumns are the columns an export can hold, in upstream's order.
type csvColumns[T any] []csvColumn[T]

// names are the columns' names, the values of the columns parameter.
func (cs csvColumns[T]) names() []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// pick returns the named columns in the order named (a name twice is a column twice, as
// upstream writes it); names are validated values of the columns parameter.
func (cs csvColumns[T]) pick(names []any) csvColumns[T] {
	var out csvColumns[T]
	for _, n := range names {
		for _, c := range cs {
			if c.name == n {
				out = append(out, c)
			}
		}
	}
	return out
}

// writeCSV writes the header row, then one row per row the stream hands over, reusing one
// slice of cells.
func writeCSV[T any](w io.Writer, cols csvColumns[T], tz *time.Location, stream func(func(*T) error) error) error {
	out := &csvOut{w: w}
	cells := make([]string, len(cols))
	for i, c := range cols {
		cells[i] = c.header
	}
	if err := out.write(cells); err != nil {
		return err
	}
	return stream(func(row *T) error {
		for i, c := range cols {
			cells[i] = c.cell(row, tz)
		}
		return out.write(cells)
	})
}

// orderCSV are upstream's order export columns (ORDER_EXPORT_HEADERS).
var orderCSV = csvColumns[resolvers.OrderExport]{
	{"email", "Email", func(o *resolvers.OrderExport, _ *time.Location) string { return cell(o.CustomerEmail) }},
	{"created_at", "Created At", func(o *resolvers.OrderExport, tz *time.Location) string { return pyISO(o.CreatedAt, tz) }},
	{"product", "Product", func(o *resolvers.OrderExport, _ *time.Location) string { return o.Description }},
	{"net_amount", "Net Amount", func(o *resolvers.OrderExport, _ *time.Location) string { return pyCents(o.NetAmount) }},
	{"currency", "Currency", func(o *resolvers.OrderExport, _ *time.Location) string { return o.Currency }},
	{"status", "Status", func(o *resolvers.OrderExport, _ *time.Location) string { return string(o.Status) }},
	{"invoice_number", "Invoice number", func(o *resolvers.OrderExport, _ *time.Location) string { return cell(o.InvoiceNumber) }},
	{"customer_name", "Customer Name", func(o *resolvers.OrderExport, _ *time.Location) string { return cell(o.CustomerName) }},
	{"billing_name", "Billing Name", func(o *resolvers.OrderExport, _ *time.Location) string { return cell(o.BillingName) }},
	{"billing_country", "Billing Country", func(o *resolvers.OrderExport, _ *time.Location) string { return country(o.BillingAddress) }},
	{"subtotal_amount", "Subtotal", func(o *resolvers.OrderExport, _ *time.Location) string { return pyCents(o.SubtotalAmount) }},
	{"discount_amount", "Discount", func(o *resolvers.OrderExport, _ *time.Location) string { return pyCents(o.DiscountAmount) }},
	{"tax_amount", "Tax", func(o *resolvers.OrderExport, _ *time.Location) string { return pyCents(o.TaxAmount) }},
	{"total_amount", "Total", func(o *resolvers.OrderExport, _ *time.Location) string { return pyCents(o.TotalAmount) }},
	{"refunded_amount", "Refunded Amount", func(o *resolvers.OrderExport, _ *time.Location) string { return pyCents(o.RefundedAmount) }},
	{"billing_reason", "Billing Reason", func(o *resolvers.OrderExport, _ *time.Location) string { return string(o.BillingReason) }},
}

// orderDefaults are the columns of an order export that names none.
var orderDefaults = orderCSV.pick([]any{"email", "created_at", "product", "net_amount", "currency", "status", "invoice_number"})

// subscriptionCSV are upstream's subscription export columns (SUBSCRIPTION_EXPORT_HEADERS).
var subscriptionCSV = csvColumns[resolvers.SubscriptionExport]{
	{"email", "Email", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return cell(s.CustomerEmail) }},
	{"started_at", "Started At", func(s *resolvers.SubscriptionExport, tz *time.Location) string { return pyISOOpt(s.StartedAt, tz) }},
	{"product", "Product", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return s.ProductName }},
	{"amount", "Amount", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return pyCents(s.Amount) }},
	{"currency", "Currency", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return s.Currency }},
	{"status", "Status", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return string(s.Status) }},
	{"recurring_interval", "Billing Interval", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return billingInterval(s) }},
	{"customer_name", "Customer Name", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return cell(s.CustomerName) }},
	{"billing_name", "Billing Name", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return cell(s.CustomerBillingName) }},
	{"billing_country", "Billing Country", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return cell(s.CustomerBillingCountry) }},
	{"net_amount", "Net Amount", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return pyCents(s.Amount) }},
	{"discount", "Discount", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return discountLabel(s) }},
	{"seats", "Seats", func(s *resolvers.SubscriptionExport, _ *time.Location) string { return intText(s.Seats) }},
	{"current_period_start", "Current Period Start", func(s *resolvers.SubscriptionExport, tz *time.Location) string {
		return pyISO(s.CurrentPeriodStart, tz)
	}},
	{"current_period_end", "Current Period End", func(s *resolvers.SubscriptionExport, tz *time.Location) string {
		return pyISO(s.CurrentPeriodEnd, tz)
	}},
	{"cancel_at_period_end", "Cancels At Period End", func(s *resolvers.SubscriptionExport, _ *time.Location) string {
		return strconv.FormatBool(s.CancelAtPeriodEnd)
	}},
	{"canceled_at", "Canceled At", func(s *resolvers.SubscriptionExport, tz *time.Location) string { return pyISOOpt(s.CanceledAt, tz) }},
	{"ends_at", "Ends At", func(s *resolvers.SubscriptionExport, tz *time.Location) string { return pyISOOpt(s.EndsAt, tz) }},
	{"ended_at", "Ended At", func(s *resolvers.SubscriptionExport, tz *time.Location) string { return pyISOOpt(s.EndedAt, tz) }},
	{"cancellation_reason", "Cancellation Reason", func(s *resolvers.SubscriptionExport, _ *time.Location) string {
		if s.CustomerCancellationReason == nil {
			return ""
		}
		return string(*s.CustomerCancellationReason)
	}},
	{"trial_start", "Trial Start", func(s *resolvers.SubscriptionExport, tz *time.Location) string { return pyISOOpt(s.TrialStart, tz) }},
	{"trial_end", "Trial End", func(s *resolvers.SubscriptionExport, tz *time.Location) string { return pyISOOpt(s.TrialEnd, tz) }},
}

// subscriptionDefaults are the columns of a subscription export that names none.
var subscriptionDefaults = subscriptionCSV.pick([]any{"email", "started_at", "product", "amount", "currency", "status",
	"recurring_interval"})

// customerCSV are the columns of upstream's customer export, which takes no columns parameter.
var customerCSV = csvColumns[resolvers.CustomerExport]{
	{"id", "ID", func(c *resolvers.CustomerExport, _ *time.Location) string { return c.ID.String() }},
	{"external_id", "External ID", func(c *resolvers.CustomerExport, _ *time.Location) string { return cell(c.ExternalID) }},
	{"created_at", "Created At", func(c *resolvers.CustomerExport, tz *time.Location) string { return pyISO(c.CreatedAt, tz) }},
	{"email", "Email", func(c *resolvers.CustomerExport, _ *time.Location) string { return cell(c.Email) }},
	{"name", "Name", func(c *resolvers.CustomerExport, _ *time.Location) string { return cell(c.Name) }},
	{"tax_id", "Tax ID", func(c *resolvers.CustomerExport, _ *time.Location) string { return pyTaxID(c) }},
	{"line1", "Billing Address Line 1", func(c *resolvers.CustomerExport, _ *time.Location) string {
		return addressPart(c.BillingAddress, func(a *resolvers.ExportAddress) *string { return a.Line1 })
	}},
	{"line2", "Billing Address Line 2", func(c *resolvers.CustomerExport, _ *time.Location) string {
		return addressPart(c.BillingAddress, func(a *resolvers.ExportAddress) *string { return a.Line2 })
	}},
	{"city", "Billing Address City", func(c *resolvers.CustomerExport, _ *time.Location) string {
		return addressPart(c.BillingAddress, func(a *resolvers.ExportAddress) *string { return a.City })
	}},
	{"state", "Billing Address State", func(c *resolvers.CustomerExport, _ *time.Location) string {
		return addressPart(c.BillingAddress, func(a *resolvers.ExportAddress) *string { return a.State })
	}},
	{"postal_code", "Billing Address Zip", func(c *resolvers.CustomerExport, _ *time.Location) string {
		return addressPart(c.BillingAddress, func(a *resolvers.ExportAddress) *string { return a.PostalCode })
	}},
	{"country", "Billing Address Country", func(c *resolvers.CustomerExport, _ *time.Location) string { return country(c.BillingAddress) }},
	{"metadata", "Metadata", func(c *resolvers.CustomerExport, _ *time.Location) string {
		if c.MetadataText == "" || c.MetadataText == "{}" {
			return "" // upstream writes json.dumps(metadata) only when it is not empty
		}
		return fastapi.PyASCII(c.MetadataText)
	}},
}

// billingInterval is upstream's interval cell: "month", or "3 months" for a count above one.
func billingInterval(s *resolvers.SubscriptionExport) string {
	if s.RecurringIntervalCount == 1 {
		return string(s.RecurringInterval)
	}
	return strconv.Itoa(s.RecurringIntervalCount) + " " + string(s.RecurringInterval) + "s"
}

// discountLabel is upstream's discount cell: the code, or the name when there is no code.
func discountLabel(s *resolvers.SubscriptionExport) string {
	if s.DiscountCode != nil && *s.DiscountCode != "" {
		return *s.DiscountCode
	}
	return cell(s.DiscountName)
}

// pyTaxID is the Tax ID cell as upstream's CSV writer prints its (value, TaxIDFormat) tuple.
func pyTaxID(c *resolvers.CustomerExport) string {
	if c.TaxIDValue == nil || c.TaxIDFormat == nil {
		return ""
	}
	f := *c.TaxIDFormat
	return "(" + fastapi.PyRepr(*c.TaxIDValue) + ", <TaxIDFormat." + f + ": " + fastapi.PyRepr(f) + ">)"
}

// country is an address's country, empty without an address.
func country(a *resolvers.ExportAddress) string {
	if a == nil {
		return ""
	}
	return a.Country
}

// addressPart is one optional part of an optional address.
func addressPart(a *resolvers.ExportAddress, part func(*resolvers.ExportAddress) *string) string {
	if a == nil {
		return ""
	}
	return cell(part(a))
}
