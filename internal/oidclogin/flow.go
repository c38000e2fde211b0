package oidclogin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"till/internal/seal"
)

// FlowTTL is how long a browser may take at the provider before the answer is refused.
const FlowTTL = 10 * time.Minute

// sealPurpose keeps flow cookies from opening as any other sealed value.
const sealPurpose = "till oidc login flow"

// ErrUnknownProvider is a provider name that is not configured.
var ErrUnknownProvider = errors.New("oidclogin: unknown provider")

// ErrFlow is an answer that does not belong to a flow this server started for this
// browser: a missing, altered or expired flow cookie, another state, or a provider error.
// Its message is safe to show.
var ErrFlow = errors.New("the sign-in did not complete; please try again")

// Identity is what a provider vouches for: who the user is there, and their email.
type Identity struct {
	Provider string
	// Subject is the provider's stable id of the user (the id token's sub).
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
}

// Set holds the configured providers. Discovery happens on first use and is retried on
// the next sign-in when it fails, so an unreachable provider never stops the server.
type Set struct {
	secret   []byte
	callback func(name string) string
	client   *http.Client
	configs  map[string]ProviderConfig
	order    []ProviderConfig

	mu         sync.Mutex
	discovered map[string]*provider
}

type provider struct {
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
}

// NewSet serves cfgs. callback gives the redirect URI registered at each provider (Till's
// public URL + /auth/oidc/{name}/callback); client makes the calls to providers (nil is
// http.DefaultClient).
func NewSet(cfgs []ProviderConfig, secret []byte, callback func(name string) string, client *http.Client) *Set {
	s := &Set{secret: secret, callback: callback, client: client, configs: map[string]ProviderConfig{},
		order: cfgs, discovered: map[string]*provider{}}
	for _, c := range cfgs {
		s.configs[c.Name] = c
	}
	return s
}

// Providers lists the configured providers in configuration order, for the sign-in page.
func (s *Set) Providers() []ProviderConfig {
	if s == nil {
		return nil
	}
	return s.order
}

// Has reports whether name is a configured provider.
func (s *Set) Has(name string) bool {
	if s == nil {
		return false
	}
	_, ok := s.configs[name]
	return ok
}

func (s *Set) provider(ctx context.Context, name string) (*provider, error) {
	cfg, ok := s.configs[name]
	if !ok {
		return nil, ErrUnknownProvider
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.discovered[name]; p != nil {
		return p, nil
	}
	dctx, cancel := context.WithTimeout(s.clientContext(context.WithoutCancel(ctx)), 10*time.Second)
	defer cancel()
	op, err := oidc.NewProvider(dctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidclogin: discovery of %s: %w", name, err)
	}
	p := &provider{
		oauth: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: op.Endpoint(),
			RedirectURL: s.callback(name), Scopes: append([]string{oidc.ScopeOpenID}, cfg.Scopes...)},
		verifier: op.VerifierContext(s.clientContext(context.Background()), &oidc.Config{ClientID: cfg.ClientID}),
	}
	s.discovered[name] = p
	return p, nil
}

// clientContext makes go-oidc and x/oauth2 use the set's HTTP client.
func (s *Set) clientContext(ctx context.Context) context.Context {
	if s.client == nil {
		return ctx
	}
	return oidc.ClientContext(ctx, s.client)
}

// Flow is what the browser carries (sealed, in a cookie) between leaving for the provider
// and coming back: it binds the answer to this browser and this request.
type Flow struct {
	Provider string    `json:"p"`
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	ReturnTo string    `json:"r"`
	Expires  time.Time `json:"e"`
}

// Start begins a sign-in with provider name: the URL to send the browser to, and the
// sealed flow to set as a cookie.
func (s *Set) Start(ctx context.Context, name, returnTo string, now time.Time) (authURL, sealed string, err error) {
	p, err := s.provider(ctx, name)
	if err != nil {
		return "", "", err
	}
	f := Flow{Provider: name, State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(),
		ReturnTo: returnTo, Expires: now.Add(FlowTTL)}
	raw, err := json.Marshal(f)
	if err != nil {
		return "", "", err
	}
	box, err := seal.Seal(s.secret, sealPurpose, raw, nil)
	if err != nil {
		return "", "", err
	}
	authURL = p.oauth.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier))
	return authURL, base64.RawURLEncoding.EncodeToString(box), nil
}

// Open reads a flow cookie back; anything altered, sealed by another server or expired is
// ErrFlow.
func (s *Set) Open(sealed string, now time.Time) (*Flow, error) {
	box, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		return nil, ErrFlow
	}
	raw, err := seal.Open(s.secret, sealPurpose, box, nil)
	if err != nil {
		return nil, ErrFlow
	}
	var f Flow
	if err := json.Unmarshal(raw, &f); err != nil || !now.Before(f.Expires) {
		return nil, ErrFlow
	}
	return &f, nil
}

// Finish checks the provider's answer against the flow (state), exchanges the code with
// the PKCE verifier and verifies the id token (signature, issuer, audience, expiry, nonce).
func (s *Set) Finish(ctx context.Context, f *Flow, state, code string) (*Identity, error) {
	if f == nil || state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(f.State)) != 1 || code == "" {
		return nil, ErrFlow
	}
	p, err := s.provider(ctx, f.Provider)
	if err != nil {
		return nil, err
	}
	tok, err := p.oauth.Exchange(s.clientContext(ctx), code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return nil, fmt.Errorf("%w (token exchange: %v)", ErrFlow, err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return nil, fmt.Errorf("%w (no id token)", ErrFlow)
	}
	idt, err := p.verifier.Verify(s.clientContext(ctx), raw)
	if err != nil {
		return nil, fmt.Errorf("%w (id token: %v)", ErrFlow, err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		return nil, fmt.Errorf("%w (nonce)", ErrFlow)
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
		Name          string `json:"name"`
	}
	if err := idt.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w (claims: %v)", ErrFlow, err)
	}
	return &Identity{Provider: f.Provider, Subject: idt.Subject, Email: claims.Email,
		EmailVerified: verified(claims.EmailVerified), Name: claims.Name}, nil
}

// verified reads email_verified, which some providers send as the string "true".
func verified(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
