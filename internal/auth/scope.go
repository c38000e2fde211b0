package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Scope is an OAuth2-style permission string carried by a token. Routes accept
// a token holding any one of their scopes, exactly as upstream does, so scope
// strings must match upstream's byte for byte.
type Scope string

// Scopes grantable to tokens: the `Scope` enum of the published Polar
// 2026-04 OpenAPI document, in its order. Each comment gives upstream's
// consent-screen wording where it has one.
const (
	// ScopeOpenID requests an OpenID Connect ID token.
	ScopeOpenID Scope = "openid"
	// ScopeProfile reads the user's profile.
	ScopeProfile Scope = "profile"
	// ScopeEmail reads the user's email address.
	ScopeEmail Scope = "email"
	// ScopeUserRead reads the user.
	ScopeUserRead Scope = "user:read"
	// ScopeUserWrite deletes the user account.
	ScopeUserWrite Scope = "user:write"
	// ScopeOrganizationsRead reads the user's organizations.
	ScopeOrganizationsRead Scope = "organizations:read"
	// ScopeOrganizationsWrite creates or modifies organizations.
	ScopeOrganizationsWrite Scope = "organizations:write"
	// ScopeCustomFieldsRead reads custom fields.
	ScopeCustomFieldsRead Scope = "custom_fields:read"
	// ScopeCustomFieldsWrite creates or modifies custom fields.
	ScopeCustomFieldsWrite Scope = "custom_fields:write"
	// ScopeDiscountsRead reads discounts.
	ScopeDiscountsRead Scope = "discounts:read"
	// ScopeDiscountsWrite creates or modifies discounts.
	ScopeDiscountsWrite Scope = "discounts:write"
	// ScopeCheckoutLinksRead reads checkout links.
	ScopeCheckoutLinksRead Scope = "checkout_links:read"
	// ScopeCheckoutLinksWrite creates or modifies checkout links.
	ScopeCheckoutLinksWrite Scope = "checkout_links:write"
	// ScopeCheckoutsRead reads checkout sessions.
	ScopeCheckoutsRead Scope = "checkouts:read"
	// ScopeCheckoutsWrite creates or modifies checkout sessions.
	ScopeCheckoutsWrite Scope = "checkouts:write"
	// ScopeTransactionsRead reads transactions.
	ScopeTransactionsRead Scope = "transactions:read"
	// ScopeTransactionsWrite creates or modifies transactions.
	ScopeTransactionsWrite Scope = "transactions:write"
	// ScopePayoutsRead reads payouts.
	ScopePayoutsRead Scope = "payouts:read"
	// ScopePayoutsWrite creates or modifies payouts.
	ScopePayoutsWrite Scope = "payouts:write"
	// ScopeProductsRead reads products.
	ScopeProductsRead Scope = "products:read"
	// ScopeProductsWrite creates or modifies products.
	ScopeProductsWrite Scope = "products:write"
	// ScopeBenefitsRead reads benefits and their grants.
	ScopeBenefitsRead Scope = "benefits:read"
	// ScopeBenefitsWrite creates or modifies benefits.
	ScopeBenefitsWrite Scope = "benefits:write"
	// ScopeEventsRead reads usage events.
	ScopeEventsRead Scope = "events:read"
	// ScopeEventsWrite ingests usage events.
	ScopeEventsWrite Scope = "events:write"
	// ScopeMetersRead reads meters.
	ScopeMetersRead Scope = "meters:read"
	// ScopeMetersWrite creates or modifies meters.
	ScopeMetersWrite Scope = "meters:write"
	// ScopeFilesRead reads file uploads.
	ScopeFilesRead Scope = "files:read"
	// ScopeFilesWrite creates or modifies file uploads.
	ScopeFilesWrite Scope = "files:write"
	// ScopeSubscriptionsRead reads subscriptions made on the organizations.
	ScopeSubscriptionsRead Scope = "subscriptions:read"
	// ScopeSubscriptionsWrite creates or modifies subscriptions.
	ScopeSubscriptionsWrite Scope = "subscriptions:write"
	// ScopeCustomersRead reads customers and their payment methods.
	ScopeCustomersRead Scope = "customers:read"
	// ScopeCustomersWrite creates or modifies customers.
	ScopeCustomersWrite Scope = "customers:write"
	// ScopeMembersRead reads members.
	ScopeMembersRead Scope = "members:read"
	// ScopeMembersWrite creates or modifies members.
	ScopeMembersWrite Scope = "members:write"
	// ScopeWalletsRead reads wallets.
	ScopeWalletsRead Scope = "wallets:read"
	// ScopeWalletsWrite creates or modifies wallets.
	ScopeWalletsWrite Scope = "wallets:write"
	// ScopeDisputesRead reads disputes.
	ScopeDisputesRead Scope = "disputes:read"
	// ScopeDisputesWrite grants write access to disputes.
	ScopeDisputesWrite Scope = "disputes:write"
	// ScopeCustomerMetersRead reads customer meters.
	ScopeCustomerMetersRead Scope = "customer_meters:read"
	// ScopeCustomerSessionsWrite creates customer sessions (till_cst_).
	ScopeCustomerSessionsWrite Scope = "customer_sessions:write"
	// ScopeMemberSessionsWrite creates member sessions (till_mst_).
	ScopeMemberSessionsWrite Scope = "member_sessions:write"
	// ScopeCustomerSeatsRead reads customer seats.
	ScopeCustomerSeatsRead Scope = "customer_seats:read"
	// ScopeCustomerSeatsWrite creates or modifies customer seats.
	ScopeCustomerSeatsWrite Scope = "customer_seats:write"
	// ScopeOrdersRead reads orders, invoices and receipts.
	ScopeOrdersRead Scope = "orders:read"
	// ScopeOrdersWrite modifies orders.
	ScopeOrdersWrite Scope = "orders:write"
	// ScopeRefundsRead reads refunds.
	ScopeRefundsRead Scope = "refunds:read"
	// ScopeRefundsWrite creates or modifies refunds.
	ScopeRefundsWrite Scope = "refunds:write"
	// ScopePaymentsRead reads payments.
	ScopePaymentsRead Scope = "payments:read"
	// ScopeMetricsRead reads metrics.
	ScopeMetricsRead Scope = "metrics:read"
	// ScopeMetricsWrite grants write access to metrics.
	ScopeMetricsWrite Scope = "metrics:write"
	// ScopeWebhooksRead reads webhook endpoints and deliveries.
	ScopeWebhooksRead Scope = "webhooks:read"
	// ScopeWebhooksWrite creates or modifies webhook endpoints.
	ScopeWebhooksWrite Scope = "webhooks:write"
	// ScopeLicenseKeysRead reads license keys.
	ScopeLicenseKeysRead Scope = "license_keys:read"
	// ScopeLicenseKeysWrite modifies, validates and activates license keys.
	ScopeLicenseKeysWrite Scope = "license_keys:write"
	// ScopeCustomerPortalRead reads the customer's own orders, subscriptions
	// and benefits. [ScopeCustomerPortalWrite] satisfies it (see
	// [Principal.HasAnyScope]).
	ScopeCustomerPortalRead Scope = "customer_portal:read"
	// ScopeCustomerPortalWrite creates or modifies the customer's own orders,
	// subscriptions and benefits; customer and member sessions carry exactly
	// this scope.
	ScopeCustomerPortalWrite Scope = "customer_portal:write"
	// ScopeNotificationsRead reads notifications.
	ScopeNotificationsRead Scope = "notifications:read"
	// ScopeNotificationsWrite marks notifications as read.
	ScopeNotificationsWrite Scope = "notifications:write"
	// ScopeNotificationRecipientsRead reads notification recipients.
	ScopeNotificationRecipientsRead Scope = "notification_recipients:read"
	// ScopeNotificationRecipientsWrite creates or modifies notification
	// recipients.
	ScopeNotificationRecipientsWrite Scope = "notification_recipients:write"
	// ScopeOrganizationAccessTokensRead reads organization access tokens.
	ScopeOrganizationAccessTokensRead Scope = "organization_access_tokens:read"
	// ScopeOrganizationAccessTokensWrite creates or modifies organization
	// access tokens.
	ScopeOrganizationAccessTokensWrite Scope = "organization_access_tokens:write"
)

