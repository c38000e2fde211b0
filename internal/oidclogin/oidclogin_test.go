package oidclogin_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"till/internal/oidclogin"
	"till/internal/oidclogin/oidclogintest"
)

func TestProvidersAreReadFromTheirJSONAndMistakesNameTheProvider(t *testing.T) {
	got, err := oidclogin.ParseProviders(`[{"name":"corp","issuer":"https://id.example.com","client_id":"c"}]`)
	if err != nil {
		t.Fatal(err)
	}
	want := []oidclogin.ProviderConfig{{Name: "corp", DisplayName: "corp", Issuer: "https://id.example.com",
		ClientID: "c", Scopes: []string{"email", "profile"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"a value that is not JSON is refused", `corp=https://x`, "not a JSON array"},
		{"an unknown field is refused, so a typo is seen", `[{"name":"a","issuer":"https://x","client_id":"c","clientsecret":"s"}]`, "unknown field"},
		{"a name with capitals is refused", `[{"name":"Corp","issuer":"https://x","client_id":"c"}]`, `name "Corp"`},
		{"a name used twice is refused", `[{"name":"a","issuer":"https://x","client_id":"c"},{"name":"a","issuer":"https://y","client_id":"c"}]`, "used twice"},
		{"an http issuer off localhost is refused", `[{"name":"a","issuer":"http://id.example.com","client_id":"c"}]`, "https"},
		{"an issuer with a query is refused", `[{"name":"a","issuer":"https://x/?a=b","client_id":"c"}]`, "without query"},
		{"a provider without client id is refused", `[{"name":"a","issuer":"https://x"}]`, "client_id is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := oidclogin.ParseProviders(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// signIn runs a whole flow against p the way a browser would, and returns Finish's answer.
func signIn(t *testing.T, s *oidclogin.Set, p *oidclogintest.Provider, tamper func(sealed, state *string)) (*oidclogin.Identity, error) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	authURL, sealed, err := s.Start(ctx, "corp", "/dashboard", now)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound {
		t.Fatalf("provider answered %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	state := back.Query().Get("state")
	if tamper != nil {
		tamper(&sealed, &state)
	}
	f, err := s.Open(sealed, now)
	if err != nil {
		return nil, err
	}
	if f.ReturnTo != "/dashboard" {
		t.Errorf("return_to %q", f.ReturnTo)
	}
	return s.Finish(ctx, f, state, back.Query().Get("code"))
}

func TestASignInYieldsTheIdentityTheProviderVouchesFor(t *testing.T) {
	p := oidclogintest.New(t)
	set := oidclogin.NewSet([]oidclogin.ProviderConfig{{Name: "corp", Issuer: p.URL, ClientID: p.ClientID,
		ClientSecret: p.ClientSecret, Scopes: []string{"email"}}}, []byte("0123456789abcdef0123456789abcdef"),
		func(name string) string { return "http://till.test/auth/oidc/" + name + "/callback" }, nil)
	p.SignInNext(oidclogintest.User{Subject: "u-1", Email: "ada@example.com", EmailVerified: "true", Name: "Ada"})
	got, err := signIn(t, set, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &oidclogin.Identity{Provider: "corp", Subject: "u-1", Email: "ada@example.com", EmailVerified: true, Name: "Ada"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}

	p.SignInNext(oidclogintest.User{Subject: "u-2", Email: "bob@example.com"})
	if got, err := signIn(t, set, p, nil); err != nil || got.EmailVerified {
		t.Errorf("an email the provider does not say is verified came back %+v, %v", got, err)
	}
}

func TestAnAnswerThatIsNotOfThisBrowsersFlowIsRefused(t *testing.T) {
	p := oidclogintest.New(t)
	cfg := []oidclogin.ProviderConfig{{Name: "corp", Issuer: p.URL, ClientID: p.ClientID, ClientSecret: p.ClientSecret}}
	callback := func(name string) string { return "http://till.test/auth/oidc/" + name + "/callback" }
	set := oidclogin.NewSet(cfg, []byte("0123456789abcdef0123456789abcdef"), callback, nil)
	other := oidclogin.NewSet(cfg, []byte("another server secret, 32 bytes"), callback, nil)
	p.SignInNext(oidclogintest.User{Subject: "u-1", Email: "ada@example.com", EmailVerified: true})
	for _, tc := range []struct {
		name   string
		tamper func(sealed, state *string)
		before func()
	}{
		{"another state is refused", func(_, state *string) { *state = "forged" }, nil},
		{"an empty state is refused", func(_, state *string) { *state = "" }, nil},
		{"an altered flow cookie is refused", func(sealed, _ *string) { *sealed = (*sealed)[:len(*sealed)-2] + "AA" }, nil},
		{"a flow cookie sealed by another server is refused", func(sealed, _ *string) {
			_, s, err := other.Start(context.Background(), "corp", "/", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			*sealed = s
		}, nil},
		{"an id token with another nonce is refused", nil, func() { p.WrongNonce = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.WrongNonce = false
			if tc.before != nil {
				tc.before()
			}
			if _, err := signIn(t, set, p, tc.tamper); !errors.Is(err, oidclogin.ErrFlow) {
				t.Fatalf("error %v, want ErrFlow", err)
			}
		})
	}
	t.Run("an expired flow is refused", func(t *testing.T) {
		_, sealed, err := set.Start(context.Background(), "corp", "/", time.Now().Add(-oidclogin.FlowTTL-time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := set.Open(sealed, time.Now()); !errors.Is(err, oidclogin.ErrFlow) {
			t.Fatalf("error %v, want ErrFlow", err)
		}
	})
	t.Run("an unknown provider is refused", func(t *testing.T) {
		if _, _, err := set.Start(context.Background(), "nope", "/", time.Now()); !errors.Is(err, oidclogin.ErrUnknownProvider) {
			t.Fatalf("error %v", err)
		}
	})
}
