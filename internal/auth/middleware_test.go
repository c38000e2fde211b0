package auth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/auth"
)

// fakeResolver answers from a map of hashes and records what it was asked.
type fakeResolver struct {
	principals map[string]auth.Principal
	fixed      *auth.Principal // when set, returned for every hash
	err        error
	calls      []resolveCall
}

// resolveCall is one recorded ResolveToken call.
type resolveCall struct {
	Kind auth.TokenKind
	Hash string
}

func (f *fakeResolver) ResolveToken(_ context.Context, kind auth.TokenKind, hash string) (auth.Principal, error) {
	f.calls = append(f.calls, resolveCall{kind, hash})
	if f.err != nil {
		return auth.Principal{}, f.err
	}
	if f.fixed != nil {
		return *f.fixed, nil
	}
	p, ok := f.principals[hash]
	if !ok {
		return auth.Principal{}, fmt.Errorf("token lookup: %w", auth.ErrInvalidToken)
	}
	return p, nil
}

func TestMiddleware(t *testing.T) {
	secret := []byte("till-test-secret")
	oatToken := auth.Generate(auth.PrefixOrganizationAccessToken)
	cstToken := auth.Generate(auth.PrefixCustomerSession)
	patToken := auth.Generate(auth.PrefixPersonalAccessToken)
	oat := auth.Principal{
		Kind:           auth.KindOrganization,
		TokenID:        uuid.New(),
		OrganizationID: uuid.New(),
		Scopes:         auth.NewScopeSet(auth.ScopeOrdersRead),
	}
	session := auth.Principal{
		Kind:           auth.KindCustomerSession,
		TokenID:        uuid.New(),
		OrganizationID: uuid.New(),
		CustomerID:     uuid.New(),
		Scopes:         auth.NewScopeSet(auth.ScopeOrdersWrite), // a resolver bug the middleware overrides
	}
	oauthToken := auth.Generate(auth.PrefixOAuthUserAccessToken)
	wrongKind := auth.Principal{Kind: auth.KindCustomerSession, CustomerID: uuid.New()}
	invalidHeaders := http.Header{
		"Content-Type":     {"application/json"},
		"Content-Length":   {strconv.Itoa(len(invalidTokenBody))},
		"Cache-Control":    {"no-store"},
		"Pragma":           {"no-cache"},
		"Www-Authenticate": {invalidTokenAuth},
	}
	internalHeaders := http.Header{
		"Content-Type":   {"application/json"},
		"Content-Length": {strconv.Itoa(len(internalBody))},
	}
	badChecksum := oatToken[:len(oatToken)-1] + flip(oatToken[len(oatToken)-1])
	anonymous := auth.Principal{}

	tests := []struct {
		name          string
		header        string
		resolverErr   error
		resolveAs     *auth.Principal
		wantStatus    int
		wantBody      string
		wantHeaders   http.Header
		wantPrincipal *auth.Principal
		wantCalls     []resolveCall
	}{
		{name: "a request without Authorization is anonymous",
			wantStatus: http.StatusOK, wantBody: "ok", wantPrincipal: &anonymous},
		{name: "a resolved organization token reaches the handler as its principal",
			header: "Bearer " + oatToken, wantStatus: http.StatusOK, wantBody: "ok", wantPrincipal: &oat,
			wantCalls: []resolveCall{{auth.TokenOrganization, auth.Hash(secret, oatToken)}}},
		{name: "a lowercase bearer scheme is accepted",
			header: "bearer " + oatToken, wantStatus: http.StatusOK, wantBody: "ok", wantPrincipal: &oat,
			wantCalls: []resolveCall{{auth.TokenOrganization, auth.Hash(secret, oatToken)}}},
		{name: "a customer session carries exactly customer_portal:write",
			header: "Bearer " + cstToken, wantStatus: http.StatusOK, wantBody: "ok",
			wantPrincipal: withScopes(session, auth.ScopeCustomerPortalWrite),
			wantCalls:     []resolveCall{{auth.TokenCustomerSession, auth.Hash(secret, cstToken)}}},
		{name: "an unknown prefix is rejected with invalid_token before any lookup",
			header: "Bearer polar_oat_abc", wantStatus: http.StatusUnauthorized,
			wantBody: invalidTokenBody, wantHeaders: invalidHeaders},
		{name: "a bad checksum is rejected with invalid_token before any lookup",
			header: "Bearer " + badChecksum, wantStatus: http.StatusUnauthorized,
			wantBody: invalidTokenBody, wantHeaders: invalidHeaders},
		{name: "a token the resolver does not know is rejected with invalid_token",
			header: "Bearer " + patToken, wantStatus: http.StatusUnauthorized,
			wantBody: invalidTokenBody, wantHeaders: invalidHeaders,
			wantCalls: []resolveCall{{auth.TokenPersonal, auth.Hash(secret, patToken)}}},
		{name: "a bare ErrInvalidToken from the resolver is rejected with invalid_token",
			header: "Bearer " + oatToken, resolverErr: auth.ErrInvalidToken, wantStatus: http.StatusUnauthorized,
			wantBody: invalidTokenBody, wantHeaders: invalidHeaders,
			wantCalls: []resolveCall{{auth.TokenOrganization, auth.Hash(secret, oatToken)}}},
		{name: "another resolver error is a 500 that reveals nothing",
			header: "Bearer " + oatToken, resolverErr: errors.New("pq: connection refused"),
			wantStatus: http.StatusInternalServerError, wantBody: internalBody, wantHeaders: internalHeaders,
			wantCalls: []resolveCall{{auth.TokenOrganization, auth.Hash(secret, oatToken)}}},
		{name: "a principal of the wrong kind for the token is a 500",
			header: "Bearer " + oauthToken, resolveAs: &wrongKind, wantStatus: http.StatusInternalServerError,
			wantBody: internalBody, wantHeaders: internalHeaders,
			wantCalls: []resolveCall{{auth.TokenOAuthAccess, auth.Hash(secret, oauthToken)}}},
		{name: "a non-ASCII token is treated as no token",
			header: "Bearer till_oat_é", wantStatus: http.StatusOK, wantBody: "ok", wantPrincipal: &anonymous},
		{name: "another scheme is treated as no token",
			header: "Basic dXNlcjpwYXNz", wantStatus: http.StatusOK, wantBody: "ok", wantPrincipal: &anonymous},
		{name: "a client registration token passes through as anonymous without a lookup",
			header: "Bearer till_crt_whatever", wantStatus: http.StatusOK, wantBody: "ok", wantPrincipal: &anonymous},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resolver := &fakeResolver{
				principals: map[string]auth.Principal{
					auth.Hash(secret, oatToken): oat,
					auth.Hash(secret, cstToken): session,
				},
				fixed: tt.resolveAs,
				err:   tt.resolverErr,
			}
			var reached *auth.Principal
			handler := auth.Middleware(resolver, secret)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p := auth.FromContext(r.Context())
				reached = &p
				_, _ = w.Write([]byte("ok"))
			}))
			req := httptest.NewRequest(http.MethodPost, "/v1/customer-portal/license-keys/validate", nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)

			assertResponse(t, rec, tt.wantStatus, tt.wantBody, tt.wantHeaders)
			if diff := cmp.Diff(tt.wantPrincipal, reached); diff != "" {
				t.Errorf("principal seen by the handler (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, resolver.calls); diff != "" {
				t.Errorf("resolver calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMiddlewareWiring(t *testing.T) {
	tests := []struct {
		name    string
		resolve auth.Resolver
		secret  []byte
	}{
		{"a nil resolver is refused at wiring time", nil, []byte("s")},
		{"an empty secret is refused at wiring time", &fakeResolver{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("Middleware did not panic")
				}
			}()
			auth.Middleware(tt.resolve, tt.secret)
		})
	}

	t.Run("changing the caller's secret afterwards does not change hashing", func(t *testing.T) {
		secret := []byte("original")
		token := auth.Generate(auth.PrefixOrganizationAccessToken)
		resolver := &fakeResolver{principals: map[string]auth.Principal{
			auth.Hash([]byte("original"), token): {Kind: auth.KindOrganization},
		}}
		handler := auth.Middleware(resolver, secret)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		copy(secret, "tampered")
		req := httptest.NewRequest(http.MethodGet, "/v1/orders/", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("status = %d, want 200", rec.Code)
		}
	})
}

