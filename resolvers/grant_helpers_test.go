package resolvers_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// grantWorld is one organization selling products whose benefits the tests grant. Orders
// and subscriptions are inserted directly: creating them is other use cases' work, and
// granting only needs their rows.
type grantWorld struct {
	s   *resolverstest.Server
	org resolverstest.Org
}

func newGrantWorld(tb testing.TB, opts ...resolverstest.Option) *grantWorld {
	tb.Helper()
	s := resolverstest.New(tb, opts...)
	return &grantWorld{s: s, org: s.NewOrg(tb, resolverstest.AllScopes)}
}

// licenseBenefit creates a license_keys benefit with the given properties.
func (w *grantWorld) licenseBenefit(tb testing.TB, props vars) benefit {
	tb.Helper()
	return createBenefit(tb, w.s, w.org.Token, vars{"type": "license_keys", "description": "License key", "properties": props})
}

// grant runs grantBenefits for a scope and fails the test if it fails.
func (w *grantWorld) grant(tb testing.TB, scope resolvers.GrantScope) {
	tb.Helper()
	if scope.OrganizationID == uuid.Nil {
		scope.OrganizationID = w.org.ID
	}
	if err := w.s.Resolver.GrantBenefits(context.Background(), scope); err != nil {
		tb.Fatalf("granting %+v: %v", scope, err)
	}
}

// revoke runs revokeBenefits for a scope and fails the test if it fails.
func (w *grantWorld) revoke(tb testing.TB, scope resolvers.GrantScope) {
	tb.Helper()
	if scope.OrganizationID == uuid.Nil {
		scope.OrganizationID = w.org.ID
	}
	if err := w.s.Resolver.RevokeBenefits(context.Background(), scope); err != nil {
		tb.Fatalf("revoking %+v: %v", scope, err)
	}
}

// grantFields selects everything tests compare on a grant; properties keep /v1's keys.
const grantFields = `id createdAt grantedAt isGranted revokedAt isRevoked subscriptionId orderId customerId
	memberId benefitId error { message type timestamp } properties {
		... on BenefitGrantLicenseKeysProperties { license_key_id: licenseKeyId display_key: displayKey }
		... on BenefitGrantDownloadablesProperties { files } }
	customer { id } member { id email } benefit { id type }`

type grant struct {
	ID             uuid.UUID      `json:"id"`
	GrantedAt      *string        `json:"grantedAt"`
	IsGranted      bool           `json:"isGranted"`
	RevokedAt      *string        `json:"revokedAt"`
	IsRevoked      bool           `json:"isRevoked"`
	SubscriptionID *uuid.UUID     `json:"subscriptionId"`
	OrderID        *uuid.UUID     `json:"orderId"`
	CustomerID     uuid.UUID      `json:"customerId"`
	MemberID       *uuid.UUID     `json:"memberId"`
	BenefitID      uuid.UUID      `json:"benefitId"`
	Error          map[string]any `json:"error"`
	Properties     map[string]any `json:"properties"`
	Customer       struct {
		ID uuid.UUID `json:"id"`
	} `json:"customer"`
	Member *struct {
		ID    uuid.UUID `json:"id"`
		Email string    `json:"email"`
	} `json:"member"`
	Benefit struct {
		ID   uuid.UUID `json:"id"`
		Type string    `json:"type"`
	} `json:"benefit"`
}

// grants lists a benefit's grants through GraphQL; extra holds further arguments.
func (w *grantWorld) grants(tb testing.TB, benefitID uuid.UUID, extra vars) []grant {
	tb.Helper()
	args := vars{"benefitId": benefitID, "limit": 100}
	for k, v := range extra {
		args[k] = v
	}
	var out struct {
		BenefitGrants struct{ Items []grant }
	}
	w.s.Query(tb, w.org.Token, `query($benefitId: UUID!, $isGranted: Boolean, $customerId: [UUID!], $memberId: [UUID!], $limit: Int) {
		benefitGrants(benefitId: $benefitId, isGranted: $isGranted, customerId: $customerId, memberId: $memberId, limit: $limit) {
			items { `+grantFields+` } } }`, args, &out)
	return out.BenefitGrants.Items
}

// licenseKeyFields selects everything tests compare on a license key.
const licenseKeyFields = `id organizationId customerId memberId benefitId key displayKey status limitActivations
	usage limitUsage validations lastValidatedAt expiresAt customer { id }`

type licenseKey struct {
	ID               uuid.UUID  `json:"id"`
	OrganizationID   uuid.UUID  `json:"organizationId"`
	CustomerID       uuid.UUID  `json:"customerId"`
	MemberID         *uuid.UUID `json:"memberId"`
	BenefitID        uuid.UUID  `json:"benefitId"`
	Key              string     `json:"key"`
	DisplayKey       string     `json:"displayKey"`
	Status           string     `json:"status"`
	LimitActivations *int       `json:"limitActivations"`
	Usage            int        `json:"usage"`
	LimitUsage       *int       `json:"limitUsage"`
	Validations      int        `json:"validations"`
	ExpiresAt        *string    `json:"expiresAt"`
	Customer         struct {
		ID uuid.UUID `json:"id"`
	} `json:"customer"`
}

// licenseKeys lists the organization's keys of a benefit through GraphQL.
func (w *grantWorld) licenseKeys(tb testing.TB, benefitID uuid.UUID) []licenseKey {
	tb.Helper()
	var out struct {
		LicenseKeys struct{ Items []licenseKey }
	}
	w.s.Query(tb, w.org.Token, `query($b: [UUID!]) { licenseKeys(benefitId: $b, limit: 100) { items { `+licenseKeyFields+` } } }`,
		vars{"b": []uuid.UUID{benefitID}}, &out)
	return out.LicenseKeys.Items
}

// events counts the organization's domain events by type.
func (w *grantWorld) events(tb testing.TB) map[string]int {
	tb.Helper()
	rows, err := w.s.DB.QueryContext(context.Background(),
		`SELECT type, count(*) FROM domain_events WHERE organization_id = $1 GROUP BY type`, w.org.ID)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var typ string
		var n int
		if err := rows.Scan(&typ, &n); err != nil {
			tb.Fatal(err)
		}
		out[typ] = n
	}
	return out
}
