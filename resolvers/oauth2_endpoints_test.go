package resolvers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// wantOAuth2Error is the whole answer an endpoint's failure must carry.
type wantOAuth2Error struct {
	status            int
	code, description string
	header            http.Header
}

func (w wantOAuth2Error) check(t *testing.T, got *resolvers.OAuth2Error) {
	t.Helper()
	if got == nil {
		t.Fatalf("no error, want %d %s", w.status, w.code)
	}
	if got.Status != w.status || got.Code != w.code || got.Description != w.description {
		t.Errorf("error = %d %s %q, want %d %s %q", got.Status, got.Code, got.Description, w.status, w.code, w.description)
	}
	if len(w.header) == 0 && len(got.Header) == 0 {
		return
	}
	if diff := cmp.Diff(w.header, got.Header); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

func TestOAuth2ClientEndpointsAnswerCompleteErrors(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	id, secret := endpointClient(t, s, "client_secret_basic", "openid")
	postID, postSecret := endpointClient(t, s, "client_secret_post", "openid")
	ctx := context.Background()
	basicChallenge := http.Header{"Www-Authenticate": {`Basic error="invalid_client"`}}
	basicWrong := resolvers.ClientCredentials{ID: id, Secret: "wrong", Basic: true, Addr: "192.0.2.1"}
	postWrong := resolvers.ClientCredentials{ID: postID, Secret: "wrong", Addr: "192.0.2.2"}
	post := resolvers.ClientCredentials{ID: postID, Secret: postSecret, Addr: "192.0.2.3"}
	basic := resolvers.ClientCredentials{ID: id, Secret: secret, Basic: true, Addr: "192.0.2.4"}
	token := func(req resolvers.TokenRequest) func() *resolvers.OAuth2Error {
		return func() *resolvers.OAuth2Error {
			resp, fail := s.Resolver.ExchangeOAuth2Token(ctx, req)
			if resp != nil && fail != nil {
				t.Errorf("both an answer and an error: %+v, %+v", resp, fail)
			}
			return fail
		}
	}
	introspect := func(q resolvers.TokenQuery) func() *resolvers.OAuth2Error {
		return func() *resolvers.OAuth2Error {
			_, fail := s.Resolver.IntrospectOAuth2Token(ctx, q)
			return fail
		}
	}
	revoke := func(q resolvers.TokenQuery) func() *resolvers.OAuth2Error {
		return func() *resolvers.OAuth2Error { return s.Resolver.RevokeOAuth2Token(ctx, q) }
	}
	malformed := wantOAuth2Error{status: 400, code: "invalid_request"}
	refused := wantOAuth2Error{status: 401, code: "invalid_client"}
	challenged := wantOAuth2Error{status: 401, code: "invalid_client", header: basicChallenge}
	for _, tt := range []struct {
		name string
		call func() *resolvers.OAuth2Error
		want wantOAuth2Error
	}{
		{"a malformed token form is invalid_request", token(resolvers.TokenRequest{Malformed: true, Client: basicWrong}), malformed},
		{"a wrong secret sent with Basic is challenged", token(resolvers.TokenRequest{Client: basicWrong, GrantType: "authorization_code"}), challenged},
		{"a wrong secret sent in the form is not", token(resolvers.TokenRequest{Client: postWrong, GrantType: "authorization_code"}), refused},
		{"a missing grant type says so", token(resolvers.TokenRequest{Client: post}),
			wantOAuth2Error{status: 400, code: "invalid_request", description: `Missing "grant_type" in request.`}},
		{"an unknown code is invalid_grant", token(resolvers.TokenRequest{Client: basic, GrantType: "authorization_code", Code: "nope"}),
			wantOAuth2Error{status: 400, code: "invalid_grant", description: `Invalid "code" in request.`}},
		{"a malformed introspection form is invalid_request", introspect(resolvers.TokenQuery{Malformed: true}), malformed},
		{"introspection challenges a wrong Basic secret", introspect(resolvers.TokenQuery{Client: basicWrong, Token: "x"}), challenged},
		{"introspection refuses an unknown hint", introspect(resolvers.TokenQuery{Client: post, Token: "x", TokenTypeHint: "id_token"}),
			wantOAuth2Error{status: 400, code: "unsupported_token_type"}},
		{"a malformed revocation form is invalid_request", revoke(resolvers.TokenQuery{Malformed: true}), malformed},
		{"revocation challenges a wrong Basic secret", revoke(resolvers.TokenQuery{Client: basicWrong, Token: "x"}), challenged},
		{"revocation needs a token", revoke(resolvers.TokenQuery{Client: post}),
			wantOAuth2Error{status: 400, code: "invalid_request", description: `Missing "token" in request.`}},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.want.check(t, tt.call()) })
	}
}

