package storage

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// WebhookEvent is one event queued for one endpoint: the exact bytes to send (Payload, nil
// once archived) and its delivery state. Its id is the webhook-id header of every attempt.
type WebhookEvent struct {
	ID                uuid.UUID  `db:"id"`
	CreatedAt         time.Time  `db:"created_at"`
	ModifiedAt        *time.Time `db:"modified_at"`
	OrganizationID    uuid.UUID  `db:"organization_id"`
	WebhookEndpointID uuid.UUID  `db:"webhook_endpoint_id"`
	Type              string     `db:"type"`
	Payload           *string    `db:"payload"`
	Succeeded         *bool      `db:"succeeded"`
	Skipped           bool       `db:"skipped"`
	LastHTTPCode      *int       `db:"last_http_code"`
	IsArchived        bool       `db:"is_archived"`
	DomainEventID     *uuid.UUID `db:"domain_event_id"`
	Attempts          int        `db:"attempts"`
	NextAttemptAt     time.Time  `db:"next_attempt_at"`
	ClaimedUntil      *time.Time `db:"claimed_until"`
	DeliveredAt       *time.Time `db:"delivered_at"`
}

const webhookEventColumns = `id, created_at, modified_at, organization_id, webhook_endpoint_id, type, payload,
	succeeded, skipped, last_http_code, is_archived, domain_event_id, attempts, next_attempt_at, claimed_until,
	delivered_at`

// WebhookDispatch is a claimed event with what sending it needs.
type WebhookDispatch struct {
	WebhookEvent
	URL    string `db:"url"`
	Secret string `db:"secret"`
}

// pendingHeads lists, as the CTE pending_heads, each enabled endpoint's oldest pending
// event (id, next_attempt_at, claimed_until): the only event of the endpoint that may be
// delivered next. It finds the endpoints with pending events by a loose index scan of the
// pending-head index, one probe per such endpoint however many events wait.
const pendingHeads = `WITH RECURSIVE pending(endpoint) AS (
		(SELECT webhook_endpoint_id FROM webhook_events WHERE succeeded IS NULL AND NOT skipped
			ORDER BY webhook_endpoint_id LIMIT 1)
		UNION ALL
		SELECT (SELECT webhook_endpoint_id FROM webhook_events
				WHERE succeeded IS NULL AND NOT skipped AND webhook_endpoint_id > p.endpoint
				ORDER BY webhook_endpoint_id LIMIT 1)
		FROM pending p WHERE p.endpoint IS NOT NULL),
	pending_heads AS (
		SELECT h.* FROM pending p
		JOIN webhook_endpoints w ON w.id = p.endpoint AND w.enabled
		CROSS JOIN LATERAL (
			SELECT e.id, e.next_attempt_at, e.claimed_until, e.domain_event_id FROM webhook_events e
			WHERE e.webhook_endpoint_id = p.endpoint AND e.succeeded IS NULL AND NOT e.skipped
			ORDER BY e.created_at, e.id LIMIT 1) h)`

// claimHeadsSQL claims the pending heads that are due and not leased. The heads are locked
// in id order, skipping any another dispatcher holds, so dispatchers of several processes
// claiming at once never wait on each other (they deadlocked when each locked its heads in
// its own plan's order); the UPDATE re-checks the lease under the lock, so two dispatchers
// never claim one event.
//
// A head also waits while an older domain event of the same object is still unrendered (and
// not given up on): renderers publish in parallel, across processes and after failures, so
// an object's later event can be queued first, and delivering it then would reverse the
// object's history for the endpoint. The older event, once published, is queued ahead of it.
var claimHeadsSQL = pendingHeads + `,
	heads AS MATERIALIZED (
		SELECT h.id FROM pending_heads h
		WHERE h.next_attempt_at <= now() AND (h.claimed_until IS NULL OR h.claimed_until < now())
			AND NOT ` + waitsForOlderEvent("h.domain_event_id") + `
		LIMIT $1),
	locked AS (
		SELECT e.id FROM webhook_events e WHERE e.id IN (SELECT id FROM heads)
		ORDER BY e.id FOR UPDATE SKIP LOCKED),
	claimed AS (
		UPDATE webhook_events e SET claimed_until = now() + make_interval(secs => $2), attempts = e.attempts + 1, modified_at = now()
		FROM locked
		WHERE e.id = locked.id AND e.succeeded IS NULL AND NOT e.skipped
			AND (e.claimed_until IS NULL OR e.claimed_until < now())
		RETURNING e.*)
	SELECT ` + prefixed("c", webhookEventColumns) + `, w.url, w.secret
	FROM claimed c JOIN webhook_endpoints w ON w.id = c.webhook_endpoint_id`

