package resolvers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// EventIngest is one usage event of an ingest, as GraphQL and /v1 both hand it over.
type EventIngest struct {
	Name           string
	Timestamp      *time.Time
	OrganizationID *uuid.UUID
	ExternalID     *string
	ParentID       *string
	Metadata       map[string]any
	// MetadataJSON, when set, is metadata already validated and encoded as a JSON object (by
	// /v1, which streams large batches); Metadata is then nil.
	MetadataJSON       json.RawMessage
	CustomerID         *uuid.UUID
	MemberID           *uuid.UUID
	ExternalCustomerID *string
	ExternalMemberID   *string
}

// eventNameMaxLength is upstream's limit on event names.
const eventNameMaxLength = 128

// IngestEvents stores a batch of usage events, all or nothing (contract §4.5): every item is
// checked first, all failures are reported together with their index, and only a batch
// without any is written, in one transaction. Duplicate external ids (earlier batches,
// concurrent ones, or earlier in this one) are counted, not stored.
func (r *Resolver) IngestEvents(ctx context.Context, events []EventIngest) (*model.UsageEventsIngestResult, error) {
	now := r.Now().UTC()
	var errs []FieldError
	for i := range events {
		errs = append(errs, checkEventShape(&events[i], i, now)...)
	}
	if len(errs) > 0 {
		return nil, &Error{Code: CodeValidation, Errors: errs}
	}
	// From here on only the rows are needed: events is not used again, so the garbage
	// collector can free a large batch's input while the rows are copied.
	submitted := len(events)
	writes, errs, err := r.eventWrites(ctx, events, now)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, &Error{Code: CodeValidation, Errors: errs}
	}
	inserted, err := storage.IngestEvents(ctx, r.db, writes, now)
	if err != nil {
		return nil, err
	}
	return &model.UsageEventsIngestResult{Inserted: inserted, Duplicates: submitted - inserted}, nil
}

// eventWrites runs the checks that need the database and the principal, in upstream's order
// per item (organization, then customer, then member), and builds the rows to store. A
// customer or member must be of the organization the event goes to: a user of several
// organizations could otherwise file one organization's event under another's customer.
func (r *Resolver) eventWrites(ctx context.Context, events []EventIngest, now time.Time) ([]storage.EventWrite, []FieldError, error) {
	p := auth.FromContext(ctx)
	orgs := organizations(ctx)
	var customerIDs, memberIDs []uuid.UUID
	for _, e := range events {
		if e.CustomerID != nil {
			customerIDs = append(customerIDs, *e.CustomerID)
		}
		if e.MemberID != nil {
			memberIDs = append(memberIDs, *e.MemberID)
		}
	}
	customers, err := storage.LiveCustomerIDs(ctx, r.db, orgs, customerIDs)
	if err != nil {
		return nil, nil, err
	}
	members, err := storage.LiveMemberIDs(ctx, r.db, orgs, memberIDs)
	if err != nil {
		return nil, nil, err
	}
	writes := make([]storage.EventWrite, 0, len(events))
	var errs []FieldError
	for i, e := range events {
		loc := func(field string) []any { return []any{"input", "events", i, field} }
		org, ferr := eventOrganization(p, orgs, e.OrganizationID, loc("organizationId"))
		switch {
		case ferr != nil:
		case e.CustomerID != nil && customers[*e.CustomerID] != org:
			ferr = &FieldError{Type: "customer_id", Loc: loc("customerId"), Msg: "Customer not found.", Input: e.CustomerID.String()}
		case e.MemberID != nil && members[*e.MemberID] != org:
			ferr = &FieldError{Type: "member_id", Loc: loc("memberId"), Msg: "Member not found.", Input: e.MemberID.String()}
		}
		if ferr != nil {
			errs = append(errs, *ferr)
			continue
		}
		w, err := eventWrite(e, org, now)
		if err != nil {
			return nil, nil, err
		}
		writes = append(writes, w)
	}
	return writes, errs, nil
}