// withScopes returns a copy of p holding exactly scopes.
func withScopes(p auth.Principal, scopes ...auth.Scope) *auth.Principal {
	p.Scopes = auth.NewScopeSet(scopes...)
	return &p
}

// flip returns a different checksum character than c.
func flip(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}

// refuser is a handler that answers refused tokens itself, as /graphql does.
type refuser struct{ refused []error }

func (h *refuser) ServeHTTP(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }

func (h *refuser) RefuseToken(w http.ResponseWriter, _ *http.Request, err error) {
	h.refused = append(h.refused, err)
	w.WriteHeader(http.StatusTeapot)
}

func TestMiddlewareLetsATokenRefuserAnswer(t *testing.T) {
	secret := []byte("s")
	broken := &fakeResolver{err: errors.New("database down")}
	for _, tt := range []struct {
		name    string
		resolve auth.Resolver
		header  string
		want    error
	}{
		{"a token of no known kind is refused as invalid", &fakeResolver{}, "Bearer nope", auth.ErrInvalidToken},
		{"a token with a bad checksum is refused as invalid", &fakeResolver{}, "Bearer till_oat_abc", auth.ErrInvalidToken},
		{"an unknown token is refused as invalid", &fakeResolver{}, "Bearer " + auth.Generate(auth.PrefixOrganizationAccessToken), auth.ErrInvalidToken},
		{"a failing lookup is refused with its error", broken, "Bearer " + auth.Generate(auth.PrefixOrganizationAccessToken), broken.err},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next := &refuser{}
			req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			req.Header.Set("Authorization", tt.header)
			rec := httptest.NewRecorder()
			auth.Middleware(tt.resolve, secret)(next).ServeHTTP(rec, req)
			if rec.Code != http.StatusTeapot || len(next.refused) != 1 || !errors.Is(next.refused[0], tt.want) {
				t.Errorf("status %d, refusals %v; want the handler's own answer to %v", rec.Code, next.refused, tt.want)
			}
		})
	}
}