// waitsForOlderEvent is the condition under which the webhook event of the domain event
// domainEventID (an SQL expression) must wait: an older domain event of the same object is
// still unrendered and not given up on (see claimHeadsSQL).
func waitsForOlderEvent(domainEventID string) string {
	return `EXISTS (
				SELECT FROM domain_events de JOIN domain_events older ON older.object_id = de.object_id
				WHERE de.id = ` + domainEventID + ` AND older.payload IS NULL
					AND older.render_attempts < ` + strconv.Itoa(maxRenderAttempts) + `
					AND (older.created_at, older.id) < (de.created_at, de.id))`
}

// ClaimWebhookHeads leases, for up to limit endpoints, the oldest pending event if it is due.
// Each claim counts as an attempt.
func ClaimWebhookHeads(ctx context.Context, q sqlx.QueryerContext, limit int, lease time.Duration) ([]*WebhookDispatch, error) {
	var out []*WebhookDispatch
	err := sqlx.SelectContext(ctx, q, &out, claimHeadsSQL, limit, lease.Seconds())
	return out, mapErr(err)
}

// WebhookQueue is the dispatcher's two statements prepared on the pool: they run for every
// delivery, and planning them each time cost about as much as running them.
type WebhookQueue struct{ claim, record *sqlx.Stmt }

// PrepareWebhookQueue prepares the claim and record statements; database/sql prepares them
// again on each connection as needed.
func PrepareWebhookQueue(ctx context.Context, db *sqlx.DB) (*WebhookQueue, error) {
	var w WebhookQueue
	var err error
	if w.claim, err = db.PreparexContext(ctx, claimHeadsSQL); err != nil {
		return nil, mapErr(err)
	}
	if w.record, err = db.PreparexContext(ctx, recordAttemptsSQL); err != nil {
		return nil, mapErr(err)
	}
	return &w, nil
}

// Claim is ClaimWebhookHeads on the prepared statement.
func (w *WebhookQueue) Claim(ctx context.Context, limit int, lease time.Duration) ([]*WebhookDispatch, error) {
	var out []*WebhookDispatch
	err := w.claim.SelectContext(ctx, &out, limit, lease.Seconds())
	return out, mapErr(err)
}

// Record is RecordWebhookAttempts on the prepared statement.
func (w *WebhookQueue) Record(ctx context.Context, records []WebhookRecord) ([]WebhookOutcome, error) {
	var rows []outcomeRow
	if err := w.record.SelectContext(ctx, &rows, recordArgs(records)...); err != nil {
		return nil, mapErr(err)
	}
	return outcomesInOrder(records, rows), nil
}

// WebhookAttempt is the outcome of one send.
type WebhookAttempt struct {
	HTTPCode  *int
	Response  string
	Succeeded bool
}