// Reserved scopes exist upstream for first-party browser sessions only. They
// are never granted to a token, so they are absent from [AllScopes] and
// [ParseScopes] rejects them.
const (
	// ScopeWebRead is the reserved read scope of a first-party web session.
	ScopeWebRead Scope = "web:read"
	// ScopeWebWrite is the reserved write scope of a first-party web session.
	ScopeWebWrite Scope = "web:write"
)

// allScopes is the constant table behind [AllScopes], in published order.
var allScopes = [...]Scope{
	ScopeOpenID, ScopeProfile, ScopeEmail,
	ScopeUserRead, ScopeUserWrite,
	ScopeOrganizationsRead, ScopeOrganizationsWrite,
	ScopeCustomFieldsRead, ScopeCustomFieldsWrite,
	ScopeDiscountsRead, ScopeDiscountsWrite,
	ScopeCheckoutLinksRead, ScopeCheckoutLinksWrite,
	ScopeCheckoutsRead, ScopeCheckoutsWrite,
	ScopeTransactionsRead, ScopeTransactionsWrite,
	ScopePayoutsRead, ScopePayoutsWrite,
	ScopeProductsRead, ScopeProductsWrite,
	ScopeBenefitsRead, ScopeBenefitsWrite,
	ScopeEventsRead, ScopeEventsWrite,
	ScopeMetersRead, ScopeMetersWrite,
	ScopeFilesRead, ScopeFilesWrite,
	ScopeSubscriptionsRead, ScopeSubscriptionsWrite,
	ScopeCustomersRead, ScopeCustomersWrite,
	ScopeMembersRead, ScopeMembersWrite,
	ScopeWalletsRead, ScopeWalletsWrite,
	ScopeDisputesRead, ScopeDisputesWrite,
	ScopeCustomerMetersRead,
	ScopeCustomerSessionsWrite, ScopeMemberSessionsWrite,
	ScopeCustomerSeatsRead, ScopeCustomerSeatsWrite,
	ScopeOrdersRead, ScopeOrdersWrite,
	ScopeRefundsRead, ScopeRefundsWrite,
	ScopePaymentsRead,
	ScopeMetricsRead, ScopeMetricsWrite,
	ScopeWebhooksRead, ScopeWebhooksWrite,
	ScopeLicenseKeysRead, ScopeLicenseKeysWrite,
	ScopeCustomerPortalRead, ScopeCustomerPortalWrite,
	ScopeNotificationsRead, ScopeNotificationsWrite,
	ScopeNotificationRecipientsRead, ScopeNotificationRecipientsWrite,
	ScopeOrganizationAccessTokensRead, ScopeOrganizationAccessTokensWrite,
}

