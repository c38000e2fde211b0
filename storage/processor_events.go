package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// ProcessorEvent is an event the payment processor sent, as Till keeps it.
type ProcessorEvent struct {
	Processor  string     `db:"processor"`
	ID         string     `db:"id"`
	Type       string     `db:"type"`
	ObjectID   string     `db:"object_id"`
	Created    time.Time  `db:"created"`
	Payload    RawJSON    `db:"payload"`
	ReceivedAt time.Time  `db:"received_at"`
	AppliedAt  *time.Time `db:"applied_at"`
	Outcome    *string    `db:"outcome"`
}

const processorEventColumns = `processor, id, type, object_id, created, payload, received_at, applied_at, outcome`

// RecordProcessorEvent keeps an event the first time it arrives and reports whether this
// was that time: the processor delivers an event again until it is acknowledged, and may
// deliver it twice at once.
func RecordProcessorEvent(ctx context.Context, q sqlx.ExtContext, e ProcessorEvent) (bool, error) {
	res, err := q.ExecContext(ctx, `INSERT INTO processor_events (processor, id, type, object_id, created, payload)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (processor, id) DO NOTHING`,
		e.Processor, e.ID, e.Type, e.ObjectID, e.Created, e.Payload)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// LockProcessorEvent reads an event for applying it. It first takes a transaction-scoped
// lock on the event's object, so events about one object are applied one at a time and
// each sees what the previous ones did.
func LockProcessorEvent(ctx context.Context, tx *sqlx.Tx, processor, id string) (*ProcessorEvent, error) {
	var e ProcessorEvent
	if err := sqlx.GetContext(ctx, tx, &e, `SELECT `+processorEventColumns+` FROM processor_events
		WHERE processor = $1 AND id = $2`, processor, id); err != nil {
		return nil, mapErr(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('till processor object ' || $1 || ' ' || $2, 0))`,
		processor, e.ObjectID); err != nil {
		return nil, err
	}
	return &e, nil
}

// NewerProcessorEventKept reports whether an event of one of types about the same object,
// created by the processor after e, is kept and was applied or waits to be: e then
// describes an older state of the object, which the newer event replaces, so applying e
// would at best be undone and at worst act on a state the object has left (a payment that
// failed before it succeeded). Newer events Till ignores, or that were superseded
// themselves, do not count.
func NewerProcessorEventKept(ctx context.Context, q sqlx.ExtContext, e *ProcessorEvent, types []string) (bool, error) {
	var newer bool
	err := sqlx.GetContext(ctx, q, &newer, `SELECT EXISTS (SELECT 1 FROM processor_events
		WHERE processor = $1 AND object_id = $2 AND type = ANY($5) AND (applied_at IS NULL OR outcome = 'applied')
		  AND (created, id) > ($3, $4))`, e.Processor, e.ObjectID, e.Created, e.ID, pq.Array(types))
	return newer, mapErr(err)
}

// MarkProcessorEventApplied records what applying an event did.
func MarkProcessorEventApplied(ctx context.Context, q sqlx.ExtContext, processor, id, outcome string, at time.Time) error {
	_, err := q.ExecContext(ctx, `UPDATE processor_events SET applied_at = $3, outcome = $4
		WHERE processor = $1 AND id = $2`, processor, id, at, outcome)
	return mapErr(err)
}

// CardUpdate is a card's details as the processor now reports them (a new expiry or number
// after the issuer replaced the card).
type CardUpdate struct {
	Brand, Last4      string
	ExpMonth, ExpYear int
}

// UpdatedCard is a saved method whose details changed, with its customer's organization.
type UpdatedCard struct {
	PaymentMethod
	OrganizationID uuid.UUID `db:"organization_id"`
}

// UpdateCardsAtProcessor sets the details of the saved methods that are the processor's
// instrument processorID and returns them (none when Till holds no such method), so that
// each customer's change can be announced.
func UpdateCardsAtProcessor(ctx context.Context, q sqlx.ExtContext, processor, processorID string, u CardUpdate, now time.Time) ([]*UpdatedCard, error) {
	out := []*UpdatedCard{}
	err := sqlx.SelectContext(ctx, q, &out, `WITH pm AS (UPDATE payment_methods SET brand = $3, last4 = $4,
			exp_month = $5, exp_year = $6, modified_at = $7
		WHERE processor = $1 AND processor_id = $2 AND deleted_at IS NULL AND type = 'card' RETURNING *)
		SELECT `+paymentMethodColumns+`, c.organization_id FROM pm JOIN customers c ON c.id = pm.customer_id
		ORDER BY pm.id`, processor, processorID, u.Brand, u.Last4, u.ExpMonth, u.ExpYear, now)
	return out, mapErr(err)
}
