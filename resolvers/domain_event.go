package resolvers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// emit records a domain event in the caller's transaction, so the event exists exactly when
// the change does. Its payload is rendered after commit (RenderEvents).
func (r *Resolver) emit(ctx context.Context, tx sqlx.ExtContext, orgID uuid.UUID, typ string, objectID uuid.UUID) error {
	_, err := storage.InsertDomainEvent(ctx, tx, orgID, typ, objectID)
	return err
}

// eventsPage lists the organization's events.
func (r *Resolver) eventsPage(ctx context.Context, page, limit *int, types []string, objectIDs []uuid.UUID) (*model.DomainEventPage, error) {
	p, err := pageOf(page, limit)
	if err != nil {
		return nil, err
	}
	items, total, err := storage.ListDomainEvents(ctx, r.DB, organizations(ctx),
		storage.DomainEventFilter{Types: types, ObjectIDs: objectIDs}, p)
	if err != nil {
		return nil, err
	}
	return &model.DomainEventPage{Items: items, Pagination: pagination(total, p)}, nil
}

// eventPayload is the rendered payload, or null while it is not rendered.
func eventPayload(e *storage.DomainEvent) storage.RawJSON {
	if e.Payload == nil {
		return nil
	}
	return storage.RawJSON(*e.Payload)
}

// EventRenderer renders an event's payload, {"type", "timestamp", "data"} with data the /v1
// shape of the changed object; the /v1 layer provides it because it owns those shapes, so a
// webhook body is byte for byte what GET on the object returns.
type EventRenderer func(ctx context.Context, e *storage.DomainEvent) (string, error)

// ErrNoEventShape means no /v1 shape exists yet for an event's object kind.
var ErrNoEventShape = errors.New("no payload shape for this event type")

// RenderEvents renders up to limit events still missing their payload, oldest first, from
// the committed state of their objects. The serve loop calls it continuously; it is safe to
// run in several processes (a payload is stored once). It returns how many it rendered.
func (r *Resolver) RenderEvents(ctx context.Context, limit int) (int, error) {
	if r.RenderEvent == nil {
		return 0, nil
	}
	events, err := storage.UnrenderedDomainEvents(ctx, r.DB, nil, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range events {
		payload, err := r.RenderEvent(ctx, e)
		if errors.Is(err, ErrNoEventShape) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("rendering event %s (%s): %w", e.ID, e.Type, err)
		}
		if err := storage.SetDomainEventPayload(ctx, r.DB, e.ID, payload); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
