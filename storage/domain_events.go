package storage

import (
	"bytes"
	"cmp"
	"context"
	"slices"
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

// ClaimUnrenderedDomainEvents claims up to limit events of the given families (the part of
// the type before the dot) whose payload is still missing and that no other renderer holds,
// oldest first, for lease: processes rendering at once divide the events between them. A
// claim ends when the event is published or its rendering fails (FailDomainEventRender,
// ReleaseDomainEvent), or when the lease lapses because its renderer died.
func ClaimUnrenderedDomainEvents(ctx context.Context, q sqlx.ExtContext, families []string, limit int, lease time.Duration) ([]*DomainEvent, error) {
	var rows []*DomainEvent
	err := sqlx.SelectContext(ctx, q, &rows, `WITH claimable AS (
			SELECT id FROM domain_events
			WHERE payload IS NULL AND render_attempts < $3 AND split_part(type, '.', 1) = ANY($1)
				AND (render_claimed_until IS NULL OR render_claimed_until < now())
			ORDER BY created_at LIMIT $2
			FOR UPDATE SKIP LOCKED)
		UPDATE domain_events d SET render_claimed_until = now() + make_interval(secs => $4)
		FROM claimable c WHERE d.id = c.id
		RETURNING `+prefixed("d", domainEventColumns), pq.Array(families), limit, maxRenderAttempts, lease.Seconds())
	slices.SortFunc(rows, func(a, b *DomainEvent) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), bytes.Compare(a.ID[:], b.ID[:]))
	})
	return rows, mapErr(err)
}

// ReleaseDomainEvent ends a claim without rendering, for another attempt by any renderer.
func ReleaseDomainEvent(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) error {
	_, err := q.ExecContext(ctx, `UPDATE domain_events SET render_claimed_until = NULL
		WHERE id = $1 AND payload IS NULL`, id)
	return mapErr(err)
}

// SetDomainEventPayload stores a rendered payload once; a second renderer changes nothing.
func SetDomainEventPayload(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, payload string) error {
	_, err := q.ExecContext(ctx, `UPDATE domain_events SET payload = $2, rendered_at = now(), render_error = NULL
		WHERE id = $1 AND payload IS NULL`, id, payload)
	return mapErr(err)
}

// FailDomainEventRender counts a failed rendering attempt, keeps its error and ends the
// claim, so that the next attempt may be any renderer's.
func FailDomainEventRender(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, reason string) error {
	_, err := q.ExecContext(ctx, `UPDATE domain_events SET render_attempts = render_attempts + 1, render_error = $2,
			render_claimed_until = NULL
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
