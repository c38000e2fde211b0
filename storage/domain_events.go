package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// DomainEvent is one state change of an organization's data, as webhooks report it.
type DomainEvent struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	OrganizationID uuid.UUID  `db:"organization_id"`
	Type           string     `db:"type"`
	ObjectID       uuid.UUID  `db:"object_id"`
	Payload        *string    `db:"payload"`
	RenderedAt     *time.Time `db:"rendered_at"`
}

const domainEventColumns = `id, created_at, organization_id, type, object_id, payload, rendered_at`

// InsertDomainEvent records an event; call it in the transaction of the change it reports.
func InsertDomainEvent(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, typ string, objectID uuid.UUID) (uuid.UUID, error) {
	var id uuid.UUID
	err := sqlx.GetContext(ctx, q, &id, `INSERT INTO domain_events (organization_id, type, object_id)
		VALUES ($1, $2, $3) RETURNING id`, orgID, typ, objectID)
	return id, mapErr(err)
}

// maxRenderAttempts is how often rendering an event's payload is tried before it is left
// with its error for an operator to look at.
const maxRenderAttempts = 5

// UnrenderedDomainEvents lists events of the given families (the part of the type before
// the dot) whose payload is still missing, oldest first.
func UnrenderedDomainEvents(ctx context.Context, q sqlx.ExtContext, families []string, limit int) ([]*DomainEvent, error) {
	var rows []*DomainEvent
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+domainEventColumns+` FROM domain_events
		WHERE payload IS NULL AND render_attempts < $3 AND split_part(type, '.', 1) = ANY($1)
		ORDER BY created_at LIMIT $2`, pq.Array(families), limit, maxRenderAttempts)
	return rows, mapErr(err)
}

// SetDomainEventPayload stores a rendered payload once; a second renderer changes nothing.
func SetDomainEventPayload(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, payload string) error {
	_, err := q.ExecContext(ctx, `UPDATE domain_events SET payload = $2, rendered_at = now(), render_error = NULL
		WHERE id = $1 AND payload IS NULL`, id, payload)
	return mapErr(err)
}

// FailDomainEventRender counts a failed rendering attempt and keeps its error.
func FailDomainEventRender(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, reason string) error {
	_, err := q.ExecContext(ctx, `UPDATE domain_events SET render_attempts = render_attempts + 1, render_error = $2
		WHERE id = $1 AND payload IS NULL`, id, reason)
	return mapErr(err)
}

// DomainEventFilter narrows an event list.
type DomainEventFilter struct {
	Types     []string
	ObjectIDs []uuid.UUID
}

// ListDomainEvents returns one window of the organizations' domain events, newest first, with
// the total count.
func ListDomainEvents(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f DomainEventFilter, w Window) (Paged[*DomainEvent], error) {
	c := orgFilters("organization_id", orgs)
	anyOf(c, "type", f.Types)
	anyOf(c, "object_id", f.ObjectIDs)
	return listWindow[*DomainEvent](ctx, q, listSQL{Columns: domainEventColumns, From: "domain_events", ID: "id",
		Where: c.where, Args: c.args, Default: []Sort{{Column: "created_at", Desc: true}}}, w)
}
