package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// WebhookEndpoint is a URL an organization has events of the listed types delivered to,
// signed with Secret. Secret is kept in plaintext: every delivery is signed with it and
// every read of the endpoint shows it, as upstream does. Deleted endpoints are kept (soft
// delete) so their past deliveries stay readable; no read here returns them.
type WebhookEndpoint struct {
	ID             uuid.UUID      `db:"id"`
	CreatedAt      time.Time      `db:"created_at"`
	ModifiedAt     *time.Time     `db:"modified_at"`
	OrganizationID uuid.UUID      `db:"organization_id"`
	URL            string         `db:"url"`
	Name           *string        `db:"name"`
	Format         string         `db:"format"`
	Secret         string         `db:"secret"`
	Events         pq.StringArray `db:"events"`
	Enabled        bool           `db:"enabled"`
	// ConsecutiveFailures, DisabledAt and DisabledReason record why delivery turned the
	// endpoint off (failed attempts in a row); enabling it again clears them.
	ConsecutiveFailures int        `db:"consecutive_failures"`
	DisabledAt          *time.Time `db:"disabled_at"`
	DisabledReason      *string    `db:"disabled_reason"`
}

const webhookEndpointColumns = `id, created_at, modified_at, organization_id, url, name, format, secret, events, enabled,
	consecutive_failures, disabled_at, disabled_reason`

// webhookEventTypes mirrors the SQL function webhook_event_types(), which the endpoint and
// event tables check against: upstream's WebhookEventType values, in its order.
var webhookEventTypes = [...]string{
	"checkout.created", "checkout.updated", "checkout.expired",
	"customer.created", "customer.updated", "customer.deleted", "customer.state_changed",
	"customer_seat.assigned", "customer_seat.claimed", "customer_seat.revoked",
	"member.created", "member.updated", "member.deleted",
	"order.created", "order.updated", "order.paid", "order.refunded",
	"subscription.created", "subscription.updated", "subscription.active",
	"subscription.canceled", "subscription.uncanceled", "subscription.cycled",
	"subscription.revoked", "subscription.past_due", "subscription.paused",
	"subscription.resumed",
	"refund.created", "refund.updated",
	"product.created", "product.updated",
	"discount.created", "discount.updated", "discount.deleted",
	"benefit.created", "benefit.updated",
	"benefit_grant.created", "benefit_grant.cycled", "benefit_grant.updated", "benefit_grant.revoked",
	"organization.updated",
}

// WebhookEventTypes lists the event types an endpoint may subscribe to, in upstream's
// order, so use cases and request validation can name a bad value before the database's
// check constraint would refuse it without saying which.
func WebhookEventTypes() []string {
	return append([]string(nil), webhookEventTypes[:]...)
}

// WebhookEndpointWrite holds a new endpoint's fields, validated by the caller.
type WebhookEndpointWrite struct {
	URL    string
	Name   *string
	Format string
	Secret string
	Events []string
}

// CreateWebhookEndpoint stores an enabled endpoint of an organization.
func CreateWebhookEndpoint(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, w WebhookEndpointWrite) (*WebhookEndpoint, error) {
	var e WebhookEndpoint
	err := sqlx.GetContext(ctx, q, &e, `INSERT INTO webhook_endpoints (organization_id, url, name, format, secret, events)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+webhookEndpointColumns,
		orgID, w.URL, w.Name, w.Format, w.Secret, pq.Array(nonNilStrings(w.Events)))
	return &e, mapErr(err)
}

// GetWebhookEndpoint reads a live endpoint of the given organizations.
func GetWebhookEndpoint(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*WebhookEndpoint, error) {
	var e WebhookEndpoint
	err := sqlx.GetContext(ctx, q, &e, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL`, id, pq.Array(orgs))
	return &e, mapErr(err)
}

// ListWebhookEndpoints returns one window of the live endpoints of the given organizations,
// narrowed to orgFilter when it is not empty, newest first as upstream lists them, with the
// total count.
func ListWebhookEndpoints(ctx context.Context, q sqlx.ExtContext, orgs, orgFilter []uuid.UUID, w Window) (Paged[*WebhookEndpoint], error) {
	f := orgFilters("organization_id", orgs, "deleted_at IS NULL")
	anyOf(f, "organization_id", orgFilter)
	return listWindow[*WebhookEndpoint](ctx, q, listSQL{Columns: webhookEndpointColumns, From: "webhook_endpoints",
		ID: "id", Where: f.where, Args: f.args, Default: []Sort{{Column: "created_at", Desc: true}}}, w)
}

// WebhookEndpointUpdate is a change to a webhook endpoint: each set field writes its
// column, the others keep what they hold.
type WebhookEndpointUpdate struct {
	URL                 Omittable[string]
	Name                Omittable[*string]
	Format              Omittable[string]
	Secret              Omittable[string]
	Events              Omittable[[]string]
	Enabled             Omittable[bool]
	ConsecutiveFailures Omittable[int]
	DisabledAt          Omittable[*time.Time]
	DisabledReason      Omittable[*string]
}

func (u WebhookEndpointUpdate) assignments() []assignment {
	return []assignment{u.URL.to("url"), u.Name.to("name"), u.Format.to("format"), u.Secret.to("secret"),
		mapped(u.Events, "events", func(v []string) any { return pq.Array(nonNilStrings(v)) }),
		u.Enabled.to("enabled"), u.ConsecutiveFailures.to("consecutive_failures"),
		u.DisabledAt.to("disabled_at"), u.DisabledReason.to("disabled_reason")}
}

// UpdateWebhookEndpoint writes the set fields of u to a live endpoint of the given
// organizations.
func UpdateWebhookEndpoint(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, u WebhookEndpointUpdate) (*WebhookEndpoint, error) {
	sets, args := setClause("modified_at = now()", u, []any{id, pq.Array(orgs)})
	var e WebhookEndpoint
	err := sqlx.GetContext(ctx, q, &e, `UPDATE webhook_endpoints SET `+sets+`
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL RETURNING `+webhookEndpointColumns, args...)
	return &e, mapErr(err)
}

// RotateWebhookEndpointSecret replaces the signing secret of a live endpoint. Deliveries
// signed from then on use the new secret, retries of earlier events included.
func RotateWebhookEndpointSecret(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, secret string) (*WebhookEndpoint, error) {
	return UpdateWebhookEndpoint(ctx, q, orgs, id, WebhookEndpointUpdate{Secret: Set(secret)})
}

// DeleteWebhookEndpoint soft-deletes a live endpoint of the given organizations and
// returns it as it was; a second delete finds nothing. New events no longer select it.
func DeleteWebhookEndpoint(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*WebhookEndpoint, error) {
	var e WebhookEndpoint
	err := sqlx.GetContext(ctx, q, &e, `UPDATE webhook_endpoints SET deleted_at = now(), modified_at = now()
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL RETURNING `+webhookEndpointColumns,
		id, pq.Array(orgs))
	return &e, mapErr(err)
}

// nonNilStrings keeps an empty list an empty array: pq.Array(nil) writes NULL, which the
// NOT NULL events column refuses.
func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
