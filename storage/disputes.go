package storage

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Dispute is a chargeback of an order's payment as the processor last reported it.
type Dispute struct {
	ID             uuid.UUID     `db:"id"`
	CreatedAt      time.Time     `db:"created_at"`
	ModifiedAt     *time.Time    `db:"modified_at"`
	OrganizationID uuid.UUID     `db:"organization_id"`
	OrderID        uuid.UUID     `db:"order_id"`
	PaymentID      uuid.UUID     `db:"payment_id"`
	CustomerID     uuid.UUID     `db:"customer_id"`
	Status         DisputeStatus `db:"status"`
	Amount         int64         `db:"amount"`
	TaxAmount      int64         `db:"tax_amount"`
	Currency       string        `db:"currency"`
	Reason         *string       `db:"reason"`
	EvidenceDueBy  *time.Time    `db:"evidence_due_by"`
	PastDue        bool          `db:"past_due"`
	Processor      string        `db:"processor"`
	ProcessorID    string        `db:"processor_id"`
}

// Resolved reports whether the dispute was settled either way (upstream's
// resolved_statuses).
func (d *Dispute) Resolved() bool {
	return d.Status == DisputeStatusWon || d.Status == DisputeStatusLost
}

// Closed reports whether nothing more will happen to the dispute (upstream's
// closed_statuses): settled, or prevented by a refund.
func (d *Dispute) Closed() bool {
	return d.Resolved() || d.Status == DisputeStatusPrevented
}

const disputeColumns = `id, created_at, modified_at, organization_id, order_id, payment_id, customer_id, status,
	amount, tax_amount, currency, reason, evidence_due_by, past_due, processor, processor_id`

var disputeColumnsD = qualify("d", disputeColumns)

// DisputeWrite is what the processor says of a dispute, and, for a new one, the order and
// payment it disputes.
type DisputeWrite struct {
	OrganizationID uuid.UUID
	OrderID        uuid.UUID
	PaymentID      uuid.UUID
	CustomerID     uuid.UUID
	Status         DisputeStatus
	Amount         int64
	TaxAmount      int64
	Currency       string
	Reason         *string
	EvidenceDueBy  *time.Time
	PastDue        bool
	Processor      string
	ProcessorID    string
}

// InsertDispute stores a dispute the processor opened; inserted is false, and nothing
// changes, when it is stored already, so a duplicated event opens it once.
func InsertDispute(ctx context.Context, q sqlx.ExtContext, now time.Time, w DisputeWrite) (d *Dispute, inserted bool, err error) {
	var out Dispute
	err = sqlx.GetContext(ctx, q, &out, `INSERT INTO disputes (created_at, organization_id, order_id, payment_id,
		customer_id, status, amount, tax_amount, currency, reason, evidence_due_by, past_due, processor, processor_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (processor, processor_id) DO NOTHING RETURNING `+disputeColumns,
		now, w.OrganizationID, w.OrderID, w.PaymentID, w.CustomerID, w.Status, w.Amount, w.TaxAmount, w.Currency,
		w.Reason, w.EvidenceDueBy, w.PastDue, w.Processor, w.ProcessorID)
	if err = mapErr(err); errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	return &out, err == nil, err
}

// LockDisputeAtProcessor reads the dispute the processor knows as processorID, locked.
func LockDisputeAtProcessor(ctx context.Context, tx *sqlx.Tx, processor, processorID string) (*Dispute, error) {
	var d Dispute
	err := sqlx.GetContext(ctx, tx, &d, `SELECT `+disputeColumns+` FROM disputes
		WHERE processor = $1 AND processor_id = $2 FOR UPDATE`, processor, processorID)
	return &d, mapErr(err)
}

// LockDispute reads a dispute of the given organizations, locked.
func LockDispute(ctx context.Context, tx *sqlx.Tx, orgs []uuid.UUID, id uuid.UUID) (*Dispute, error) {
	var d Dispute
	err := sqlx.GetContext(ctx, tx, &d, `SELECT `+disputeColumns+` FROM disputes
		WHERE id = $1 AND organization_id = ANY($2) FOR UPDATE`, id, pq.Array(orgs))
	return &d, mapErr(err)
}

