package resolvers

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// Event lists are read by cursor: defaultEventPage events unless first says otherwise, and
// never more than maxEventPage, larger requests being clamped as limits are elsewhere.
const (
	defaultEventPage = 100
	maxEventPage     = 1000
)

// eventSorts whitelists the event list's one sorting criterion.
var eventSorts = map[string]string{"timestamp": `"timestamp"`}

// usageEvent reads one event of the caller's organizations.
func (r *Resolver) usageEvent(ctx context.Context, id uuid.UUID) (*storage.Event, error) {
	e, err := storage.GetEvent(ctx, r.DB, organizations(ctx), id)
	return e, notFoundOr(err, "")
}

// usageEventsPage lists the caller's events after a cursor and loads the customers of the
// page at once when the operation selects them.
func (r *Resolver) usageEventsPage(ctx context.Context, first *int, after *string, sorting []string, f *model.UsageEventFilter) (*model.UsageEventPage, error) {
	lq, err := eventListQuery(first, after, sorting)
	if err != nil {
		return nil, err
	}
	orgs := organizations(ctx)
	if f != nil {
		lq.Filter = eventListFilter(f)
		if f.OrganizationID != nil {
			orgs = slices.DeleteFunc(slices.Clone(orgs), func(o uuid.UUID) bool { return !slices.Contains(f.OrganizationID, o) })
		}
	}
	items, more, err := storage.ListEvents(ctx, r.DB, orgs, lq)
	if err != nil {
		return nil, err
	}
	record(ctx, items)
	info := &model.CursorPageInfo{HasNextPage: more}
	if len(items) > 0 {
		last := items[len(items)-1]
		info.EndCursor = ptrTo(encodeEventCursor(storage.EventCursor{Timestamp: last.Timestamp, ID: last.ID}))
	}
	return &model.UsageEventPage{Items: items, PageInfo: info}, nil
}

// eventListQuery validates the page arguments: first, then the cursor, then the sorting.
func eventListQuery(first *int, after *string, sorting []string) (storage.EventListQuery, error) {
	lq := storage.EventListQuery{Limit: defaultEventPage}
	if first != nil {
		if *first <= 0 {
			return lq, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "greater_than",
				Loc: []any{"query", "first"}, Msg: "Input should be greater than 0", Input: *first}}}
		}
		lq.Limit = min(*first, maxEventPage)
	}
	if after != nil {
		c, err := decodeEventCursor(*after)
		if err != nil {
			return lq, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "value_error",
				Loc: []any{"query", "after"}, Msg: "Invalid cursor: " + err.Error(), Input: *after}}}
		}
		lq.Cursor = &c
	}
	sorts, err := sortsOf(sorting, eventSorts)
	if err != nil {
		return lq, err
	}
	lq.Ascending = len(sorts) > 0 && !sorts[0].Desc
	return lq, nil
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

// eventCursorSize is a cursor's length before encoding: the timestamp in microseconds since
// the epoch (PostgreSQL's precision, so the position is exact) and the id.
const eventCursorSize = 8 + 16

// encodeEventCursor makes the opaque cursor of a position: base64url, unpadded.
func encodeEventCursor(c storage.EventCursor) string {
	b := make([]byte, eventCursorSize)
	binary.BigEndian.PutUint64(b, uint64(c.Timestamp.UnixMicro()))
	copy(b[8:], c.ID[:])
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeEventCursor reads a cursor made by encodeEventCursor.
func decodeEventCursor(s string) (storage.EventCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != eventCursorSize {
		return storage.EventCursor{}, fmt.Errorf("not a cursor of this list")
	}
	id, _ := uuid.FromBytes(b[8:])
	return storage.EventCursor{Timestamp: time.UnixMicro(int64(binary.BigEndian.Uint64(b))).UTC(), ID: id}, nil
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
