package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"till/internal/ratelimit"
)

func TestLicenseRateLimitsFollowTheConfiguration(t *testing.T) {
	const org = "8d1b8d6e-5d1c-4f5e-9a53-0c2f8a9f1e11"
	client := ratelimit.ContextWithClientIP(context.Background(), "192.0.2.1")
	allowed := func(g *ratelimit.Guard, n int) int {
		ok := 0
		for range n {
			if pass, _ := g.Allow(client, org, "K"); pass {
				ok++
			}
		}
		return ok
	}
	for _, tt := range []struct {
		name string
		env  map[string]string
		want int
	}{
		{"by default a client gets upstream's three calls a second", map[string]string{}, 3},
		{"the per-IP rate is configurable", map[string]string{"TILL_LICENSE_RATE_PER_IP": "5"}, 5},
		{"0 turns both limits off", map[string]string{"TILL_LICENSE_RATE_PER_IP": "0", "TILL_LICENSE_RATE_PER_KEY": "0"}, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(getenvOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			g, err := licenseLimits(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := allowed(g, 20); got != tt.want {
				t.Fatalf("%d of 20 calls allowed, want %d", got, tt.want)
			}
		})
	}
}

func TestRateLimitClientAddressHonoursTrustedProxies(t *testing.T) {
	cfg, err := loadConfig(getenvOf(map[string]string{"TILL_TRUSTED_PROXIES": "10.0.0.0/8"}))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := clientIPs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	h := mw(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got, _ = ratelimit.ClientIPFrom(r.Context()) }))
	for _, tt := range []struct{ peer, forwarded, want string }{
		{"10.1.2.3:1", "198.51.100.7", "198.51.100.7"},
		{"192.0.2.1:1", "198.51.100.7", "192.0.2.1"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader("{}"))
		r.RemoteAddr = tt.peer
		r.Header.Set("X-Forwarded-For", tt.forwarded)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != tt.want {
			t.Errorf("peer %s forwarding for %s counts as %q, want %q", tt.peer, tt.forwarded, got, tt.want)
		}
	}
	cfg.TrustedProxies = []string{"10.0.0.0/8", "nonsense"}
	if _, err := clientIPs(cfg); err == nil || !strings.Contains(err.Error(), "TILL_TRUSTED_PROXIES") {
		t.Errorf("a bad proxy CIDR: err = %v", err)
	}
}

func TestGraphQLCostBudgetConfiguration(t *testing.T) {
	cfg, err := loadConfig(getenvOf(map[string]string{"TILL_GRAPHQL_COST_BUDGET": "0"}))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := costBudget(cfg); err != nil || b != nil {
		t.Fatalf("budget 0: a budget (%t), err %v; want none", b != nil, err)
	}
	cfg.GraphQLCostBudget = -1
	if _, err := costBudget(cfg); err == nil || !strings.Contains(err.Error(), "TILL_GRAPHQL_COST_BUDGET") {
		t.Fatalf("a negative budget: err = %v", err)
	}
}
