package resolvers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/internal/payment"
	"till/storage"
)

// applyDisputeUpdate takes a dispute Stripe opened, changed or closed onto Till's record
// of it (charge.dispute.created, .updated and .closed all carry the whole dispute).
func (r *Resolver) applyDisputeUpdate(ctx context.Context, tx *sqlx.Tx, e *storage.ProcessorEvent) error {
	var event struct {
		Data struct {
			Object stripeDispute `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(e.Payload, &event); err != nil {
		return jobs.Discard(fmt.Errorf("event %s: %w", e.ID, err))
	}
	d := event.Data.Object
	charge, err := d.chargeID()
	if err != nil {
		return jobs.Discard(fmt.Errorf("event %s: %w", e.ID, err))
	}
	pd := payment.Dispute{ID: d.ID, ChargeID: charge, Status: d.Status, Amount: d.Amount, Currency: d.Currency,
		Reason: d.Reason, PastDue: d.EvidenceDetails.PastDue}
	if d.EvidenceDetails.DueBy > 0 {
		due := time.Unix(d.EvidenceDetails.DueBy, 0).UTC()
		pd.EvidenceDueBy = &due
	}
	return r.takeDispute(ctx, tx, e.Processor, pd)
}

// stripeDispute is the part of Stripe's dispute object Till reads.
type stripeDispute struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	Reason   string `json:"reason"`
	// Charge is the charge's id, or the charge itself when the sender expanded it.
	Charge          json.RawMessage `json:"charge"`
	EvidenceDetails struct {
		DueBy   int64 `json:"due_by"`
		PastDue bool  `json:"past_due"`
	} `json:"evidence_details"`
}

// chargeID is the id of the disputed charge, expanded or not.
func (d stripeDispute) chargeID() (string, error) {
	if id, ok := expandableID(d.Charge); ok {
		return id, nil
	}
	return "", fmt.Errorf("dispute %s names no charge", d.ID)
}

// expandableID is the id a Stripe object field holds: the id itself, or the object when
// the sender expanded it; false when it holds neither (null, or absent).
func expandableID(raw json.RawMessage) (string, bool) {
	var id string
	if err := json.Unmarshal(raw, &id); err == nil {
		return id, id != ""
	}
	var object struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &object); err != nil {
		return "", false
	}
	return object.ID, object.ID != ""
}