// eventOrganization is the organization an event goes to: an organization token's own (and
// the event must not name one), or for a user the named one, which must be theirs.
func eventOrganization(p auth.Principal, orgs []uuid.UUID, requested *uuid.UUID, loc []any) (uuid.UUID, *FieldError) {
	if p.Kind == auth.KindOrganization {
		if requested != nil {
			return uuid.Nil, &FieldError{Type: "organization_token", Loc: loc, Input: requested.String(),
				Msg: "Setting organization_id is disallowed when using an organization token."}
		}
		return p.OrganizationID, nil
	}
	if requested == nil {
		return uuid.Nil, &FieldError{Type: "missing", Loc: loc, Msg: "organization_id is required."}
	}
	if !slices.Contains(orgs, *requested) {
		return uuid.Nil, &FieldError{Type: "organization_id", Loc: loc, Msg: "Organization not found.", Input: requested.String()}
	}
	return *requested, nil
}

// eventWrite builds the stored row; the timestamp defaults to the time of ingestion.
func eventWrite(e EventIngest, org uuid.UUID, now time.Time) (storage.EventWrite, error) {
	meta := []byte("{}")
	if len(e.MetadataJSON) > 0 {
		meta = e.MetadataJSON
	} else if len(e.Metadata) > 0 {
		var err error
		if meta, err = json.Marshal(e.Metadata); err != nil {
			return storage.EventWrite{}, fmt.Errorf("event metadata: %w", err)
		}
	}
	ts := now
	if e.Timestamp != nil {
		ts = e.Timestamp.UTC()
	}
	return storage.EventWrite{ID: uuid.New(), OrganizationID: org, Timestamp: ts, Name: e.Name,
		CustomerID: e.CustomerID, ExternalCustomerID: e.ExternalCustomerID, MemberID: e.MemberID,
		ExternalMemberID: e.ExternalMemberID, ExternalID: e.ExternalID, ParentReference: e.ParentID,
		Metadata: string(meta)}, nil
}

// checkEventShape checks what a schema states about one event: the /v1 body validation
// already enforces it with upstream's exact messages, GraphQL callers get it here.
func checkEventShape(e *EventIngest, i int, now time.Time) []FieldError {
	loc := func(path ...any) []any { return append([]any{"input", "events", i}, path...) }
	var errs []FieldError
	if n := utf8.RuneCountInString(e.Name); n > eventNameMaxLength {
		errs = append(errs, FieldError{Type: "string_too_long", Loc: loc("name"), Input: e.Name,
			Msg: "String should have at most 128 characters", Ctx: map[string]any{"max_length": eventNameMaxLength}})
	}
	if e.Timestamp != nil && e.Timestamp.After(now) {
		errs = append(errs, FieldError{Type: "value_error", Loc: loc("timestamp"), Input: e.Timestamp.Format(time.RFC3339Nano),
			Msg: "Value error, Timestamp must be in the past.", Ctx: map[string]any{"error": map[string]any{}}})
	}
	switch {
	case (e.CustomerID == nil) == (e.ExternalCustomerID == nil):
		errs = append(errs, FieldError{Type: "value_error", Loc: loc("customerId"), Input: nil,
			Msg: "Value error, An event names its customer by customerId or by externalCustomerId, exactly one of them."})
	case e.MemberID != nil && e.CustomerID == nil:
		errs = append(errs, FieldError{Type: "value_error", Loc: loc("memberId"), Input: e.MemberID.String(),
			Msg: "Value error, memberId goes with customerId; use externalMemberId with externalCustomerId."})
	case e.ExternalMemberID != nil && e.ExternalCustomerID == nil:
		errs = append(errs, FieldError{Type: "value_error", Loc: loc("externalMemberId"), Input: *e.ExternalMemberID,
			Msg: "Value error, externalMemberId goes with externalCustomerId; use memberId with customerId."})
	}
	return append(errs, checkEventMetadata(e.Metadata, loc("metadata"))...)
}

// eventPartitionsAhead is how many monthly partitions of events exist from the current
// month on. An hourly task keeps them there, so a month's partition exists long before its
// first event and nothing lands in the catch-all default partition.
const eventPartitionsAhead = 4

// EnsureEventPartitions creates the monthly event partitions that are missing from the
// current month on, returning how many it created.
func (r *Resolver) EnsureEventPartitions(ctx context.Context) (int, error) {
	return storage.EnsureEventPartitions(ctx, r.db, r.Now(), eventPartitionsAhead)
}
