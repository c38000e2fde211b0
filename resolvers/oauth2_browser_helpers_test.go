package resolvers_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// browserFixture is a user signed in with a browser session, owner of organization A and a
// plain member of organization B, and a confidential client that may ask for openid, email
// and webhooks:read.
type browserFixture struct {
	s          *resolverstest.Server
	user       resolverstest.User
	orgA, orgB resolverstest.Org
	client     string
	sessionID  uuid.UUID
}

func newBrowserFixture(t *testing.T) *browserFixture {
	t.Helper()
	s := resolverstest.New(t)
	f := &browserFixture{s: s, orgA: s.NewOrg(t, ""), orgB: s.NewOrg(t, ""), sessionID: uuid.New()}
	f.user = s.NewUser(t, resolverstest.UserSpec{Orgs: []uuid.UUID{f.orgA.ID}, EmailVerified: true})
	s.Exec(t, `INSERT INTO user_organizations (user_id, organization_id, role) VALUES ($1, $2, 'member')`, f.user.ID, f.orgB.ID)
	f.client, _ = endpointClient(t, s, "client_secret_post", "openid email webhooks:read")
	return f
}

// session is the user's browser session holding every scope and reaching orgs (both
// organizations when none are named), as the session middleware resolves it.
func (f *browserFixture) session(orgs ...uuid.UUID) context.Context {
	return f.sessionWith(auth.NewScopeSet(auth.AllScopes()...), orgs...)
}

// sessionWith is session holding only scopes.
func (f *browserFixture) sessionWith(scopes auth.ScopeSet, orgs ...uuid.UUID) context.Context {
	if len(orgs) == 0 {
		orgs = []uuid.UUID{f.orgA.ID, f.orgB.ID}
	}
	return auth.WithPrincipal(context.Background(), auth.Principal{Kind: auth.KindUser, TokenID: f.sessionID,
		UserID: f.user.ID, Scopes: scopes, Organizations: orgs, BrowserSession: true})
}

// request is an authorization request of the fixture's client with state xyz, changed by
// change.
func (f *browserFixture) request(change func(*resolvers.AuthorizeRequest)) resolvers.AuthorizeRequest {
	req := resolvers.AuthorizeRequest{ResponseType: "code", ClientID: f.client, State: "xyz"}
	if change != nil {
		change(&req)
	}
	return req
}

// submit answers the consent page of req as the page would post it: with the token the page
// was shown with, action and the organizations chosen.
func (f *browserFixture) submit(t *testing.T, ctx context.Context, req resolvers.AuthorizeRequest, action string, orgs ...string) resolvers.ConsentOutcome {
	t.Helper()
	page := f.s.Resolver.OAuth2Authorize(ctx, withPrompt(req, "consent"))
	if page.Form == nil {
		t.Fatalf("no consent page for %+v: %+v", req, page)
	}
	return f.s.Resolver.SubmitOAuth2Consent(ctx, resolvers.ConsentSubmission{Request: req, Action: action,
		Organizations: orgs, Token: page.Form.Token})
}

// allow consents to req and returns the code's row, failing the test unless a code came.
func (f *browserFixture) allow(t *testing.T, ctx context.Context, req resolvers.AuthorizeRequest, orgs ...string) *storage.OAuth2AuthorizationCode {
	t.Helper()
	out := f.submit(t, ctx, req, "allow", orgs...)
	if out.Redirect == "" {
		t.Fatalf("consent refused: %+v %v", out, out.Error)
	}
	return f.codeOf(t, out.Redirect)
}

// codeOf reads the code a redirect carries; nil when it carries none.
func (f *browserFixture) codeOf(t *testing.T, redirect string) *storage.OAuth2AuthorizationCode {
	t.Helper()
	u, err := url.Parse(redirect)
	if err != nil || u.Query().Get("code") == "" {
		return nil
	}
	var c storage.OAuth2AuthorizationCode
	f.s.Get(t, &c, `SELECT id, code, client_id, sub_type, user_id, organization_id, organization_ids, redirect_uri,
		scope, nonce, code_challenge, code_challenge_method, auth_time, expires_at, used_at, consented_by
		FROM oauth2_authorization_codes WHERE code = $1`, auth.Hash(f.s.Secret, u.Query().Get("code")))
	return &c
}

func withPrompt(req resolvers.AuthorizeRequest, prompt string) resolvers.AuthorizeRequest {
	req.Prompt = prompt
	return req
}
