package rest_test

import (
	"testing"

	"github.com/google/uuid"
)

// TestGrantAndSeatEventsRenderTheWebhookPayloads renders benefit_grant.* and customer_seat.*
// events the way the serve loop does and checks each payload against the contract's webhook
// schema, so a webhook's data is the object's /v1 shape.
func TestGrantAndSeatEventsRenderTheWebhookPayloads(t *testing.T) {
	t.Parallel()
	f := newGrantsFixture(t)
	sub := f.s.NewSubscription(t, f.org.ID, f.customers[0], f.s.NewProduct(t, f.org.ID, "Granted").ID, ptr(2))
	var seat uuid.UUID
	if err := f.s.DB.GetContext(t.Context(), &seat, `INSERT INTO customer_seats (organization_id, subscription_id, status,
			customer_id, member_id, email, claimed_at, seat_metadata)
		VALUES ($1, $2, 'claimed', $3, $4, 'm@example.com', now(), '{"team": "core"}') RETURNING id`,
		f.org.ID, sub, f.customers[0], f.member); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, typ, schema string
		object            uuid.UUID
	}{
		{name: "a license-key grant with its member", typ: "benefit_grant.created", schema: "WebhookBenefitGrantCreatedPayload", object: f.granted},
		{name: "a revoked grant", typ: "benefit_grant.revoked", schema: "WebhookBenefitGrantRevokedPayload", object: f.revoked},
		{name: "a failed grant", typ: "benefit_grant.updated", schema: "WebhookBenefitGrantUpdatedPayload", object: f.failed},
		{name: "a claimed seat", typ: "customer_seat.claimed", schema: "WebhookCustomerSeatClaimedPayload", object: seat},
	} {
		t.Run(tc.name+" renders as "+tc.schema, func(t *testing.T) {
			f.s.webhookPayload(t, f.org.ID, tc.typ, tc.schema, tc.object)
		})
	}
}
