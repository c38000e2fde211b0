package resolvers_test

import (
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers"
)

// keyBody is 128 random bits in upper-case UUID groups, the body of every issued license key.
const keyBody = `[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}`

func TestGrantAndRevokeBenefits(t *testing.T) {
	t.Parallel()
	w := newGrantWorld(t)
	now := time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)
	w.s.Clock.Set(now)
	lk := w.licenseBenefit(t, vars{"prefix": " myApp ", "activations": vars{"limit": 3, "enable_customer_admin": true},
		"limit_usage": 100, "expires": vars{"ttl": 1, "timeframe": "month"}})
	custom := newBenefit(t, w.s, w.org.Token, "Support")
	p := w.s.NewProduct(t, w.org.ID, "Pro app", lk.ID, custom.ID)
	c := w.s.NewCustomer(t, w.org.ID, "")
	orderID := w.s.NewPaidOrder(t, w.org.ID, c.ID, p.ID, nil)
	scope := resolvers.GrantScope{CustomerID: c.ID, ProductID: p.ID, OrderID: &orderID}
	grantEvents := func(tb testing.TB) map[string]int {
		tb.Helper()
		all := w.events(tb)
		return map[string]int{"created": all["benefit_grant.created"], "updated": all["benefit_grant.updated"],
			"revoked": all["benefit_grant.revoked"]}
	}

	var keyID uuid.UUID
	t.Run("granting an order grants each benefit once and issues one license key", func(t *testing.T) {
		w.grant(t, scope)
		gs := w.grants(t, lk.ID, nil)
		if len(gs) != 1 {
			t.Fatalf("license-key grants = %d, want 1", len(gs))
		}
		g := gs[0]
		if !g.IsGranted || g.IsRevoked || g.GrantedAt == nil || *g.GrantedAt != "2027-01-31T10:00:00Z" || g.RevokedAt != nil ||
			g.OrderID == nil || *g.OrderID != orderID || g.SubscriptionID != nil || g.CustomerID != c.ID ||
			g.Customer.ID != c.ID || g.Member != nil || g.Benefit.ID != lk.ID || g.Benefit.Type != "license_keys" || g.Error != nil {
			t.Errorf("grant = %+v", g)
		}
		keys := w.licenseKeys(t, lk.ID)
		if len(keys) != 1 {
			t.Fatalf("license keys = %d, want 1", len(keys))
		}
		k := keys[0]
		keyID = k.ID
		if !regexp.MustCompile(`^MYAPP-` + keyBody + `$`).MatchString(k.Key) {
			t.Errorf("key = %q, want MYAPP- and 128 bits in UUID groups", k.Key)
		}
		want := licenseKey{ID: k.ID, OrganizationID: w.org.ID, CustomerID: c.ID, BenefitID: lk.ID, Key: k.Key,
			DisplayKey: "****-" + k.Key[len(k.Key)-6:], Status: "granted", LimitActivations: ptr(3), LimitUsage: ptr(100),
			ExpiresAt: ptr("2027-02-28T10:00:00Z")}
		want.Customer.ID = c.ID
		if diff := cmp.Diff(want, k); diff != "" {
			t.Errorf("license key (-want +got):\n%s", diff)
		}
		wantProps := map[string]any{"license_key_id": k.ID.String(), "display_key": k.DisplayKey}
		if diff := cmp.Diff(wantProps, g.Properties); diff != "" {
			t.Errorf("grant properties (-want +got):\n%s", diff)
		}
		if cs := w.grants(t, custom.ID, nil); len(cs) != 1 || !cs[0].IsGranted || len(cs[0].Properties) != 0 {
			t.Errorf("custom grants = %+v, want one granted with empty properties", cs)
		}
		if diff := cmp.Diff(map[string]int{"created": 2, "updated": 0, "revoked": 0}, grantEvents(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("granting the same scope again changes nothing and emits nothing", func(t *testing.T) {
		before := w.grants(t, lk.ID, nil)
		now = now.Add(time.Hour)
		w.s.Clock.Set(now)
		w.grant(t, scope)
		if diff := cmp.Diff(before, w.grants(t, lk.ID, nil)); diff != "" {
			t.Errorf("grants changed (-before +after):\n%s", diff)
		}
		if keys := w.licenseKeys(t, lk.ID); len(keys) != 1 {
			t.Errorf("license keys = %d, want still 1", len(keys))
		}
		if diff := cmp.Diff(map[string]int{"created": 2, "updated": 0, "revoked": 0}, grantEvents(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("revoking clears granted_at, sets revoked_at and revokes the key", func(t *testing.T) {
		w.revoke(t, scope)
		for _, b := range []uuid.UUID{lk.ID, custom.ID} {
			g := w.grants(t, b, nil)[0]
			if g.IsGranted || g.GrantedAt != nil || !g.IsRevoked || g.RevokedAt == nil || *g.RevokedAt != "2027-01-31T11:00:00Z" {
				t.Errorf("grant of %s = %+v, want revoked", b, g)
			}
		}
		if k := w.licenseKeys(t, lk.ID)[0]; k.Status != "revoked" {
			t.Errorf("key status = %s, want revoked", k.Status)
		}
		if diff := cmp.Diff(map[string]int{"created": 2, "updated": 0, "revoked": 2}, grantEvents(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("revoking twice changes nothing and emits nothing", func(t *testing.T) {
		before := w.grants(t, lk.ID, nil)
		now = now.Add(time.Hour)
		w.s.Clock.Set(now)
		w.revoke(t, scope)
		if diff := cmp.Diff(before, w.grants(t, lk.ID, nil)); diff != "" {
			t.Errorf("grants changed (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]int{"created": 2, "updated": 0, "revoked": 2}, grantEvents(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("granting again re-enables the same key with fresh terms and emits updated", func(t *testing.T) {
		w.grant(t, scope)
		g := w.grants(t, lk.ID, nil)
		if len(g) != 1 || !g[0].IsGranted || g[0].IsRevoked || g[0].RevokedAt != nil || *g[0].GrantedAt != "2027-01-31T12:00:00Z" {
			t.Fatalf("grants = %+v, want the one grant granted again", g)
		}
		keys := w.licenseKeys(t, lk.ID)
		if len(keys) != 1 || keys[0].ID != keyID || keys[0].Status != "granted" || *keys[0].ExpiresAt != "2027-02-28T12:00:00Z" {
			t.Errorf("keys = %+v, want key %s granted again, expiring a month after the new grant", keys, keyID)
		}
		if g[0].Properties["license_key_id"] != keyID.String() {
			t.Errorf("grant properties = %v, want the same key", g[0].Properties)
		}
		if diff := cmp.Diff(map[string]int{"created": 2, "updated": 2, "revoked": 2}, grantEvents(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("a benefit taken off the product is revoked by the next grant", func(t *testing.T) {
		w.s.Query(t, w.org.Token, `mutation($id: UUID!, $b: [UUID!]!) { updateProductBenefits(input: {id: $id, benefitIds: $b}) { id } }`,
			vars{"id": p.ID, "b": []uuid.UUID{lk.ID}}, nil)
		w.grant(t, scope)
		if g := w.grants(t, custom.ID, nil)[0]; !g.IsRevoked {
			t.Errorf("custom grant = %+v, want revoked", g)
		}
		if g := w.grants(t, lk.ID, nil)[0]; !g.IsGranted {
			t.Errorf("license-key grant = %+v, want still granted", g)
		}
		if diff := cmp.Diff(map[string]int{"created": 2, "updated": 2, "revoked": 3}, grantEvents(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
}

func TestLicenseKeyTerms(t *testing.T) {
	t.Parallel()
	w := newGrantWorld(t)
	now := time.Date(2028, 1, 31, 23, 59, 59, 123456000, time.UTC)
	w.s.Clock.Set(now)
	c := w.s.NewCustomer(t, w.org.ID, "")
	for _, tc := range []struct {
		name      string
		props     vars
		key       string
		expiresAt *string
		limitAct  *int
		limitUse  *int
	}{
		{name: "a benefit without prefix, expiry or limits issues a bare key without limits",
			props: vars{}, key: `^` + keyBody + `$`},
		{name: "a month from January 31st is the last day of February",
			props: vars{"prefix": "ab", "expires": vars{"ttl": 1, "timeframe": "month"}}, key: `^AB-` + keyBody + `$`,
			expiresAt: ptr("2028-02-29T23:59:59.123456Z")},
		{name: "years count calendar years",
			props: vars{"expires": vars{"ttl": 2, "timeframe": "year"}}, key: `^` + keyBody + `$`,
			expiresAt: ptr("2030-01-31T23:59:59.123456Z")},
		{name: "days count days",
			props: vars{"expires": vars{"ttl": 30, "timeframe": "day"}}, key: `^` + keyBody + `$`,
			expiresAt: ptr("2028-03-01T23:59:59.123456Z")},
		{name: "activation and usage limits come from the benefit",
			props: vars{"activations": vars{"limit": 50, "enable_customer_admin": false}, "limit_usage": 7},
			key:   `^` + keyBody + `$`, limitAct: ptr(50), limitUse: ptr(7)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := w.licenseBenefit(t, tc.props)
			p := w.s.NewProduct(t, w.org.ID, "Product", b.ID)
			o := w.s.NewPaidOrder(t, w.org.ID, c.ID, p.ID, nil)
			w.grant(t, resolvers.GrantScope{CustomerID: c.ID, ProductID: p.ID, OrderID: &o})
			keys := w.licenseKeys(t, b.ID)
			if len(keys) != 1 {
				t.Fatalf("keys = %d, want 1", len(keys))
			}
			k := keys[0]
			if !regexp.MustCompile(tc.key).MatchString(k.Key) {
				t.Errorf("key = %q, want %s", k.Key, tc.key)
			}
			if diff := cmp.Diff([]any{tc.expiresAt, tc.limitAct, tc.limitUse}, []any{k.ExpiresAt, k.LimitActivations, k.LimitUsage}); diff != "" {
				t.Errorf("expires_at, limit_activations, limit_usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConcurrentGrantsOfOneScope(t *testing.T) {
	t.Parallel()
	const n = 50
	w := newGrantWorld(t)
	lk := w.licenseBenefit(t, vars{"prefix": "race"})
	custom := newBenefit(t, w.s, w.org.Token, "Support")
	p := w.s.NewProduct(t, w.org.ID, "Raced", lk.ID, custom.ID)
	c := w.s.NewCustomer(t, w.org.ID, "")
	subID := w.s.NewSubscription(t, w.org.ID, c.ID, p.ID, nil)
	scope := resolvers.GrantScope{OrganizationID: w.org.ID, CustomerID: c.ID, ProductID: p.ID, SubscriptionID: &subID}

	var mu sync.Mutex
	var failures []error
	race(n, func(int) {
		if err := w.s.Resolver.GrantBenefits(t.Context(), scope); err != nil {
			mu.Lock()
			failures = append(failures, err)
			mu.Unlock()
		}
	})
	if len(failures) > 0 {
		t.Fatalf("%d of %d grants failed, first: %v", len(failures), n, failures[0])
	}
	var grants, keys, created int
	w.s.Get(t, &grants, `SELECT count(*) FROM benefit_grants WHERE subscription_id = $1`, subID)
	w.s.Get(t, &keys, `SELECT count(*) FROM license_keys WHERE customer_id = $1`, c.ID)
	w.s.Get(t, &created, `SELECT count(*) FROM domain_events WHERE organization_id = $1 AND type = 'benefit_grant.created'`, w.org.ID)
	if grants != 2 || keys != 1 || created != 2 {
		t.Fatalf("grants = %d, license keys = %d, created events = %d; want 2, 1 and 2", grants, keys, created)
	}
}