// recordAttemptsSQL settles claimed events and logs their attempts, a batch in one
// statement, each only while its claim (the attempt number) is still the event's: a
// dispatcher whose lease ended and whose event was claimed again records nothing. A failure
// either schedules the next attempt retry seconds from now or, with retry null, fails the
// event for good. An endpoint's count of failures in a row is reset by a success and grows
// with each failure (a batch holds at most one event per endpoint: only an endpoint's oldest
// pending event is ever leased). With a lease, a settled event (delivered or failed for good)
// hands the lease on to its endpoint's next event, if that one is due, so a stream costs no
// claim of its own. The next head is found in the statement's snapshot, in which the settled
// event is still pending, hence the id <> ev.id. The next head waits, as a claimed one does,
// while an older event of its object is unrendered.
var recordAttemptsSQL = `WITH input AS (
		SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::text[], $5::bool[], $6::float8[], $7::float8[])
			AS i(id, attempt, code, response, ok, retry, lease)),
	ev AS (
		UPDATE webhook_events e SET modified_at = now(), claimed_until = NULL, last_http_code = i.code,
			succeeded = CASE WHEN i.ok THEN true WHEN i.retry IS NULL THEN false END,
			delivered_at = CASE WHEN i.ok THEN now() END,
			next_attempt_at = coalesce(now() + make_interval(secs => i.retry), e.next_attempt_at)
		FROM input i
		WHERE e.id = i.id AND e.attempts = i.attempt AND e.claimed_until IS NOT NULL AND e.succeeded IS NULL
			AND NOT e.skipped
		RETURNING e.id, e.organization_id, e.webhook_endpoint_id, e.attempts, i.code, i.response, i.ok, i.retry, i.lease),
	log AS (
		INSERT INTO webhook_deliveries (organization_id, webhook_endpoint_id, webhook_event_id, attempt, http_code,
			response, succeeded)
		SELECT organization_id, webhook_endpoint_id, id, attempts, code, response, ok FROM ev),
	endpoint AS (
		UPDATE webhook_endpoints w SET consecutive_failures = CASE WHEN ev.ok THEN 0 ELSE w.consecutive_failures + 1 END
		FROM ev WHERE w.id = ev.webhook_endpoint_id AND (NOT ev.ok OR w.consecutive_failures <> 0)
		RETURNING w.id, w.consecutive_failures),
	head AS (
		SELECT ev.id AS prev, n.id, w.url, w.secret, ev.lease FROM ev
		JOIN webhook_endpoints w ON w.id = ev.webhook_endpoint_id AND w.enabled
		CROSS JOIN LATERAL (
			SELECT e.id, e.next_attempt_at, e.claimed_until, e.domain_event_id FROM webhook_events e
			WHERE e.webhook_endpoint_id = ev.webhook_endpoint_id AND e.succeeded IS NULL AND NOT e.skipped
				AND e.id <> ev.id
			ORDER BY e.created_at, e.id LIMIT 1) n
		WHERE ev.lease IS NOT NULL AND (ev.ok OR ev.retry IS NULL)
			AND n.next_attempt_at <= now() AND (n.claimed_until IS NULL OR n.claimed_until < now())
			AND NOT ` + waitsForOlderEvent("n.domain_event_id") + `),
	next AS (
		UPDATE webhook_events e SET claimed_until = now() + make_interval(secs => head.lease),
			attempts = e.attempts + 1, modified_at = now()
		FROM head WHERE e.id = head.id AND e.succeeded IS NULL AND NOT e.skipped
			AND (e.claimed_until IS NULL OR e.claimed_until < now())
		RETURNING head.prev, e.id, e.organization_id, e.webhook_endpoint_id, e.type, e.payload, e.attempts,
			head.url, head.secret)
	SELECT i.id, ev.id IS NOT NULL AS recorded, coalesce(endpoint.consecutive_failures, 0) AS failures,
		next.id AS next_id, next.organization_id AS next_organization_id, next.webhook_endpoint_id AS next_endpoint_id,
		next.type AS next_type, next.payload AS next_payload, next.attempts AS next_attempts, next.url AS next_url,
		next.secret AS next_secret
	FROM input i
	LEFT JOIN ev ON ev.id = i.id
	LEFT JOIN endpoint ON endpoint.id = ev.webhook_endpoint_id
	LEFT JOIN next ON next.prev = i.id`

// WebhookOutcome is what recording an attempt did: whether the claim still held, how many
// attempts in a row the endpoint has now failed, and the endpoint's next event when the
// lease passed on to it.
type WebhookOutcome struct {
	Recorded bool
	Failures int
	Next     *WebhookDispatch
}

// WebhookRecord is one attempt to record: the claimed event, how it went, the wait before
// a retry (nil: delivered, or failed for good), and the lease to pass on to the endpoint's
// next event (nil: none).
type WebhookRecord struct {
	Event            *WebhookEvent
	Attempt          WebhookAttempt
	RetryIn, LeaseOn *time.Duration
}

// RecordWebhookAttempts records a batch of attempts (see recordAttemptsSQL) and returns
// their outcomes in order.
func RecordWebhookAttempts(ctx context.Context, q sqlx.QueryerContext, records []WebhookRecord) ([]WebhookOutcome, error) {
	var rows []outcomeRow
	if err := sqlx.SelectContext(ctx, q, &rows, recordAttemptsSQL, recordArgs(records)...); err != nil {
		return nil, mapErr(err)
	}
	return outcomesInOrder(records, rows), nil
}

// RecordWebhookAttempt records one attempt.
func RecordWebhookAttempt(ctx context.Context, q sqlx.QueryerContext, ev *WebhookEvent, a WebhookAttempt,
	retryIn, lease *time.Duration) (WebhookOutcome, error) {
	out, err := RecordWebhookAttempts(ctx, q, []WebhookRecord{{Event: ev, Attempt: a, RetryIn: retryIn, LeaseOn: lease}})
	if err != nil {
		return WebhookOutcome{}, err
	}
	return out[0], nil
}

func recordArgs(records []WebhookRecord) []any {
	n := len(records)
	ids, attempts, codes := make([]uuid.UUID, n), make([]int64, n), make([]*int64, n)
	responses, ok := make([]string, n), make([]bool, n)
	retries, leases := make([]*float64, n), make([]*float64, n)
	for i, r := range records {
		ids[i], attempts[i], responses[i], ok[i] = r.Event.ID, int64(r.Event.Attempts), r.Attempt.Response, r.Attempt.Succeeded
		if r.Attempt.HTTPCode != nil {
			c := int64(*r.Attempt.HTTPCode)
			codes[i] = &c
		}
		retries[i], leases[i] = seconds(r.RetryIn), seconds(r.LeaseOn)
	}
	return []any{pq.Array(ids), pq.Array(attempts), pq.Array(codes), pq.Array(responses), pq.Array(ok),
		pq.Array(retries), pq.Array(leases)}
}

