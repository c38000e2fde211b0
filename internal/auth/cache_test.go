package auth

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// countingResolver answers from a table and counts lookups.
type countingResolver struct {
	calls     atomic.Int64
	principal map[string]Principal
}

func (c *countingResolver) ResolveToken(_ context.Context, _ TokenKind, hash string) (Principal, error) {
	c.calls.Add(1)
	if p, ok := c.principal[hash]; ok {
		return p, nil
	}
	return Principal{}, ErrInvalidToken
}

func TestCacheReusesTokenPrincipalsWithinTheirTTL(t *testing.T) {
	t0 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	soon := t0.Add(2 * time.Second)
	tests := []struct {
		name  string
		kind  TokenKind
		hash  string
		at    []time.Duration // times of the lookups after t0
		calls int64           // lookups that reach the store
	}{
		{"organization token: one lookup per ttl", TokenOrganization, "org", []time.Duration{0, time.Second, 4 * time.Second, 5 * time.Second}, 2},
		{"personal token is cached too", TokenPersonal, "pat", []time.Duration{0, time.Second}, 1},
		{"never past the token's own expiry", TokenOrganization, "expiring", []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}, 3},
		{"customer sessions are never cached", TokenCustomerSession, "cst", []time.Duration{0, 0, 0}, 3},
		{"member sessions are never cached", TokenMemberSession, "mst", []time.Duration{0, 0}, 2},
		{"failures are never cached", TokenOrganization, "unknown", []time.Duration{0, 0, 0}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &countingResolver{principal: map[string]Principal{
				"org": {Kind: KindOrganization}, "pat": {Kind: KindUser}, "cst": {Kind: KindCustomerSession},
				"mst": {Kind: KindMemberSession}, "expiring": {Kind: KindOrganization, ExpiresAt: &soon}}}
			var now time.Time
			c := Cache(store, 5*time.Second, func() time.Time { return now })
			for _, at := range tt.at {
				now = t0.Add(at)
				_, err := c.ResolveToken(context.Background(), tt.kind, tt.hash)
				if (err != nil) != (tt.hash == "unknown") {
					t.Fatalf("at %s: err = %v", at, err)
				}
			}
			if got := store.calls.Load(); got != tt.calls {
				t.Errorf("store lookups = %d, want %d", got, tt.calls)
			}
		})
	}
}

func TestCacheLeavesUnknownTokensAndZeroTTLAlone(t *testing.T) {
	store := &countingResolver{principal: map[string]Principal{}}
	if Cache(store, 0, time.Now) != Resolver(store) {
		t.Error("a zero ttl should not wrap the resolver")
	}
	c := Cache(store, time.Minute, time.Now)
	if _, err := c.ResolveToken(context.Background(), TokenOrganization, "missing"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("unknown token: %v", err)
	}
}
