package rest

import (
	"till/resolvers"
)

// opt is an optional value as a field's value: nil when absent, so it is null in JSON lines
// and an empty CSV cell.
func opt[V any](p *V) any {
	if p == nil {
		return nil
	}
	return *p
}

// metadataValue is a metadata field's value: null when empty.
func metadataValue(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// orderFields are the fields of Till's order exports.
var orderFields = []tillField[resolvers.OrderExport]{
	{name: "id", value: func(o *resolvers.OrderExport) any { return o.ID }},
	{name: "created_at", value: func(o *resolvers.OrderExport) any { return o.CreatedAt }},
	{name: "status", value: func(o *resolvers.OrderExport) any { return string(o.Status) }},
	{name: "billing_reason", value: func(o *resolvers.OrderExport) any { return string(o.BillingReason) }},
	{name: "organization_id", value: func(o *resolvers.OrderExport) any { return o.OrganizationID }},
	{name: "customer_id", value: func(o *resolvers.OrderExport) any { return o.CustomerID }},
	{name: "customer_email", value: func(o *resolvers.OrderExport) any { return opt(o.CustomerEmail) }, text: true},
	{name: "product_id", value: func(o *resolvers.OrderExport) any { return opt(o.ProductID) }},
	{name: "description", value: func(o *resolvers.OrderExport) any { return o.Description }, text: true},
	{name: "subscription_id", value: func(o *resolvers.OrderExport) any { return opt(o.SubscriptionID) }},
	{name: "checkout_id", value: func(o *resolvers.OrderExport) any { return opt(o.CheckoutID) }},
	{name: "discount_id", value: func(o *resolvers.OrderExport) any { return opt(o.DiscountID) }},
	{name: "currency", value: func(o *resolvers.OrderExport) any { return o.Currency }},
	{name: "subtotal_amount", value: func(o *resolvers.OrderExport) any { return o.SubtotalAmount }},
	{name: "discount_amount", value: func(o *resolvers.OrderExport) any { return o.DiscountAmount }},
	{name: "net_amount", value: func(o *resolvers.OrderExport) any { return o.NetAmount }},
	{name: "tax_amount", value: func(o *resolvers.OrderExport) any { return o.TaxAmount }},
	{name: "total_amount", value: func(o *resolvers.OrderExport) any { return o.TotalAmount }},
	{name: "refunded_amount", value: func(o *resolvers.OrderExport) any { return o.RefundedAmount }},
	{name: "invoice_number", value: func(o *resolvers.OrderExport) any { return opt(o.InvoiceNumber) }},
	{name: "billing_name", value: func(o *resolvers.OrderExport) any { return opt(o.BillingName) }, text: true},
	{name: "billing_country", value: func(o *resolvers.OrderExport) any { return emptyNil(country(o.BillingAddress)) }},
	{name: "metadata", value: func(o *resolvers.OrderExport) any { return metadataValue(o.Metadata) }, text: true},
}

// subscriptionFields are the fields of Till's subscription exports.
var subscriptionFields = []tillField[resolvers.SubscriptionExport]{
	{name: "id", value: func(s *resolvers.SubscriptionExport) any { return s.ID }},
	{name: "created_at", value: func(s *resolvers.SubscriptionExport) any { return s.CreatedAt }},
	{name: "status", value: func(s *resolvers.SubscriptionExport) any { return string(s.Status) }},
	{name: "organization_id", value: func(s *resolvers.SubscriptionExport) any { return s.OrganizationID }},
	{name: "customer_id", value: func(s *resolvers.SubscriptionExport) any { return s.CustomerID }},
	{name: "customer_email", value: func(s *resolvers.SubscriptionExport) any { return opt(s.CustomerEmail) }, text: true},
	{name: "product_id", value: func(s *resolvers.SubscriptionExport) any { return s.ProductID }},
	{name: "product_name", value: func(s *resolvers.SubscriptionExport) any { return s.ProductName }, text: true},
	{name: "amount", value: func(s *resolvers.SubscriptionExport) any { return s.Amount }},
	{name: "currency", value: func(s *resolvers.SubscriptionExport) any { return s.Currency }},
	{name: "recurring_interval", value: func(s *resolvers.SubscriptionExport) any { return string(s.RecurringInterval) }},
	{name: "recurring_interval_count", value: func(s *resolvers.SubscriptionExport) any { return s.RecurringIntervalCount }},
	{name: "seats", value: func(s *resolvers.SubscriptionExport) any { return opt(s.Seats) }},
	{name: "current_period_start", value: func(s *resolvers.SubscriptionExport) any { return s.CurrentPeriodStart }},
	{name: "current_period_end", value: func(s *resolvers.SubscriptionExport) any { return s.CurrentPeriodEnd }},
	{name: "cancel_at_period_end", value: func(s *resolvers.SubscriptionExport) any { return s.CancelAtPeriodEnd }},
	{name: "canceled_at", value: func(s *resolvers.SubscriptionExport) any { return opt(s.CanceledAt) }},
	{name: "started_at", value: func(s *resolvers.SubscriptionExport) any { return opt(s.StartedAt) }},
	{name: "ends_at", value: func(s *resolvers.SubscriptionExport) any { return opt(s.EndsAt) }},
	{name: "ended_at", value: func(s *resolvers.SubscriptionExport) any { return opt(s.EndedAt) }},
	{name: "trial_start", value: func(s *resolvers.SubscriptionExport) any { return opt(s.TrialStart) }},
	{name: "trial_end", value: func(s *resolvers.SubscriptionExport) any { return opt(s.TrialEnd) }},
	{name: "discount_id", value: func(s *resolvers.SubscriptionExport) any { return opt(s.DiscountID) }},
	{name: "customer_cancellation_reason", value: func(s *resolvers.SubscriptionExport) any {
		if s.CustomerCancellationReason == nil {
			return nil
		}
		return string(*s.CustomerCancellationReason)
	}},
	{name: "metadata", value: func(s *resolvers.SubscriptionExport) any { return metadataValue(s.Metadata) }, text: true},
}

// customerFields are the fields of Till's customer exports.
var customerFields = []tillField[resolvers.CustomerExport]{
	{name: "id", value: func(c *resolvers.CustomerExport) any { return c.ID }},
	{name: "created_at", value: func(c *resolvers.CustomerExport) any { return c.CreatedAt }},
	{name: "organization_id", value: func(c *resolvers.CustomerExport) any { return c.OrganizationID }},
	{name: "external_id", value: func(c *resolvers.CustomerExport) any { return opt(c.ExternalID) }, text: true},
	{name: "email", value: func(c *resolvers.CustomerExport) any { return opt(c.Email) }, text: true},
	{name: "name", value: func(c *resolvers.CustomerExport) any { return opt(c.Name) }, text: true},
	{name: "billing_name", value: func(c *resolvers.CustomerExport) any { return opt(c.BillingName) }, text: true},
	{name: "billing_address", value: func(c *resolvers.CustomerExport) any { return opt(c.BillingAddress) }, text: true},
	{name: "tax_id", value: func(c *resolvers.CustomerExport) any { return opt(c.TaxIDValue) }, text: true},
	{name: "tax_id_format", value: func(c *resolvers.CustomerExport) any { return opt(c.TaxIDFormat) }},
	{name: "metadata", value: func(c *resolvers.CustomerExport) any { return metadataValue(c.Metadata) }, text: true},
}

// eventFields are the fields of Till's usage event exports.
var eventFields = []tillField[resolvers.UsageEventExport]{
	{name: "id", value: func(e *resolvers.UsageEventExport) any { return e.ID }},
	{name: "timestamp", value: func(e *resolvers.UsageEventExport) any { return e.Timestamp }},
	{name: "created_at", value: func(e *resolvers.UsageEventExport) any { return e.CreatedAt }},
	{name: "organization_id", value: func(e *resolvers.UsageEventExport) any { return e.OrganizationID }},
	{name: "name", value: func(e *resolvers.UsageEventExport) any { return e.Name }, text: true},
	{name: "source", value: func(e *resolvers.UsageEventExport) any { return e.Source }},
	{name: "customer_id", value: func(e *resolvers.UsageEventExport) any { return opt(e.ResolvedCustomerID) }},
	{name: "external_customer_id", value: func(e *resolvers.UsageEventExport) any { return opt(e.ExternalCustomerID) }, text: true},
	{name: "external_id", value: func(e *resolvers.UsageEventExport) any { return opt(e.ExternalID) }, text: true},
	{name: "parent_id", value: func(e *resolvers.UsageEventExport) any { return opt(e.ParentID) }},
	{name: "metadata", value: func(e *resolvers.UsageEventExport) any { return metadataValue(e.Metadata) }, text: true},
}

// emptyNil is s, or nil when it is empty.
func emptyNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
