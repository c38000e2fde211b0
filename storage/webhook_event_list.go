package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// WebhookDelivery is one HTTP attempt of a webhook event, kept so an organization can see why
// an endpoint did not take an event. Response is the start of the answer's body, or the
// network error when there was no answer.
type WebhookDelivery struct {
	ID             uuid.UUID `db:"id"`
	CreatedAt      time.Time `db:"created_at"`
	WebhookEventID uuid.UUID `db:"webhook_event_id"`
	Attempt        int       `db:"attempt"`
	HTTPCode       *int      `db:"http_code"`
	Response       *string   `db:"response"`
	Succeeded      bool      `db:"succeeded"`
}

// WebhookEventFilter narrows a webhook event list; nil and empty fields do not filter.
// Succeeded matches the events settled that way, so pending events (succeeded null) match
// neither true nor false.
type WebhookEventFilter struct {
	EndpointID *uuid.UUID
	Types      []string
	Succeeded  *bool
}

// ListWebhookEvents returns one window of the webhook events of the given organizations,
// newest first, with the total count. Events of deleted endpoints stay listed: they are the
// record of what was sent.
func ListWebhookEvents(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f WebhookEventFilter, w Window) (Paged[*WebhookEvent], error) {
	c := orgFilters("organization_id", orgs)
	ifSet(c, "webhook_endpoint_id = $%d", f.EndpointID)
	anyOf(c, "type", f.Types)
	ifSet(c, "succeeded = $%d", f.Succeeded)
	return listWindow[*WebhookEvent](ctx, q, listSQL{Columns: webhookEventColumns, From: "webhook_events", ID: "id",
		Where: c.where, Args: c.args, Default: []Sort{{Column: "created_at", Desc: true}}}, w)
}

// GetWebhookEvent reads a webhook event of the given organizations.
func GetWebhookEvent(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*WebhookEvent, error) {
	var e WebhookEvent
	err := sqlx.GetContext(ctx, q, &e, `SELECT `+webhookEventColumns+` FROM webhook_events
		WHERE id = $1 AND organization_id = ANY($2)`, id, pq.Array(orgs))
	return &e, mapErr(err)
}

// WebhookDeliveriesByEvents returns each event's delivery attempts, oldest first, one slice
// per key in key order, for the dataloader. The keys are events the caller already read under
// tenancy, and a delivery belongs to its event's organization.
func WebhookDeliveriesByEvents(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([][]*WebhookDelivery, error) {
	rows := []*WebhookDelivery{}
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT id, created_at, webhook_event_id, attempt, http_code, response,
			succeeded
		FROM webhook_deliveries WHERE webhook_event_id = ANY($1) ORDER BY webhook_event_id, created_at, attempt, id`,
		pq.Array(ids))
	if err != nil {
		return nil, mapErr(err)
	}
	return groupBy(ids, rows, func(d *WebhookDelivery) uuid.UUID { return d.WebhookEventID }), nil
}
