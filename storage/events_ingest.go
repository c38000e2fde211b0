package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// EventWrite is one usage event to ingest, already validated by the use case.
type EventWrite struct {
	ID                 uuid.UUID
	OrganizationID     uuid.UUID
	Timestamp          time.Time
	Name               string
	CustomerID         *uuid.UUID
	ExternalCustomerID *string
	MemberID           *uuid.UUID
	ExternalMemberID   *string
	ExternalID         *string
	ParentReference    *string
	Metadata           string // a JSON object
}

// eventStagingSQL makes the connection's staging table once: temporary tables belong to a
// session, and rows are cleared at every commit, so a pooled connection reuses it for
// every batch without creating catalog rows each time.
const eventStagingSQL = `CREATE TEMPORARY TABLE IF NOT EXISTS event_staging (
	ord integer NOT NULL,
	id uuid NOT NULL,
	organization_id uuid NOT NULL,
	"timestamp" timestamptz NOT NULL,
	name text NOT NULL,
	customer_id uuid,
	external_customer_id text,
	member_id uuid,
	external_member_id text,
	external_id text,
	parent_reference text,
	metadata jsonb NOT NULL
) ON COMMIT DELETE ROWS`

// eventTypesSQL gives every (organization, name) of the batch its event type, in name order
// so that concurrent batches creating the same new types cannot deadlock. In the same
// statement it marks the UTC days the batch touches as changed, for the meter rollups (see
// RefreshMeterRollups); a day of duplicates only is marked too, which costs one needless
// recount of that day and saves a round trip per batch.
const eventTypesSQL = `WITH days AS (
		INSERT INTO event_day_changes (organization_id, day)
		SELECT DISTINCT organization_id, date_trunc('day', "timestamp" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
		FROM event_staging)
	INSERT INTO event_types (organization_id, name, label)
	SELECT DISTINCT organization_id, name, name FROM event_staging ORDER BY organization_id, name
	ON CONFLICT (organization_id, name) DO NOTHING`

// insertEventsSQL inserts the batch's new events. event_external_ids is the dedupe index:
// an external id already there, from an earlier batch or a concurrent one that commits
// first, or earlier in this batch, is skipped (ON CONFLICT DO NOTHING waits for a
// concurrent inserter of the same key and skips once it commits). Keys go in sorted order
// so two batches never wait on each other in a cycle; within one key the first item wins.
// Only events whose key was new (or that carry none) reach events.
const insertEventsSQL = `WITH fresh AS (
		INSERT INTO event_external_ids (organization_id, external_id, event_id, event_timestamp)
		SELECT organization_id, external_id, id, "timestamp" FROM event_staging
		WHERE external_id IS NOT NULL
		ORDER BY organization_id, external_id, ord
		ON CONFLICT DO NOTHING
		RETURNING event_id)
	INSERT INTO events (id, created_at, "timestamp", organization_id, name, source, customer_id,
		external_customer_id, member_id, external_member_id, external_id, parent_reference,
		event_type_id, metadata)
	SELECT s.id, $1, s."timestamp", s.organization_id, s.name, 'user', s.customer_id,
		s.external_customer_id, s.member_id, s.external_member_id, s.external_id, s.parent_reference,
		t.id, s.metadata
	FROM event_staging s
	JOIN event_types t ON t.organization_id = s.organization_id AND t.name = s.name
	WHERE s.external_id IS NULL OR s.id IN (SELECT event_id FROM fresh)`

// resolveParentsSQL links the batch's new events to their parents: parent_reference names
// an event by its external id or its id in the same organization, in that order of
// preference. Each is one index lookup (event_external_ids' key, then events' primary key
// by id); the id branch runs only for a reference that is a UUID. A reference to nothing
// stays pending (upstream does not reject it). The root is the parent's root, or the parent
// itself.
const resolveParentsSQL = `WITH refs AS (
		SELECT s.id, s."timestamp", s.organization_id, s.parent_reference,
			CASE WHEN s.parent_reference ~* '^[{]?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}[}]?$'
				THEN s.parent_reference::uuid END AS parent_uuid
		FROM event_staging s WHERE s.parent_reference IS NOT NULL),
	parents AS (
		SELECT r.id, r."timestamp", p.id AS parent_id, coalesce(p.root_id, p.id) AS root_id
		FROM refs r
		JOIN LATERAL (
			(SELECT e.id, e.root_id FROM event_external_ids x
				JOIN events e ON e.id = x.event_id AND e."timestamp" = x.event_timestamp
				WHERE x.organization_id = r.organization_id AND x.external_id = r.parent_reference)
			UNION ALL
			(SELECT e.id, e.root_id FROM events e
				WHERE r.parent_uuid IS NOT NULL AND e.id = r.parent_uuid AND e.organization_id = r.organization_id)
			LIMIT 1) p ON true)
	UPDATE events e SET parent_id = p.parent_id, root_id = p.root_id
	FROM parents p WHERE e.id = p.id AND e."timestamp" = p."timestamp" AND e.id <> p.parent_id`