// DisputeUpdate is the processor's newer word on a stored dispute.
type DisputeUpdate struct {
	Status        DisputeStatus
	Reason        *string
	EvidenceDueBy *time.Time
	PastDue       bool
}

// UpdateDispute records a dispute's newer state.
func UpdateDispute(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, u DisputeUpdate, now time.Time) (*Dispute, error) {
	var d Dispute
	err := sqlx.GetContext(ctx, q, &d, `UPDATE disputes SET status = $2, reason = $3, evidence_due_by = $4,
		past_due = $5, modified_at = $6 WHERE id = $1 RETURNING `+disputeColumns,
		id, u.Status, u.Reason, u.EvidenceDueBy, u.PastDue, now)
	return &d, mapErr(err)
}

// GetDispute reads a dispute of the given organizations.
func GetDispute(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Dispute, error) {
	var d Dispute
	err := sqlx.GetContext(ctx, q, &d, `SELECT `+disputeColumns+` FROM disputes
		WHERE id = $1 AND organization_id = ANY($2)`, id, pq.Array(orgs))
	return &d, mapErr(err)
}

// DisputedCharge is the payment a processor's charge id names, with the order it paid.
type DisputedCharge struct {
	PaymentID uuid.UUID `db:"payment_id"`
	Order
}

// ChargeAtProcessor reads the payment the processor knows as chargeID and its order;
// ErrNotFound when no order of Till's was paid by it.
func ChargeAtProcessor(ctx context.Context, q sqlx.ExtContext, processor, chargeID string) (*DisputedCharge, error) {
	var c DisputedCharge
	err := sqlx.GetContext(ctx, q, &c, `SELECT p.id AS payment_id, `+orderColumnsO+`
		FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE p.processor = $1 AND p.processor_id = $2 ORDER BY p.created_at DESC LIMIT 1`, processor, chargeID)
	return &c, mapErr(err)
}

// DisputeListFilter narrows a dispute list: the filters of GET /v1/disputes/. Values of
// one field are OR-ed, fields AND-ed; empty fields do not filter.
type DisputeListFilter struct {
	OrganizationIDs []uuid.UUID
	OrderIDs        []uuid.UUID
	Statuses        []DisputeStatus
}

// DisputeSortColumns maps the sort properties of GET /v1/disputes/ to SQL.
var DisputeSortColumns = map[string]string{
	"created_at": "d.created_at",
	"amount":     "d.amount",
}

// ListDisputes returns one window of disputes of the given organizations, with the total.
func ListDisputes(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f DisputeListFilter, sorts []Sort, w Window) (Paged[*Dispute], error) {
	return listWindow[*Dispute](ctx, q, disputeList(orgs, f, sorts), w)
}

// DisputeWindowsByOrders returns one window of each order's disputes, in key order, with
// the same filters and sorting as ListDisputes, in one statement.
func DisputeWindowsByOrders(ctx context.Context, q sqlx.ExtContext, orgs, orders []uuid.UUID, f DisputeListFilter, sorts []Sort, w Window) ([]Paged[*Dispute], error) {
	return listWindows(ctx, q, disputeList(orgs, f, sorts), "d.order_id", orders, w,
		func(d *Dispute) uuid.UUID { return d.OrderID })
}

// disputeList is the dispute list query.
func disputeList(orgs []uuid.UUID, f DisputeListFilter, sorts []Sort) listSQL {
	w := orgFilters("d.organization_id", orgs)
	anyOf(w, "d.organization_id", f.OrganizationIDs)
	anyOf(w, "d.order_id", f.OrderIDs)
	anyOf(w, "d.status", f.Statuses)
	return listSQL{Columns: disputeColumnsD, From: `disputes d`, ID: "d.id", Where: w.where, Args: w.args,
		Sorts: sorts, Default: []Sort{{Column: "d.created_at", Desc: true}}}
}
