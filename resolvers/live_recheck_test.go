package resolvers_test

import (
	"testing"
	"time"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// TestLiveEndsAtTheRevocationItsCacheHears serves subscriptions through a credential cache,
// as till serve does: a stream stops resolving its credential for every event while the
// cache would answer the same, and must still end, before another event, once the
// revocation's notification has flushed the cache.
func TestLiveEndsAtTheRevocationItsCacheHears(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	cache := auth.NewCache(s.Resolver, time.Minute, time.Now, nil)
	s.GraphQL = auth.Middleware(cache, s.Secret)(s.Resolver.Handler(resolvers.WithSubscriptions(cache)))
	org := s.NewOrg(t, resolverstest.AllScopes)
	doomed := s.NewToken(t, org.ID, "customers:read")
	c := dialLive(t, s, doomed)
	subscribe(t, c, "1", liveCustomersDoc, nil)
	time.Sleep(200 * time.Millisecond)
	for _, email := range []string{"one@example.com", "two@example.com"} {
		createCustomer(t, s, org.Token, vars{"email": email})
		if e := nextEvent(t, c, "customerEvents"); e.Customer == nil || e.Customer.Email != email {
			t.Fatalf("event %+v, want %s's", e, email)
		}
	}

	s.Exec(t, `UPDATE organization_access_tokens SET deleted_at = now() WHERE organization_id = $1 AND scope = 'customers:read'`, org.ID)
	cache.ForgetTokens() // what the revocation's notification does
	createCustomer(t, s, org.Token, vars{"email": "unseen@example.com"})
	if errs := liveErrors(t, c, 10*time.Second); errs[0].Extensions.Code != "UNAUTHENTICATED" {
		t.Errorf("error %+v, want UNAUTHENTICATED", errs[0])
	}
	wantQuiet(t, c, 500*time.Millisecond)
}