// rootJumpSQL moves the batch's roots one step up where the root found by resolveParentsSQL
// is itself a child: that happens when a parent is earlier in the same batch, as one
// statement saw it before it was linked. Repeating it until nothing changes ends at the
// chains' true roots (each pass jumps to the root's root, halving the distance left).
const rootJumpSQL = `UPDATE events e SET root_id = r.root_id
	FROM event_staging s, events r
	WHERE s.parent_reference IS NOT NULL AND e.id = s.id AND e."timestamp" = s."timestamp"
		AND r.id = e.root_id AND r.organization_id = e.organization_id AND r.root_id IS NOT NULL
		AND r.root_id <> e.id`

// IngestEvents stores a validated batch in one transaction and returns how many events were
// new; the rest were duplicates. The rows go to the staging table with COPY, the database's
// bulk path, and from there into events with one INSERT that drops duplicates. A failure
// anywhere, a dropped connection included, rolls the whole batch back.
func IngestEvents(ctx context.Context, db *sqlx.DB, events []EventWrite, now time.Time) (int, error) {
	if len(events) == 0 {
		return 0, nil
	}
	var inserted int64
	err := InTx(ctx, db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, eventStagingSQL); err != nil {
			return err
		}
		if err := copyEvents(ctx, tx, events); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, eventTypesSQL); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, insertEventsSQL, now)
		if err != nil {
			return err
		}
		if inserted, err = res.RowsAffected(); err != nil {
			return err
		}
		if hasParents(events) {
			err = linkParents(ctx, tx, len(events))
		}
		return err
	})
	return int(inserted), mapErr(err)
}

// linkParents links the batch's events to their parents and roots; n bounds the passes,
// since no chain inside a batch is longer than the batch.
func linkParents(ctx context.Context, tx *sqlx.Tx, n int) error {
	if _, err := tx.ExecContext(ctx, resolveParentsSQL); err != nil {
		return err
	}
	for range n {
		res, err := tx.ExecContext(ctx, rootJumpSQL)
		if err != nil {
			return err
		}
		if moved, err := res.RowsAffected(); err != nil || moved == 0 {
			return err
		}
	}
	return nil
}

// copyEvents streams the batch into event_staging. lib/pq buffers the rows and sends them
// in large messages; the final Exec completes the COPY.
func copyEvents(ctx context.Context, tx *sqlx.Tx, events []EventWrite) error {
	stmt, err := tx.PrepareContext(ctx, pq.CopyIn("event_staging", "ord", "id", "organization_id", "timestamp",
		"name", "customer_id", "external_customer_id", "member_id", "external_member_id", "external_id",
		"parent_reference", "metadata"))
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, e := range events {
		if _, err := stmt.ExecContext(ctx, i, e.ID.String(), e.OrganizationID.String(), e.Timestamp, e.Name,
			uuidText(e.CustomerID), e.ExternalCustomerID, uuidText(e.MemberID), e.ExternalMemberID, e.ExternalID,
			e.ParentReference, e.Metadata); err != nil {
			return fmt.Errorf("copy event %d: %w", i, err)
		}
	}
	_, err = stmt.ExecContext(ctx)
	return err
}

func uuidText(id *uuid.UUID) any {
	if id == nil {
		return nil
	}
	return id.String()
}

func hasParents(events []EventWrite) bool {
	for _, e := range events {
		if e.ParentReference != nil {
			return true
		}
	}
	return false
}

// LiveCustomerIDs returns which of ids are live customers of the organizations, each with
// its organization: an event may only name a customer of the organization it goes to.
func LiveCustomerIDs(ctx context.Context, q sqlx.QueryerContext, orgs, ids []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	return liveIDs(ctx, q, `SELECT id, organization_id FROM customers
		WHERE id = ANY($1) AND organization_id = ANY($2) AND deleted_at IS NULL`, orgs, ids)
}

// LiveMemberIDs returns which of ids are live members of the organizations, each with its
// organization.
func LiveMemberIDs(ctx context.Context, q sqlx.QueryerContext, orgs, ids []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	return liveIDs(ctx, q, `SELECT id, organization_id FROM members
		WHERE id = ANY($1) AND organization_id = ANY($2) AND deleted_at IS NULL`, orgs, ids)
}

func liveIDs(ctx context.Context, q sqlx.QueryerContext, query string, orgs, ids []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	out := make(map[uuid.UUID]uuid.UUID, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var found []struct {
		ID             uuid.UUID `db:"id"`
		OrganizationID uuid.UUID `db:"organization_id"`
	}
	if err := sqlx.SelectContext(ctx, q, &found, query, pq.Array(ids), pq.Array(orgs)); err != nil {
		return nil, mapErr(err)
	}
	for _, r := range found {
		out[r.ID] = r.OrganizationID
	}
	return out, nil
}

// EnsureEventPartitions creates the monthly partitions of events from the month of from for
// months months, returning how many were new. The migration made the first ones; a
// periodic task keeps them ahead of time so new events never land in events_default.
func EnsureEventPartitions(ctx context.Context, q sqlx.QueryerContext, from time.Time, months int) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, q, &n, `SELECT ensure_event_partitions($1, $2)`, from, months)
	return n, mapErr(err)
}
