package payment

import (
	"context"
	"time"

	"github.com/stripe/stripe-go/v86"
)

// Dispute is a chargeback as the processor describes it, in Stripe's words: Status is one
// of Stripe's dispute statuses (warning_needs_response, needs_response, under_review, won,
// lost, ...), which use cases translate into their own.
type Dispute struct {
	ID       string
	ChargeID string
	Status   string
	// Amount is what the customer disputes, taxes included, in the smallest unit of
	// Currency.
	Amount        int64
	Currency      string
	Reason        string
	EvidenceDueBy *time.Time
	PastDue       bool
}

// DisputeCloser is a processor that can concede a dispute. Not every processor has
// disputes, so it is apart from Processor; use cases ask for it where they need it.
type DisputeCloser interface {
	// CloseDispute concedes the dispute: the processor settles it as lost and returns its
	// new state.
	CloseDispute(ctx context.Context, id string) (Dispute, error)
}

// CloseDispute implements DisputeCloser with Stripe's dispute close call.
func (p *StripeProcessor) CloseDispute(ctx context.Context, id string) (Dispute, error) {
	d, err := p.client.V1Disputes.Close(ctx, id, &stripe.DisputeCloseParams{})
	if err != nil {
		return Dispute{}, stripeFault(ctx, "closing dispute "+id, err)
	}
	out := Dispute{ID: d.ID, Status: string(d.Status), Amount: d.Amount, Currency: string(d.Currency),
		Reason: string(d.Reason)}
	if d.Charge != nil {
		out.ChargeID = d.Charge.ID
	}
	if e := d.EvidenceDetails; e != nil {
		out.PastDue = e.PastDue
		if e.DueBy > 0 {
			due := time.Unix(e.DueBy, 0).UTC()
			out.EvidenceDueBy = &due
		}
	}
	return out, nil
}

// CloseDispute implements DisputeCloser: the test processor has no record of disputes,
// which only events bring, so it concedes whatever it is asked to, as lost.
func (p *TestProcessor) CloseDispute(_ context.Context, id string) (Dispute, error) {
	return Dispute{ID: id, Status: "lost"}, nil
}
