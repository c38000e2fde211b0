package resolvers_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers"
	"till/storage"
)

func TestTheConsentFormIsAnsweredOnlyByTheSessionThatWasShownIt(t *testing.T) {
	t.Parallel()
	type submission = resolvers.ConsentSubmission
	for _, tt := range []struct {
		name string
		// change alters the submission of a page shown for scope openid to the session
		change func(t *testing.T, f *browserFixture, s *submission) context.Context
		// want is "code", an error the client receives, or the refusal's code shown to the user
		want string
		loc  string // the refused field, for 422s
	}{
		{name: "allows with a code for the client", want: "code"},
		{name: "denies with access_denied for the client", change: func(t *testing.T, f *browserFixture, s *submission) context.Context {
			s.Action = "deny"
			return nil
		}, want: "access_denied"},
		{name: "refuses an anonymous caller", change: func(t *testing.T, _ *browserFixture, _ *submission) context.Context {
			return context.Background()
		}, want: resolvers.CodeUnauthorized},
		{name: "refuses the user's personal access token", change: func(t *testing.T, f *browserFixture, _ *submission) context.Context {
			return auth.WithPrincipal(context.Background(), auth.Principal{Kind: auth.KindUser, UserID: f.user.ID,
				Scopes: auth.NewScopeSet(auth.AllScopes()...), Organizations: []uuid.UUID{f.orgA.ID}})
		}, want: resolvers.CodeNotPermitted},
		{name: "refuses a form without its token", change: func(t *testing.T, _ *browserFixture, s *submission) context.Context {
			s.Token = ""
			return nil
		}, want: resolvers.CodeCSRF},
		{name: "refuses the token of another session of the same user", change: func(t *testing.T, f *browserFixture, _ *submission) context.Context {
			f.sessionID = uuid.New()
			return f.session()
		}, want: resolvers.CodeCSRF},
		{name: "refuses a token shown for other scopes", change: func(t *testing.T, _ *browserFixture, s *submission) context.Context {
			s.Request.Scope = "openid webhooks:read"
			return nil
		}, want: resolvers.CodeCSRF},
		{name: "refuses a token shown for another client", change: func(t *testing.T, f *browserFixture, s *submission) context.Context {
			s.Request.ClientID, _ = endpointClient(t, f.s, "client_secret_post", "openid")
			return nil
		}, want: resolvers.CodeCSRF},
		{name: "refuses a token an hour old", change: func(t *testing.T, f *browserFixture, _ *submission) context.Context {
			f.s.Clock.Set(time.Now().Add(time.Hour + time.Second))
			return nil
		}, want: resolvers.CodeCSRF},
		{name: "refuses a token that is no token", change: func(t *testing.T, _ *browserFixture, s *submission) context.Context {
			s.Token = strings.Repeat("A", 54)
			return nil
		}, want: resolvers.CodeCSRF},
		{name: "refuses a form a page of another site sent", change: func(_ *testing.T, _ *browserFixture, s *submission) context.Context {
			s.CrossSite = true
			return nil
		}, want: resolvers.CodeCSRF},
		{name: "refuses an action other than allow and deny", change: func(t *testing.T, _ *browserFixture, s *submission) context.Context {
			s.Action = "maybe"
			return nil
		}, want: resolvers.CodeValidation, loc: "body action"},
		{name: "refuses two organizations", change: func(t *testing.T, f *browserFixture, s *submission) context.Context {
			s.Organizations = []string{f.orgA.ID.String(), f.orgB.ID.String()}
			return nil
		}, want: resolvers.CodeValidation, loc: "body organizations"},
		{name: "refuses an organization id that is no id", change: func(t *testing.T, _ *browserFixture, s *submission) context.Context {
			s.Organizations = []string{"org-a"}
			return nil
		}, want: resolvers.CodeValidation, loc: "body organizations"},
		{name: "refuses an organization the user is not in as not found", change: func(t *testing.T, f *browserFixture, s *submission) context.Context {
			s.Organizations = []string{uuid.NewString()}
			return nil
		}, want: resolvers.CodeValidation, loc: "body organizations"},
		{name: "takes one organization named twice", change: func(t *testing.T, f *browserFixture, s *submission) context.Context {
			s.Organizations = []string{f.orgA.ID.String(), f.orgA.ID.String()}
			return nil
		}, want: "code"},
		{name: "refuses a form holding text that cannot be stored", change: func(t *testing.T, _ *browserFixture, s *submission) context.Context {
			s.Malformed = true
			return nil
		}, want: "invalid_request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newBrowserFixture(t)
			req := f.request(func(r *resolvers.AuthorizeRequest) { r.Scope = "openid" })
			page := f.s.Resolver.OAuth2Authorize(f.session(), req)
			s := submission{Request: req, Action: "allow", Token: page.Form.Token}
			ctx := f.session()
			if tt.change != nil {
				if c := tt.change(t, f, &s); c != nil {
					ctx = c
				}
			}
			out := f.s.Resolver.SubmitOAuth2Consent(ctx, s)
			got, loc := consentOutcomeName(out)
			if got != tt.want || loc != tt.loc {
				t.Errorf("outcome %s %s, want %s %s: %+v %v", got, loc, tt.want, tt.loc, out, out.Error)
			}
			if codes := f.codes(t); (got == "code") != (codes == 1) {
				t.Errorf("%d codes issued for outcome %s", codes, got)
			}
		})
	}
}