// outcomesInOrder matches the statement's rows to the records by event id.
func outcomesInOrder(records []WebhookRecord, rows []outcomeRow) []WebhookOutcome {
	byID := make(map[uuid.UUID]outcomeRow, len(rows))
	for _, r := range rows {
		byID[r.EventID] = r
	}
	out := make([]WebhookOutcome, len(records))
	for i, r := range records {
		out[i] = byID[r.Event.ID].outcome()
	}
	return out
}

// outcomeRow is recordAttemptsSQL's row: the outcome, and the next event's columns, all null
// when the lease passed to none.
type outcomeRow struct {
	EventID    uuid.UUID  `db:"id"`
	Recorded   bool       `db:"recorded"`
	Failures   int        `db:"failures"`
	ID         *uuid.UUID `db:"next_id"`
	OrgID      *uuid.UUID `db:"next_organization_id"`
	EndpointID *uuid.UUID `db:"next_endpoint_id"`
	Type       *string    `db:"next_type"`
	Payload    *string    `db:"next_payload"`
	Attempts   *int       `db:"next_attempts"`
	URL        *string    `db:"next_url"`
	Secret     *string    `db:"next_secret"`
}

func (row outcomeRow) outcome() WebhookOutcome {
	out := WebhookOutcome{Recorded: row.Recorded, Failures: row.Failures}
	if row.ID != nil {
		out.Next = &WebhookDispatch{WebhookEvent: WebhookEvent{ID: *row.ID, OrganizationID: *row.OrgID,
			WebhookEndpointID: *row.EndpointID, Type: *row.Type, Payload: row.Payload, Attempts: *row.Attempts},
			URL: *row.URL, Secret: *row.Secret}
	}
	return out
}

func seconds(d *time.Duration) *float64 {
	if d == nil {
		return nil
	}
	s := d.Seconds()
	return &s
}

// DisableWebhookEndpoint turns an enabled endpoint off, saying why, and skips its pending
// events, so a receiver that keeps failing stops being called. It returns whether the
// endpoint was enabled and how many events it skipped.
func DisableWebhookEndpoint(ctx context.Context, q sqlx.QueryerContext, id uuid.UUID, reason string) (bool, int, error) {
	var out struct {
		Disabled bool `db:"disabled"`
		Skipped  int  `db:"skipped"`
	}
	err := sqlx.GetContext(ctx, q, &out, `WITH w AS (
			UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), disabled_reason = $2, modified_at = now()
			WHERE id = $1 AND enabled RETURNING id),
		skipped AS (
			UPDATE webhook_events e SET skipped = true, claimed_until = NULL, modified_at = now()
			FROM w WHERE e.webhook_endpoint_id = w.id AND e.succeeded IS NULL AND NOT e.skipped RETURNING e.id)
		SELECT EXISTS (SELECT 1 FROM w) AS disabled, (SELECT count(*) FROM skipped) AS skipped`, id, reason)
	return out.Disabled, out.Skipped, mapErr(err)
}

// RedeliverWebhookEvent queues a delivered, failed or skipped event of the organizations
// again, with the same id and payload and a fresh attempt budget. An archived event (no
// payload left) or one being sent right now is not found.
func RedeliverWebhookEvent(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*WebhookEvent, error) {
	var e WebhookEvent
	err := sqlx.GetContext(ctx, q, &e, `UPDATE webhook_events SET succeeded = NULL, skipped = false, attempts = 0,
			next_attempt_at = now(), claimed_until = NULL, modified_at = now()
		WHERE id = $1 AND organization_id = ANY($2) AND NOT is_archived
			AND (claimed_until IS NULL OR claimed_until < now())
		RETURNING `+webhookEventColumns, id, pq.Array(orgs))
	return &e, mapErr(err)
}

// ArchiveWebhookEvents drops the payloads of events created before cutoff (pending ones are
// skipped: they are too old to matter) and the attempt log of the same age, returning how
// many events it archived.
func ArchiveWebhookEvents(ctx context.Context, q sqlx.ExtContext, cutoff time.Time) (int, error) {
	res, err := q.ExecContext(ctx, `WITH gone AS (
			DELETE FROM webhook_deliveries WHERE created_at < $1)
		UPDATE webhook_events SET payload = NULL, is_archived = true, modified_at = now(),
			skipped = skipped OR succeeded IS NULL, claimed_until = NULL
		WHERE created_at < $1 AND NOT is_archived`, cutoff)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