func TestAnInactiveTokenIsIntrospectedAsActiveFalseAlone(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	id, secret := endpointClient(t, s, "client_secret_post", "openid")
	info, fail := s.Resolver.IntrospectOAuth2Token(context.Background(),
		resolvers.TokenQuery{Client: resolvers.ClientCredentials{ID: id, Secret: secret}, Token: "till_at_u_unknown"})
	if fail != nil {
		t.Fatal(fail)
	}
	if b, err := json.Marshal(info); err != nil || string(b) != `{"active":false}` {
		t.Errorf("inactive answer = %s, %v", b, err)
	}
	active := resolvers.Introspection{Active: true, ClientID: id, Organizations: []string{}}
	b, _ := json.Marshal(active)
	if !strings.HasPrefix(string(b), `{"active":true,"client_id":"`+id+`","token_type":"","scope":""`) || !strings.Contains(string(b), `"iat":0}`) {
		t.Errorf("active answer = %s", b)
	}
}

func TestAThrottledClientIsToldWhenToRetry(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	id, _ := endpointClient(t, s, "client_secret_post", "openid")
	wrong := resolvers.TokenRequest{Client: resolvers.ClientCredentials{ID: id, Secret: "wrong", Addr: "192.0.2.9"}, GrantType: "refresh_token"}
	var fail *resolvers.OAuth2Error
	for range 11 {
		_, fail = s.Resolver.ExchangeOAuth2Token(context.Background(), wrong)
	}
	if fail == nil || fail.Status != http.StatusTooManyRequests || fail.Code != "invalid_client" {
		t.Fatalf("after 11 failures: %+v", fail)
	}
	if secs, err := strconv.Atoi(fail.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
		t.Errorf("Retry-After = %q, want whole seconds up to a minute", fail.Header.Get("Retry-After"))
	}
}

func TestAServerFaultAtAnOAuth2EndpointIsLoggedAndHidden(t *testing.T) {
	t.Parallel()
	unreachable, err := sqlx.Open("postgres", "host=/nonexistent dbname=none sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unreachable.Close() })
	var log bytes.Buffer
	r := resolvers.New(resolvers.Deps{DB: unreachable, Secret: []byte("secret"), PortalURL: resolverstest.PortalURL,
		Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	creds := resolvers.ClientCredentials{ID: "till_ci_x", Secret: "s", Basic: true}
	_, fail := r.ExchangeOAuth2Token(context.Background(), resolvers.TokenRequest{Client: creds, GrantType: "authorization_code"})
	wantOAuth2Error{status: 500, code: "server_error"}.check(t, fail)
	out := r.OAuth2Authorize(context.Background(), resolvers.AuthorizeRequest{ClientID: "till_ci_x", ResponseType: "code"})
	wantOAuth2Error{status: 500, code: "server_error"}.check(t, out.Error)
	if !strings.Contains(log.String(), `"endpoint":"token"`) || !strings.Contains(log.String(), `"endpoint":"authorize"`) {
		t.Errorf("log = %s, want both faults logged with their endpoint", log.String())
	}
}
