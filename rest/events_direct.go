package rest

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/resolvers"
	"till/rest/fastapi"
)

// ingestDirect serves POST /v1/events/ingest. A batch holds up to thousands of events, and
// executing the persisted operation would coerce every one of them through GraphQL again
// after the body validation already did; the route hands the validated events to the use
// case instead. The operation still authorizes the route, and a test requires the same
// bytes both ways.
func ingestDirect(r *resolvers.Resolver, present func(context.Context, error) *gqlerror.Error) DirectFunc {
	return func(ctx context.Context, vars map[string]any) (json.RawMessage, *gqlerror.Error) {
		in, _ := vars["input"].(map[string]any)
		items, _ := in["events"].([]any)
		events := make([]resolvers.EventIngest, len(items))
		for i, item := range items {
			switch item := item.(type) {
			case resolvers.EventIngest: // kept by ingestStream
				events[i] = item
			case map[string]any:
				events[i] = eventIngestOf(item)
			}
			items[i] = nil // each kept event exists once at a time
		}
		res, err := r.IngestEvents(ctx, events)
		if err != nil {
			return nil, present(ctx, err)
		}
		body := make([]byte, 0, 48)
		body = append(body, `{"inserted":`...)
		body = strconv.AppendInt(body, int64(res.Inserted), 10)
		body = append(body, `,"duplicates":`...)
		body = strconv.AppendInt(body, int64(res.Duplicates), 10)
		return append(body, '}'), nil
	}
}

// ingestStream validates the events of a batch one by one as the body is parsed and keeps
// each as the use case takes it, its metadata already encoded: of a 10 MiB batch of small
// events, only the events themselves are held, not three trees of maps.
var ingestStream = &fastapi.Stream{Field: "events", Keep: func(item map[string]any) any {
	e := eventIngestOf(item)
	if e.Metadata != nil {
		if b, err := json.Marshal(e.Metadata); err == nil {
			e.Metadata, e.MetadataJSON = nil, b
		}
	}
	return e
}}

// eventIngestOf reads one validated event (GraphQL names, canonical values).
func eventIngestOf(m map[string]any) resolvers.EventIngest {
	str := func(name string) *string {
		if s, isStr := m[name].(string); isStr {
			return &s
		}
		return nil
	}
	id := func(name string) *uuid.UUID {
		if s := str(name); s != nil {
			if u, err := uuid.Parse(*s); err == nil {
				return &u
			}
		}
		return nil
	}
	e := resolvers.EventIngest{OrganizationID: id("organizationId"), ExternalID: str("externalId"),
		ParentID: str("parentId"), CustomerID: id("customerId"), MemberID: id("memberId"),
		ExternalCustomerID: str("externalCustomerId"), ExternalMemberID: str("externalMemberId")}
	e.Name, _ = m["name"].(string)
	if s := str("timestamp"); s != nil {
		if t, err := time.Parse(time.RFC3339Nano, *s); err == nil {
			e.Timestamp = &t
		}
	}
	e.Metadata, _ = m["metadata"].(map[string]any)
	return e
}