// AllScopes returns every grantable scope in upstream's published order: what
// "all" expands to, what a discovery document advertises and the canonical
// order for printing a scope set. The slice is a fresh copy.
func AllScopes() []Scope {
	return slices.Clone(allScopes[:])
}

// Known reports whether s is a grantable scope, so storage can refuse to
// persist a string no route would ever accept.
func (s Scope) Known() bool {
	return slices.Contains(allScopes[:], s)
}

// ScopeSet is an unordered set of scopes. Tokens hold sets because upstream
// compares them by intersection; the zero (nil) set is empty and readable.
type ScopeSet map[Scope]struct{}

// NewScopeSet builds a set from individual scopes, mainly for resolvers and
// tests.
func NewScopeSet(scopes ...Scope) ScopeSet {
	set := make(ScopeSet, len(scopes))
	for _, s := range scopes {
		set[s] = struct{}{}
	}
	return set
}

// Has reports whether s is literally in the set; it applies no implication
// between scopes (see [Principal.HasAnyScope] for route checks).
func (set ScopeSet) Has(s Scope) bool {
	_, ok := set[s]
	return ok
}

// List returns the scopes in [AllScopes] order, then any unknown ones sorted,
// so output built from a set is deterministic.
func (set ScopeSet) List() []Scope {
	out := make([]Scope, 0, len(set))
	for _, s := range allScopes {
		if set.Has(s) {
			out = append(out, s)
		}
	}
	var unknown []Scope
	for s := range set {
		if !s.Known() {
			unknown = append(unknown, s)
		}
	}
	slices.Sort(unknown)
	return append(out, unknown...)
}

// String joins [ScopeSet.List] with spaces, the OAuth2 wire form of a scope
// parameter.
func (set ScopeSet) String() string {
	parts := make([]string, 0, len(set))
	for _, s := range set.List() {
		parts = append(parts, string(s))
	}
	return strings.Join(parts, " ")
}

// UnknownScopeError is returned by [ParseScopes] for a name that is not a
// grantable scope. It carries the name so the caller can report it in its own
// error format (a 422 item, an OAuth2 invalid_scope, a CLI message).
type UnknownScopeError struct {
	// Scope is the offending name exactly as given.
	Scope string
}

// Error names the offending scope.
func (e *UnknownScopeError) Error() string {
	return fmt.Sprintf("auth: unknown scope %q", e.Scope)
}

// ParseScopes reads a scope list separated by spaces, commas or both — the
// OAuth2 wire form and the friendlier form operators type. "all" stands for
// every grantable scope. An empty list is an empty set. Any other name that is
// not in [AllScopes], reserved ones included, is an *[UnknownScopeError].
func ParseScopes(list string) (ScopeSet, error) {
	names := strings.FieldsFunc(list, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	set := make(ScopeSet, len(names))
	for _, name := range names {
		if name == "all" {
			for _, s := range allScopes {
				set[s] = struct{}{}
			}
			continue
		}
		s := Scope(name)
		if !s.Known() {
			return nil, &UnknownScopeError{Scope: name}
		}
		set[s] = struct{}{}
	}
	return set, nil
}
