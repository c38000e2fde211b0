package storage

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// OwnedTables are the tables of organization data whose rows an operation names by id: every
// table with a uuid id and an organization_id, except those listed in ownershipUnnamed. A test
// compares the two lists with the database's catalog, so a new table is placed in one.
var OwnedTables = []string{
	"benefit_grants", "benefits", "checkout_links", "checkouts", "custom_fields", "customer_seats", "customers",
	"discounts", "disputes", "domain_events", "downloadables", "events", "files", "jobs",
	"license_key_activations", "license_keys", "license_signing_keys", "members", "meters", "metric_dashboards", "oauth2_clients",
	"orders", "organization_invitations", "payment_methods", "payments", "product_prices", "products",
	"refunds", "subscriptions", "webhook_endpoints", "webhook_events",
}

// OwnershipUnnamed are the tables with a uuid id and an organization_id that no operation
// names by id: credentials, whose ids are never input, and rows that hang off another
// object (an order's items, a subscription's meters) and are reached through it.
var OwnershipUnnamed = []string{
	"billing_entries", "customer_balance_transactions", "customer_meters", "customer_sessions",
	"discount_redemptions", "member_sessions", "oauth2_authorization_codes", "oauth2_grants", "oauth2_tokens",
	"order_items", "organization_access_tokens", "pending_subscription_updates", "subscription_meters",
	"event_types", "webhook_deliveries", "audit_log",
}

// holdsAnySQL answers whether any id of $1 is one of the organizations $2 or a row of
// organization data that one of them owns: one primary-key lookup per table.
var holdsAnySQL = func() string {
	parts := []string{`SELECT id AS organization_id FROM organizations WHERE id = ANY($1)`}
	for _, t := range OwnedTables {
		parts = append(parts, `SELECT organization_id FROM `+t+` WHERE id = ANY($1)`)
	}
	return `SELECT EXISTS (SELECT 1 FROM (` + strings.Join(parts, "\n\t\tUNION ALL ") + `) o
		WHERE o.organization_id = ANY($2))`
}()

// OrganizationsHoldAny reports whether any of ids is one of orgs, or the id of an object one
// of them owns. Guards use it to tell an operation on an organization where the caller's role
// forbids it (refused as such) from one on an organization the caller does not belong to
// (not found, as for everyone else): the caller belongs to every one of orgs, so the answer
// discloses nothing about another organization.
func OrganizationsHoldAny(ctx context.Context, q sqlx.QueryerContext, ids, orgs []uuid.UUID) (bool, error) {
	if len(ids) == 0 || len(orgs) == 0 {
		return false, nil
	}
	var held bool
	err := sqlx.GetContext(ctx, q, &held, holdsAnySQL, pq.Array(ids), pq.Array(orgs))
	return held, mapErr(err)
}
