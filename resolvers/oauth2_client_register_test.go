package resolvers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// registrant is a new user acting through a token with scope.
func registrant(tb testing.TB, s *resolverstest.Server, scope auth.Scope) context.Context {
	tb.Helper()
	id := uuid.New()
	if _, err := s.DB.Exec(`INSERT INTO users (id, email, email_verified) VALUES ($1, $2, true)`, id, id.String()+"@example.com"); err != nil {
		tb.Fatal(err)
	}
	return auth.WithPrincipal(context.Background(), auth.Principal{Kind: auth.KindUser, UserID: id, Scopes: auth.NewScopeSet(scope)})
}

// clientDocument is a valid registration document in GraphQL field names, with overrides.
func clientDocument(overrides map[string]any) map[string]any {
	doc := map[string]any{"redirectUris": []any{endpointRedirectURI}, "clientName": "App"}
	for k, v := range overrides {
		doc[k] = v
	}
	return doc
}

func TestClientRegistrationOutcomes(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	writer := registrant(t, s, auth.ScopeOrganizationsWrite)
	reader := registrant(t, s, auth.ScopeOrganizationsRead)
	created := s.Resolver.RegisterOAuth2Client(writer, resolvers.OAuth2ClientRequest{Document: clientDocument(nil)})
	if created.Status != http.StatusCreated || created.Client == nil {
		t.Fatalf("registration = %+v", created)
	}
	c := created.Client
	if c.RegistrationClientURI != resolverstest.PortalURL+"/v1/oauth2/register/"+c.ClientID || c.ClientSecret == nil ||
		c.ClientSecretExpiresAt == nil || *c.ClientSecretExpiresAt != 0 || c.ClientIDIssuedAt == 0 {
		t.Errorf("client information = %+v", c)
	}
	mine := c.ClientID
	register := func(ctx context.Context, req resolvers.OAuth2ClientRequest) resolvers.OAuth2ClientOutcome {
		return s.Resolver.RegisterOAuth2Client(ctx, req)
	}
	read := func(ctx context.Context, req resolvers.OAuth2ClientRequest) resolvers.OAuth2ClientOutcome {
		return s.Resolver.RegisteredOAuth2Client(ctx, req)
	}
	replace := func(ctx context.Context, req resolvers.OAuth2ClientRequest) resolvers.OAuth2ClientOutcome {
		return s.Resolver.ReplaceOAuth2Client(ctx, req)
	}
	unknown := wantOAuth2Error{status: 401, code: "invalid_client",
		header: http.Header{"Www-Authenticate": {`Basic error="invalid_client", error_description=""`}}}
	for _, tt := range []struct {
		name  string
		call  func(context.Context, resolvers.OAuth2ClientRequest) resolvers.OAuth2ClientOutcome
		ctx   context.Context
		req   resolvers.OAuth2ClientRequest
		check func(*testing.T, resolvers.OAuth2ClientOutcome)
	}{
		{"an anonymous caller is unauthorized", register, context.Background(), resolvers.OAuth2ClientRequest{Document: clientDocument(nil)},
			wantClientError(resolvers.CodeUnauthorized, nil)},
		{"the caller is checked before a malformed body", register, context.Background(), resolvers.OAuth2ClientRequest{MalformedBody: true},
			wantClientError(resolvers.CodeUnauthorized, nil)},
		{"a reader may not register", register, reader, resolvers.OAuth2ClientRequest{Document: clientDocument(nil)},
			wantClientError(resolvers.CodeInsufficientScope, nil)},
		{"a malformed body is answered once the caller may register", register, writer, resolvers.OAuth2ClientRequest{MalformedBody: true},
			func(t *testing.T, out resolvers.OAuth2ClientOutcome) {
				if !out.MalformedBody || out.Error != nil || out.OAuth2Error != nil || out.Client != nil {
					t.Errorf("outcome = %+v", out)
				}
			}},
		{"a scope alone at fault is invalid_client_metadata", register, writer,
			resolvers.OAuth2ClientRequest{Document: clientDocument(map[string]any{"scope": "nope"})},
			func(t *testing.T, out resolvers.OAuth2ClientOutcome) {
				wantOAuth2Error{status: 400, code: "invalid_client_metadata", description: "Invalid claim 'scope'"}.check(t, out.OAuth2Error)
			}},
		{"with other field errors the scope error is dropped", register, writer,
			resolvers.OAuth2ClientRequest{Document: clientDocument(map[string]any{"scope": "nope", "redirectUris": []any{"ftp://x"}})},
			wantClientError(resolvers.CodeRequestValidation, []any{"input", "redirectUris", 0})},
		{"a reader reads its own client", read, writer, resolvers.OAuth2ClientRequest{ClientID: mine},
			func(t *testing.T, out resolvers.OAuth2ClientOutcome) {
				if out.Status != http.StatusOK || out.Client == nil || out.Client.ClientID != mine || out.Client.ClientSecret != nil {
					t.Errorf("outcome = %+v", out)
				}
			}},
		{"someone else's client is invalid_client", read, reader, resolvers.OAuth2ClientRequest{ClientID: mine},
			func(t *testing.T, out resolvers.OAuth2ClientOutcome) { unknown.check(t, out.OAuth2Error) }},
		{"an update naming another client is invalid_request", replace, writer,
			resolvers.OAuth2ClientRequest{ClientID: mine, Document: clientDocument(map[string]any{"clientId": "other"})},
			func(t *testing.T, out resolvers.OAuth2ClientOutcome) {
				wantOAuth2Error{status: 400, code: "invalid_request"}.check(t, out.OAuth2Error)
			}},
		{"an update of an unknown client is invalid_client", replace, writer,
			resolvers.OAuth2ClientRequest{ClientID: "till_ci_unknown", Document: clientDocument(map[string]any{"clientId": "till_ci_unknown"})},
			func(t *testing.T, out resolvers.OAuth2ClientOutcome) { unknown.check(t, out.OAuth2Error) }},
		{"an update replaces the metadata", replace, writer,
			resolvers.OAuth2ClientRequest{ClientID: mine, Document: clientDocument(map[string]any{"clientId": mine, "clientName": "Renamed"})},
			func(t *testing.T, out resolvers.OAuth2ClientOutcome) {
				if out.Status != http.StatusOK || out.Client == nil || out.Client.ClientName != "Renamed" {
					t.Errorf("outcome = %+v", out)
				}
			}},
		{"a deletion answers no client", s.Resolver.DeregisterOAuth2Client, writer, resolvers.OAuth2ClientRequest{ClientID: mine},
			func(t *testing.T, out resolvers.OAuth2ClientOutcome) {
				if out.Status != http.StatusNoContent || out.Client != nil || out.Error != nil || out.OAuth2Error != nil {
					t.Errorf("outcome = %+v", out)
				}
			}},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, tt.call(tt.ctx, tt.req)) })
	}
}

// wantClientError checks a Polar answer of the registration endpoints: its code and, for
// field errors, the loc of the only one.
func wantClientError(code string, loc []any) func(*testing.T, resolvers.OAuth2ClientOutcome) {
	return func(t *testing.T, out resolvers.OAuth2ClientOutcome) {
		t.Helper()
		if out.Error == nil || out.OAuth2Error != nil || out.Client != nil || out.Error.Code != code {
			t.Fatalf("outcome = %+v, want error %s", out, code)
		}
		if loc == nil {
			return
		}
		if len(out.Error.Errors) != 1 || strings.Join(locNames(out.Error.Errors[0].Loc), ".") != strings.Join(locNames(loc), ".") {
			t.Errorf("field errors = %+v, want one at %v", out.Error.Errors, loc)
		}
	}
}

func locNames(loc []any) []string {
	out := make([]string, len(loc))
	for i, seg := range loc {
		switch v := seg.(type) {
		case string:
			out[i] = v
		default:
			out[i] = "#"
		}
	}
	return out
}
