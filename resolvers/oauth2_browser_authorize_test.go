package resolvers_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

func TestASignedInBrowserUserConsentsOnceAndIsRememberedWithinIt(t *testing.T) {
	t.Parallel()
	scoped := func(scope string) func(*resolvers.AuthorizeRequest) {
		return func(r *resolvers.AuthorizeRequest) { r.Scope = scope }
	}
	for _, tt := range []struct {
		name  string
		given func(t *testing.T, f *browserFixture) // what happened before the request
		ctx   func(f *browserFixture) context.Context
		req   func(*resolvers.AuthorizeRequest)
		// want is the outcome: "page", "code", "login" or an error sent to the client.
		want  string
		check func(t *testing.T, f *browserFixture, out resolvers.AuthorizeOutcome)
	}{
		{name: "shows the page with the user, the organizations and a form to a user who never consented",
			req: scoped("openid email"), want: "page", check: func(t *testing.T, f *browserFixture, out resolvers.AuthorizeOutcome) {
				c := out.Consent
				sub, _ := c.Sub.(*resolvers.AuthorizeUser)
				if c.SubType != "user" || sub == nil || sub.ID != f.user.ID || sub.Email != f.user.Email ||
					!slices.Equal(orgIDs(c.Organizations), []uuid.UUID{f.orgA.ID, f.orgB.ID}) || c.RequiresSingleOrganization {
					t.Errorf("consent = %+v (sub %+v)", c, sub)
				}
				if out.Form.Token == "" || out.Form.RedirectOrigin != "https://app.example" || out.Form.Email != f.user.Email ||
					!slices.Contains(out.Form.Fields, resolvers.ConsentField{Name: "scope", Value: "openid email"}) {
					t.Errorf("form = %+v", out.Form)
				}
			}},
		{name: "offers only the organizations the session reaches", ctx: func(f *browserFixture) context.Context {
			return f.session(f.orgB.ID)
		}, want: "page", check: func(t *testing.T, f *browserFixture, out resolvers.AuthorizeOutcome) {
			if !slices.Equal(orgIDs(out.Consent.Organizations), []uuid.UUID{f.orgB.ID}) {
				t.Errorf("organizations = %v, want B alone", out.Consent.Organizations)
			}
		}},
		{name: "shows the scopes of a request naming none as the client's narrowed to the session's",
			ctx: func(f *browserFixture) context.Context {
				return f.sessionWith(auth.NewScopeSet(auth.ScopeOpenID, auth.ScopeWebhooksWrite))
			}, want: "page", check: func(t *testing.T, f *browserFixture, out resolvers.AuthorizeOutcome) {
				if got := scopeNames(out.Consent.Scopes); !slices.Equal(got, []string{"openid"}) {
					t.Errorf("scopes = %v, want openid alone", got)
				}
			}},
		{name: "sends a scope the session lacks back to the client as invalid_scope",
			ctx: func(f *browserFixture) context.Context { return f.sessionWith(auth.NewScopeSet(auth.ScopeOpenID)) },
			req: scoped("openid email"), want: "invalid_scope"},
		{name: "sends prompt=none without a remembered consent back with consent_required",
			req: func(r *resolvers.AuthorizeRequest) { r.Prompt = "none" }, want: "consent_required"},
		{name: "asks the user to sign in again for prompt=login, even with a remembered consent", given: allowed("openid", ""),
			req: func(r *resolvers.AuthorizeRequest) { r.Scope, r.Prompt = "openid", "login" }, want: "login"},
		{name: "issues a code at once within a remembered consent", given: allowed("openid email", ""),
			req: scoped("openid"), want: "code", check: codeScope("openid", "")},
		{name: "issues a code for prompt=none within a remembered consent", given: allowed("openid email", ""),
			req: func(r *resolvers.AuthorizeRequest) { r.Scope, r.Prompt = "email", "none" }, want: "code"},
		{name: "shows the page for scopes beyond the remembered ones", given: allowed("openid", ""),
			req: scoped("openid email"), want: "page"},
		{name: "shows the page for prompt=consent within a remembered consent", given: allowed("openid", ""),
			req: func(r *resolvers.AuthorizeRequest) { r.Scope, r.Prompt = "openid", "consent" }, want: "page"},
		{name: "issues a remembered consent no wider than the scopes the session now holds", given: allowed("openid email", ""),
			ctx:  func(f *browserFixture) context.Context { return f.sessionWith(auth.NewScopeSet(auth.ScopeOpenID)) },
			want: "code", check: codeScope("openid", "")},
		{name: "keeps the organization a remembered consent was narrowed to", given: allowed("openid", "A"),
			req: scoped("openid"), want: "code", check: codeScope("openid", "A")},
		{name: "asks again once the user no longer reaches the organization a remembered consent was narrowed to",
			given: allowed("openid", "A"), ctx: func(f *browserFixture) context.Context { return f.session(f.orgB.ID) },
			req: scoped("openid"), want: "page"},
		{name: "skips the page of a first-party client, even for prompt=consent", given: firstParty,
			req: func(r *resolvers.AuthorizeRequest) { r.Scope, r.Prompt = "email", "consent" }, want: "code",
			check: codeScope("email", "")},
		{name: "offers an organization subject only the organizations the user owns or administers",
			req: func(r *resolvers.AuthorizeRequest) { r.SubType = "organization" }, want: "page",
			check: func(t *testing.T, f *browserFixture, out resolvers.AuthorizeOutcome) {
				c := out.Consent
				if c.SubType != "organization" || c.Sub != nil || !c.RequiresSingleOrganization ||
					!slices.Equal(orgIDs(c.Organizations), []uuid.UUID{f.orgA.ID}) {
					t.Errorf("consent = %+v", c)
				}
			}},
		{name: "reuses an organization's remembered consent for its owner", given: allowedForOrganization("openid"),
			req: func(r *resolvers.AuthorizeRequest) { r.SubType, r.Scope = "organization", "openid" }, want: "code",
			check: func(t *testing.T, f *browserFixture, out resolvers.AuthorizeOutcome) {
				c := f.codeOf(t, out.Redirect)
				if c.SubType != "organization" || c.OrganizationID == nil || *c.OrganizationID != f.orgA.ID || c.UserID != nil {
					t.Errorf("code = %+v, want one for organization A", c)
				}
			}},
		{name: "asks again once the owner of a remembered organization consent is demoted to member",
			given: func(t *testing.T, f *browserFixture) {
				allowedForOrganization("openid")(t, f)
				f.s.NewUser(t, resolverstest.UserSpec{Orgs: []uuid.UUID{f.orgA.ID}}) // A keeps an owner
				f.s.Exec(t, `UPDATE user_organizations SET role = 'member' WHERE user_id = $1 AND organization_id = $2`,
					f.user.ID, f.orgA.ID)
			}, req: func(r *resolvers.AuthorizeRequest) { r.SubType, r.Scope, r.Prompt = "organization", "openid", "none" },
			want: "consent_required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newBrowserFixture(t)
			if tt.given != nil {
				tt.given(t, f)
			}
			ctx := f.session()
			if tt.ctx != nil {
				ctx = tt.ctx(f)
			}
			out := f.s.Resolver.OAuth2Authorize(ctx, f.request(tt.req))
			if got := outcomeName(out); got != tt.want {
				t.Fatalf("outcome %s, want %s: %+v", got, tt.want, out)
			}
			if tt.check != nil {
				tt.check(t, f, out)
			}
		})
	}
}

