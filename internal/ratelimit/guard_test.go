package ratelimit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const (
	orgA = "0b1e5a3c-7f2d-4e6a-9c1b-2d3e4f5a6b7c"
	orgB = "9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f"
)

// fakeClock is a settable time source for a Guard.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestGuard(t *testing.T, cfg Config) (*Guard, *fakeClock) {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Now()}
	g.now = clock.now
	return g, clock
}

// from is the context of a call by ip, as WithClientIP leaves it.
func from(ip string) context.Context { return ContextWithClientIP(context.Background(), ip) }

func ipOnly() Config {
	cfg := DefaultConfig()
	cfg.PerKey = Limit{}
	return cfg
}

func keyOnly(rate int) Config {
	cfg := DefaultConfig()
	cfg.PerIP = Limit{}
	cfg.PerKey = Limit{Rate: rate, Interval: time.Second, Block: time.Minute}
	return cfg
}

func TestGuardLimitsEachIP(t *testing.T) {
	g, clock := newTestGuard(t, ipOnly())
	for i := range 3 {
		if ok, _ := g.Allow(from("192.0.2.1"), orgA, "K"); !ok {
			t.Fatalf("call %d refused", i)
		}
	}
	if ok, wait := g.Allow(from("192.0.2.1"), orgA, "L"); ok || wait != time.Minute {
		t.Fatalf("fourth call in a second: (%v, %s), want refused for a minute", ok, wait)
	}
	if ok, _ := g.Allow(from("192.0.2.2"), orgA, "K"); !ok {
		t.Fatal("another address was refused")
	}
	clock.advance(30 * time.Second)
	if ok, wait := g.Allow(from("192.0.2.1"), orgA, "K"); ok || wait != 30*time.Second {
		t.Fatalf("during the block: (%v, %s), want refused for 30s", ok, wait)
	}
	clock.advance(30 * time.Second)
	if ok, _ := g.Allow(from("192.0.2.1"), orgA, "K"); !ok {
		t.Fatal("still refused after the block")
	}
}

func TestGuardLimitsEachLicenseKey(t *testing.T) {
	tests := []struct {
		name     string
		org, key string
		limited  bool
	}{
		{"the same key is refused", orgA, "K", true},
		{"another key passes", orgA, "L", false},
		{"the same key in another organization passes", orgB, "K", false},
		{"keys are case-sensitive", orgA, "k", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newTestGuard(t, keyOnly(2))
			for range 2 {
				if ok, _ := g.Allow(from("192.0.2.1"), orgA, "K"); !ok {
					t.Fatal("first calls refused")
				}
			}
			ok, wait := g.Allow(from("192.0.2.2"), tt.org, tt.key)
			if ok == tt.limited || tt.limited && wait != time.Minute {
				t.Fatalf("(%v, %s), want limited %v", ok, wait, tt.limited)
			}
		})
	}
}

func TestGuardCountsCallsRefusedByAddressNotAgainstTheKey(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PerIP.Rate, cfg.PerKey.Rate = 1, 2
	g, _ := newTestGuard(t, cfg)
	g.Allow(from("192.0.2.1"), orgA, "K")
	for range 10 {
		g.Allow(from("192.0.2.1"), orgA, "K")
	}
	if ok, _ := g.Allow(from("192.0.2.2"), orgA, "K"); !ok {
		t.Fatal("one address flooding a key locked its owner out")
	}
}

func TestGuardWithoutAClientAddressAppliesThePerKeyRuleOnly(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PerIP.Rate, cfg.PerKey.Rate = 1, 2
	g, _ := newTestGuard(t, cfg)
	var got []bool
	for range 3 {
		ok, _ := g.Allow(context.Background(), orgA, "K")
		got = append(got, ok)
	}
	if !got[0] || !got[1] || got[2] {
		t.Fatalf("calls allowed %v, want two then a refusal by key", got)
	}
}

func TestGuardWithLimitsDisabled(t *testing.T) {
	g, _ := newTestGuard(t, Config{})
	for i := range 100 {
		if ok, _ := g.Allow(from("192.0.2.1"), orgA, "K"); !ok {
			t.Fatalf("call %d refused with limits off", i)
		}
	}
}

func TestWithClientIPStoresTheAddressOnce(t *testing.T) {
	var got string
	var found bool
	h := WithClientIP(ClientIP(nil))(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got, found = ClientIPFrom(r.Context())
	}))
	r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader("{}"))
	r.RemoteAddr = "[::ffff:192.0.2.7]:4000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if !found || got != "192.0.2.7" {
		t.Fatalf("ClientIPFrom = %q, %v; want the untrusted peer 192.0.2.7", got, found)
	}
	if _, found := ClientIPFrom(context.Background()); found {
		t.Fatal("a context without an address reported one")
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	for _, cfg := range []Config{
		{PerIP: Limit{Rate: 1}},
		{PerKey: Limit{Rate: -1}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestKeyIDSeparatesOrganizationAndKey(t *testing.T) {
	if keyID("a", "bc") == keyID("ab", "c") {
		t.Fatal("different pairs share a limiter key")
	}
	if got := len(keyID(orgA, strings.Repeat("K", 10_000))); got != 32 {
		t.Fatalf("limiter key of a long license key is %d bytes, want a fixed 32", got)
	}
}

func TestGuardSweepDropsExpiredEntriesOfBothRules(t *testing.T) {
	g, clock := newTestGuard(t, DefaultConfig())
	g.Allow(from("192.0.2.1"), orgA, "K")
	g.Allow(from("192.0.2.2"), orgA, "L")
	if got := g.Sweep(clock.t); got != 0 {
		t.Fatalf("Sweep removed %d live entries", got)
	}
	if got := g.Sweep(clock.t.Add(time.Second)); got != 4 {
		t.Fatalf("Sweep removed %d entries, want 2 addresses and 2 keys", got)
	}
}
