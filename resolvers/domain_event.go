package resolvers

import (
	"context"

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