// outcomeName names an outcome as the table does.
func outcomeName(out resolvers.AuthorizeOutcome) string {
	switch {
	case out.Consent != nil && out.Form != nil && out.Redirect == "" && out.Error == nil:
		return "page"
	case out.LoginRequired:
		return "login"
	case out.Redirect != "":
		u, _ := url.Parse(out.Redirect)
		if u.Query().Get("code") != "" {
			return "code"
		}
		return u.Query().Get("error")
	}
	return "something else"
}

// allowed is a consent given before through the page, narrowed to organization "A" or to
// none.
func allowed(scope, org string) func(*testing.T, *browserFixture) {
	return func(t *testing.T, f *browserFixture) {
		var orgs []string
		if org == "A" {
			orgs = []string{f.orgA.ID.String()}
		}
		f.allow(t, f.session(), f.request(func(r *resolvers.AuthorizeRequest) { r.Scope = scope }), orgs...)
	}
}

// allowedForOrganization is a consent given before for organization A as the subject.
func allowedForOrganization(scope string) func(*testing.T, *browserFixture) {
	return func(t *testing.T, f *browserFixture) {
		req := f.request(func(r *resolvers.AuthorizeRequest) { r.Scope, r.SubType = scope, "organization" })
		f.allow(t, f.session(), req, f.orgA.ID.String())
	}
}

func firstParty(t *testing.T, f *browserFixture) {
	f.s.Exec(t, `UPDATE oauth2_clients SET first_party = true WHERE client_id = $1`, f.client)
}

// codeScope checks the code a redirect carries: its scope, and the organization a user
// token is narrowed to ("A" or none).
func codeScope(scope, org string) func(*testing.T, *browserFixture, resolvers.AuthorizeOutcome) {
	return func(t *testing.T, f *browserFixture, out resolvers.AuthorizeOutcome) {
		c := f.codeOf(t, out.Redirect)
		want := []string{}
		if org == "A" {
			want = []string{f.orgA.ID.String()}
		}
		if c.Scope != scope || c.SubType != "user" || c.UserID == nil || *c.UserID != f.user.ID ||
			strings.Join(c.OrganizationIDs, " ") != strings.Join(want, " ") {
			t.Errorf("code = scope %q, %s subject %v narrowed to %v; want scope %q for the user narrowed to %v",
				c.Scope, c.SubType, c.UserID, c.OrganizationIDs, scope, want)
		}
	}
}

func orgIDs(orgs []resolvers.AuthorizeOrganization) []uuid.UUID {
	out := []uuid.UUID{}
	for _, o := range orgs {
		out = append(out, o.ID)
	}
	return out
}
