package rest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"till/rest"
	"till/rest/resttest"
	"till/storage"
)

// TestGrantAndSeatEventsRenderTheWebhookPayloads renders benefit_grant.* and customer_seat.*
// events the way the serve loop does and checks each payload against the contract's webhook
// schema, so a webhook's data is the object's /v1 shape.
func TestGrantAndSeatEventsRenderTheWebhookPayloads(t *testing.T) {
	t.Parallel()
	f := newGrantsFixture(t)
	docs, err := rest.LoadDocuments(rest.Operations())
	if err != nil {
		t.Fatal(err)
	}
	render := rest.EventRenderer(f.s.Resolver.Executor(), docs)

	sub := f.s.NewSubscription(t, f.org.ID, f.customers[0], f.s.NewProduct(t, f.org.ID, "Granted").ID, ptr(2))
	var seat uuid.UUID
	if err := f.s.DB.GetContext(t.Context(), &seat, `INSERT INTO customer_seats (organization_id, subscription_id, status,
			customer_id, member_id, email, claimed_at, seat_metadata)
		VALUES ($1, $2, 'claimed', $3, $4, 'm@example.com', now(), '{"team": "core"}') RETURNING id`,
		f.org.ID, sub, f.customers[0], f.member); err != nil {
		t.Fatal(err)
	}

	doc := resttest.Contract(t)
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
			payload, err := render.Render(t.Context(), &storage.DomainEvent{ID: uuid.New(), CreatedAt: time.Now(),
				OrganizationID: f.org.ID, Type: tc.typ, ObjectID: tc.object})
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal([]byte(payload), &v); err != nil {
				t.Fatalf("payload is not JSON: %v\n%s", err, payload)
			}
			if err := doc.Components.Schemas[tc.schema].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
				t.Errorf("payload does not match %s: %v\n%s", tc.schema, err, payload)
			}
		})
	}
}
