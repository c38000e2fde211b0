package resolvers

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// defaultEventPage is how many events a window holds when neither first nor last is given.
// Event lists are read by cursor only: an offset deep into millions of events would cost
// every row before it.
const defaultEventPage = 100

// eventSorts whitelists the event list's one sorting criterion.
var eventSorts = map[string]string{"timestamp": `"timestamp"`}

// usageEvent reads one event of the caller's organizations.
func (r *Resolver) usageEvent(ctx context.Context, id uuid.UUID) (*storage.Event, error) {
	e, err := storage.GetEvent(ctx, r.db, organizations(ctx), id)
	return e, notFoundOr(err, "")
}

// usageEventsPage lists a window of the caller's events; their customers load in one
// statement when the operation selects them.
func (r *Resolver) usageEventsPage(ctx context.Context, a listArgs, f *model.UsageEventFilter) (*model.UsageEventPage, error) {
	lq, err := eventListQuery(a, f)
	if err != nil {
		return nil, err
	}
	p, err := storage.ListEvents(ctx, r.db, eventOrganizations(ctx, f), lq)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return &model.UsageEventPage{Items: p.Items, PageInfo: pageInfo(p, lq.Window)}, nil
}

// customerUsageEvents is Customer.usageEvents: a window of each customer's events of the
// level, in one statement.
func (r *Resolver) customerUsageEvents(ctx context.Context, c *storage.Customer, a listArgs, f *model.UsageEventFilter) (*model.UsageEventPage, error) {
	lq, err := eventListQuery(a, f)
	if err != nil {
		return nil, err
	}
	orgs := eventOrganizations(ctx, f)
	l, err := windowsOf(ctx, "Customer.usageEvents", []any{a.key(), f}, &lq.Window, func(ctx context.Context, ids []uuid.UUID) ([]storage.Paged[*storage.Event], error) {
		return storage.EventWindowsByCustomers(ctx, r.db, orgs, ids, lq)
	})
	if err != nil {
		return nil, err
	}
	p, err := related(ctx, l, c, func(c *storage.Customer) uuid.UUID { return c.ID })
	if err != nil {
		return nil, cursorErr(err, a)
	}
	return &model.UsageEventPage{Items: p.Items, PageInfo: pageInfo(p, lq.Window)}, nil
}

// eventListQuery reads an event window's arguments like every list's (first or last from 1
// to 100, cursors, sorting) except that without first and last it holds defaultEventPage
// events, and the filter.
func eventListQuery(a listArgs, f *model.UsageEventFilter) (storage.EventListQuery, error) {
	w, sorts, err := a.windowAndSorts(eventSorts)
	if err != nil {
		return storage.EventListQuery{}, err
	}
	if a.first == nil && a.last == nil {
		w.Limit = defaultEventPage
	}
	lq := storage.EventListQuery{Window: w, Ascending: len(sorts) > 0 && !sorts[0].Desc}
	if f != nil {
		lq.Filter = eventListFilter(f)
	}
	return lq, nil
}

// eventOrganizations are the caller's organizations, narrowed by the filter's
// organizationId when given.
func eventOrganizations(ctx context.Context, f *model.UsageEventFilter) []uuid.UUID {
	orgs := organizations(ctx)
	if f != nil && f.OrganizationID != nil {
		orgs = slices.DeleteFunc(slices.Clone(orgs), func(o uuid.UUID) bool { return !slices.Contains(f.OrganizationID, o) })
	}
	return orgs
}

// eventListFilter turns the GraphQL filter into the storage one.
func eventListFilter(f *model.UsageEventFilter) storage.EventListFilter {
	sources := make([]string, len(f.Source))
	for i, s := range f.Source {
		sources[i] = string(s)
	}
	return storage.EventListFilter{CustomerIDs: f.CustomerID, ExternalCustomerIDs: f.ExternalCustomerID,
		Names: f.Name, Sources: sources, After: f.StartTimestamp, Before: f.EndTimestamp,
		Metadata: metadataOf(f.Metadata), ParentID: f.ParentID}
}

// eventCustomer is the event's customer, by id or by external id (see storage.Event).
func eventCustomer(ctx context.Context, e *storage.Event) (*storage.Customer, error) {
	if e.ResolvedCustomerID == nil {
		return nil, nil
	}
	return relatedOpt(ctx, loaders(ctx).Customer, e, func(e *storage.Event) *uuid.UUID { return e.ResolvedCustomerID })
}

// eventLabel is upstream's Event.label: system events have fixed labels; a user event
// shows its type's label, or the metadata property the type's label selector names when
// the event has it, and its name when it has no type.
func eventLabel(e *storage.Event) string {
	if e.Source == "system" {
		if l, ok := systemEventLabels[e.Name]; ok {
			return l
		}
		return e.Name
	}
	if e.TypeLabel == nil {
		return e.Name
	}
	if e.LabelPropertySelector != nil {
		if v := metadataPath(e.Metadata, *e.LabelPropertySelector); v != "" {
			return v
		}
	}
	return *e.TypeLabel
}

// metadataPath reads a dot-separated path ("_llm.model") of metadata as text; "" when the
// path leads nowhere or to an object.
func metadataPath(m storage.JSONMap, path string) string {
	var v any = map[string]any(m)
	for _, key := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = obj[key]
	}
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// systemEventLabels are the labels of the events Till records itself, as upstream shows them.
var systemEventLabels = map[string]string{
	"benefit.granted":                     "Benefit Granted",
	"benefit.cycled":                      "Benefit Cycled",
	"benefit.updated":                     "Benefit Updated",
	"benefit.revoked":                     "Benefit Revoked",
	"subscription.created":                "Subscription Created",
	"subscription.updated":                "Subscription Updated",
	"subscription.canceled":               "Subscription Canceled",
	"subscription.cycled":                 "Subscription Cycled",
	"subscription.revoked":                "Subscription Revoked",
	"subscription.past_due":               "Subscription Past Due",
	"subscription.reactivated":            "Subscription Reactivated",
	"subscription.uncanceled":             "Subscription Uncanceled",
	"subscription.product_updated":        "Subscription Product Updated",
	"subscription.seats_updated":          "Subscription Seats Updated",
	"subscription.billing_period_updated": "Subscription Billing Period Updated",
	"subscription.update_cleared":         "Subscription Update Cleared",
	"order.paid":                          "Order Paid",
	"order.refunded":                      "Order Refunded",
	"order.voided":                        "Order Voided",
	"checkout.created":                    "Checkout Created",
	"customer.created":                    "Customer Created",
	"customer.updated":                    "Customer Updated",
	"customer.deleted":                    "Customer Deleted",
	"meter.credited":                      "Meter Credited",
	"meter.reset":                         "Meter Reset",
	"balance.order":                       "Balance Order",
	"balance.credit_order":                "Balance Credit Order",
	"balance.refund":                      "Balance Refund",
	"balance.refund_reversal":             "Balance Refund Reversal",
	"balance.dispute":                     "Balance Dispute",
	"balance.dispute_reversal":            "Balance Dispute Reversal",
}