func TestAMemberCannotHandAnApplicationTheOrganization(t *testing.T) {
	t.Parallel()
	f := newBrowserFixture(t)
	req := f.request(func(r *resolvers.AuthorizeRequest) { r.Scope, r.SubType = "openid", "organization" })
	out := f.submit(t, f.session(), req, "allow", f.orgB.ID.String())
	if got, _ := consentOutcomeName(out); got != resolvers.CodeNotPermitted || f.codes(t) != 0 {
		t.Errorf("a member's consent for the organization: %s %v, %d codes", got, out.Error, f.codes(t))
	}
	code := f.allow(t, f.session(), req, f.orgA.ID.String())
	if code.SubType != "organization" || *code.OrganizationID != f.orgA.ID || *code.ConsentedBy != f.user.ID {
		t.Errorf("the owner's consent issued %+v", code)
	}
}

// TestConcurrentConsentsRememberOneOfThem races consents narrowed differently: whatever the
// order, the remembered consent is one the user gave in every part.
func TestConcurrentConsentsRememberOneOfThem(t *testing.T) {
	t.Parallel()
	f := newBrowserFixture(t)
	narrowed := f.request(func(r *resolvers.AuthorizeRequest) { r.Scope = "openid" })
	wide := f.request(func(r *resolvers.AuthorizeRequest) { r.Scope = "email" })
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, orgs := wide, []string(nil)
			if i%2 == 0 {
				req, orgs = narrowed, []string{f.orgA.ID.String()}
			}
			page := f.s.Resolver.OAuth2Authorize(f.session(), withPrompt(req, "consent"))
			out := f.s.Resolver.SubmitOAuth2Consent(f.session(), resolvers.ConsentSubmission{Request: req, Action: "allow",
				Organizations: orgs, Token: page.Form.Token})
			if out.Redirect == "" {
				errs <- fmt.Errorf("consent %d refused: %+v", i, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	g, err := storage.GetOAuth2UserGrant(context.Background(), f.s.DB, f.client, f.user.ID)
	if err != nil || g == nil {
		t.Fatalf("grant = %v, %v", g, err)
	}
	onA := slices.Equal(g.OrganizationIDs, []string{f.orgA.ID.String()})
	if !(onA && g.Scope == "openid") && !(len(g.OrganizationIDs) == 0 && g.Scope == "email") {
		t.Errorf("remembered %q over %v, which no consent gave", g.Scope, g.OrganizationIDs)
	}
	if f.codes(t) != 20 {
		t.Errorf("%d codes issued, want 20", f.codes(t))
	}
}

// consentOutcomeName names a consent outcome: "code", the error the client receives, or the
// code of the refusal shown to the user, with the refused field.
func consentOutcomeName(out resolvers.ConsentOutcome) (name, loc string) {
	switch {
	case out.Redirect != "":
		u, _ := url.Parse(out.Redirect)
		if u.Query().Get("code") != "" {
			return "code", ""
		}
		return u.Query().Get("error"), ""
	case out.OAuth2Error != nil:
		return out.OAuth2Error.Code, ""
	case out.Error != nil && len(out.Error.Errors) > 0:
		return out.Error.Code, strings.TrimSpace(fmt.Sprintln(out.Error.Errors[0].Loc...))
	case out.Error != nil:
		return out.Error.Code, ""
	}
	return "nothing", ""
}

// codes counts the authorization codes issued to the fixture's client.
func (f *browserFixture) codes(t *testing.T) int {
	t.Helper()
	var n int
	f.s.Get(t, &n, `SELECT count(*) FROM oauth2_authorization_codes WHERE client_id = $1`, f.client)
	return n
}
