package resolvers

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

const webhookEventNotFound = "Webhook event not found"

// webhookEventsPage lists the organization's webhook events, newest first. When the
// operation selects the events' deliveries, they are loaded for the whole window at once.
func (r *Resolver) webhookEventsPage(ctx context.Context, endpointID *uuid.UUID, types []string, succeeded *bool,
	a listArgs) (*model.WebhookEventPage, error) {
	f := storage.WebhookEventFilter{EndpointID: endpointID, Types: types, Succeeded: succeeded}
	p, w, err := rootWindow(ctx, a, nil, func(_ []storage.Sort, w storage.Window) (storage.Paged[*storage.WebhookEvent], error) {
		return storage.ListWebhookEvents(ctx, r.db, organizations(ctx), f, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.WebhookEventPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// webhookEvent reads one of the organization's webhook events.
func (r *Resolver) webhookEvent(ctx context.Context, id uuid.UUID) (*storage.WebhookEvent, error) {
	e, err := storage.GetWebhookEvent(ctx, r.db, organizations(ctx), id)
	if err != nil {
		return nil, notFoundOr(err, webhookEventNotFound)
	}
	return e, nil
}

// webhookDeliveries lists an event's attempts through the operation's loader.
func (r *Resolver) webhookDeliveries(ctx context.Context, e *storage.WebhookEvent) ([]*storage.WebhookDelivery, error) {
	all, err := related(ctx, loaders(ctx).DeliveriesByWebhookEvent, e, func(e *storage.WebhookEvent) uuid.UUID { return e.ID })
	return all[max(0, len(all)-MaxEventDeliveries):], err
}

// redeliverWebhookEvent queues an event again and wakes the dispatcher so it goes out now
// rather than at the next poll. When the queue refuses, the event is read again to tell the
// caller why: an event it cannot see is not found, but an archived event or one being sent
// right now exists, and saying so is more useful than pretending it does not.
func (r *Resolver) redeliverWebhookEvent(ctx context.Context, id uuid.UUID) (*storage.WebhookEvent, error) {
	orgs := organizations(ctx)
	e, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.WebhookEvent, error) {
		return storage.RedeliverWebhookEvent(ctx, q, orgs, id)
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, r.redeliveryRefusal(ctx, orgs, id)
	}
	if err != nil {
		return nil, err
	}
	if r.webhooks != nil {
		r.webhooks.Wake()
	}
	return e, nil
}

// redeliveryRefusal explains why an event of the organizations could not be queued again.
func (r *Resolver) redeliveryRefusal(ctx context.Context, orgs []uuid.UUID, id uuid.UUID) error {
	e, err := storage.GetWebhookEvent(ctx, r.db, orgs, id)
	switch {
	case err != nil:
		return notFoundOr(err, webhookEventNotFound)
	case e.IsArchived:
		return BadRequest("The webhook event is archived: its payload is no longer kept.")
	default:
		return BadRequest("The webhook event is being delivered right now; redeliver it once the attempt ends.")
	}
}
