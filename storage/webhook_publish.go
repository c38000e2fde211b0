package storage

// Publishing: a rendered domain event is stored with its payload and queued, in one
// statement, for each endpoint that takes it.

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// WebhookTarget is an endpoint new events of a type go to, with the format their payload
// takes and when it was created (it takes only events from then on).
type WebhookTarget struct {
	ID        uuid.UUID `db:"id"`
	Format    string    `db:"format"`
	CreatedAt time.Time `db:"created_at"`
}

// WebhookTargets lists the live, enabled endpoints of an organization subscribed to an event
// type, oldest first.
func WebhookTargets(ctx context.Context, q sqlx.QueryerContext, orgID uuid.UUID, typ string) ([]WebhookTarget, error) {
	var out []WebhookTarget
	err := sqlx.SelectContext(ctx, q, &out, `SELECT id, format, created_at FROM webhook_endpoints
		WHERE organization_id = $1 AND enabled AND deleted_at IS NULL AND $2 = ANY(events)
		ORDER BY created_at, id`, orgID, typ)
	return out, mapErr(err)
}

// Publication is a rendered domain event: its payload and the bytes each endpoint that takes
// it receives (endpoint id to body).
type Publication struct {
	Event   *DomainEvent
	Payload string
	Bodies  map[uuid.UUID]string
}

// PublishDomainEvent is PublishDomainEvents of one event.
func PublishDomainEvent(ctx context.Context, q sqlx.ExtContext, e *DomainEvent, payload string, bodies map[uuid.UUID]string) (int, error) {
	return PublishDomainEvents(ctx, q, []Publication{{Event: e, Payload: payload, Bodies: bodies}})
}

// PublishDomainEvents stores rendered domain events' payloads (once: a second renderer
// changes nothing) and, in the same statement, queues each for its endpoints, stamped with
// the domain event's creation time so each endpoint receives events in the order they
// happened. Queuing the same domain event again for an endpoint is a no-op. It returns how
// many were queued.
//
// One statement for a batch is one commit: publishing is most of the commits a purchase
// causes, and each commit that wakes other processes takes PostgreSQL's notification lock,
// which every such commit of the cluster waits for in turn. Rows are locked and inserted in
// (event id, endpoint id) order, so two publishers of overlapping batches (a renderer whose
// claim lapsed, say) wait for each other instead of deadlocking.
func PublishDomainEvents(ctx context.Context, q sqlx.ExtContext, pubs []Publication) (int, error) {
	if len(pubs) == 0 {
		return 0, nil
	}
	pubs = slices.SortedFunc(slices.Values(pubs), func(a, b Publication) int { return bytes.Compare(a.Event.ID[:], b.Event.ID[:]) })
	var ids, rowEvents, rowEndpoints []uuid.UUID
	var payloads, rowBodies []string
	for _, p := range pubs {
		ids, payloads = append(ids, p.Event.ID), append(payloads, p.Payload)
		for _, endpoint := range slices.SortedFunc(maps.Keys(p.Bodies), func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }) {
			rowEvents, rowEndpoints, rowBodies = append(rowEvents, p.Event.ID), append(rowEndpoints, endpoint), append(rowBodies, p.Bodies[endpoint])
		}
	}
	res, err := q.ExecContext(ctx, `WITH input AS (
			SELECT * FROM unnest($1::uuid[], $2::text[]) AS i(id, payload)),
		locked AS (
			SELECT d.id FROM domain_events d WHERE d.id = ANY($1) AND d.payload IS NULL ORDER BY d.id FOR UPDATE),
		rendered AS (
			UPDATE domain_events d SET payload = i.payload, rendered_at = now(), render_error = NULL, render_claimed_until = NULL
			FROM locked JOIN input i ON i.id = locked.id
			WHERE d.id = locked.id AND d.payload IS NULL)
		INSERT INTO webhook_events (organization_id, webhook_endpoint_id, type, payload, created_at, domain_event_id)
		SELECT d.organization_id, t.endpoint, d.type, t.body, d.created_at, d.id
		FROM unnest($3::uuid[], $4::uuid[], $5::text[]) WITH ORDINALITY AS t(event, endpoint, body, n)
		JOIN domain_events d ON d.id = t.event
		ORDER BY t.n
		ON CONFLICT (domain_event_id, webhook_endpoint_id) WHERE domain_event_id IS NOT NULL DO NOTHING`,
		pq.Array(ids), pq.Array(payloads), pq.Array(rowEvents), pq.Array(rowEndpoints), pq.Array(rowBodies))
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
