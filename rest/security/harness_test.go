package security_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/rest"
	"till/storage"
	"till/storage/storagetest"
)

func TestMain(m *testing.M) { os.Exit(storagetest.Main(m)) }

// principal is one credential an attacker (or a legitimate caller) may present, with what
// the suite knows about it independently of the code under test.
type principal struct {
	name  string
	token string
	// invalid marks credentials no route may accept: the middleware answers 401 for them.
	invalid bool
	kind    auth.Kind
	scopes  auth.ScopeSet
	// role is a member session's role.
	role string
	// delegated marks OAuth2 access tokens held by an application.
	delegated bool
	// browserOf, when set, is the user whose browser session (the cookie, with its CSRF
	// token from Till's own origin) authenticates the principal on /graphql and on the /v1
	// routes whose Guard admits browsers; a fresh session for each call, since a call may end
	// it. The rest of /v1 reads no cookie, so there it is anonymous.
	browserOf uuid.UUID
}

// holdsAny reports whether the principal's token carries one of the scopes.
func (p principal) holdsAny(scopes []auth.Scope) bool {
	for _, s := range scopes {
		if p.scopes.Has(s) {
			return true
		}
	}
	return false
}

// world is the server under attack and everyone who calls it.
type world struct {
	*resolverstest.App
	h          http.Handler
	server     *httptest.Server
	routes     []rest.Route
	principals []principal
}

// newWorld wires /graphql and /v1 as till serve does, over a fresh database holding two
// organizations, and creates one credential of every kind. The attacks log no warnings:
// refusing them is the expected outcome.
func newWorld(t *testing.T) *world {
	t.Helper()
	db := storagetest.New(t)
	app := resolverstest.NewApp(t, db, func(d *resolvers.Deps) {
		d.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
		d.Live = resolvers.NewLiveHub(db, d.Logger) // subscriptions are guarded like the rest
	})
	v1, err := rest.New(app.Resolver, auth.Middleware(app.Resolver, app.Secret), app.Deps.Logger)
	if err != nil {
		t.Fatalf("rest.New: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/graphql", app.GraphQL)
	mux.Handle("/", v1)
	w := &world{App: app, h: mux, routes: rest.Table(app.Resolver)}
	w.server = httptest.NewServer(mux) // subscriptions need a real connection
	t.Cleanup(w.server.Close)
	w.principals = w.credentials(t, unusedScope(t, app.Resolver.Schema().Schema(), w.routes))
	return w
}

// expiredToken creates an organization access token that expired an hour ago.
func (w *world) expiredToken(t *testing.T, orgID uuid.UUID, scope string) string {
	t.Helper()
	tok := auth.Generate(auth.PrefixOrganizationAccessToken)
	past := time.Now().Add(-time.Hour)
	if _, err := storage.CreateOrganizationToken(context.Background(), w.DB, orgID, auth.Hash(w.Secret, tok), scope, "", &past); err != nil {
		t.Fatalf("creating organization token: %v", err)
	}
	return tok
}

// credentials creates every principal of the matrix. Organization A owns everything the
// legitimate principals act on; organization B is the other tenant.
func (w *world) credentials(t *testing.T, noScope auth.Scope) []principal {
	t.Helper()
	ctx := context.Background()
	all := auth.NewScopeSet(auth.AllScopes()...)
	allText := all.String()
	orgA, orgB := w.NewOrg(t, allText), w.NewOrg(t, allText)
	a, owner, other := orgA.ID, orgA.Token, orgB.Token
	narrow := w.NewToken(t, a, string(noScope))
	expired := w.expiredToken(t, a, allText)
	revoked := w.NewToken(t, a, allText)
	w.Exec(t, `UPDATE organization_access_tokens SET deleted_at = now() WHERE token = $1`, auth.Hash(w.Secret, revoked))
	badChecksum := owner[:len(owner)-1] + flip(owner[len(owner)-1])

	c := w.NewCustomer(t, a, "")
	// A team, whose owner and billing managers manage its members in the portal.
	w.Exec(t, `UPDATE customers SET type = 'team' WHERE id = $1`, c.ID)
	customerSession := w.NewCustomerSession(t, a, c.ID)
	memberSession := func(role string) string {
		var id uuid.UUID
		w.Get(t, &id, `INSERT INTO members (organization_id, customer_id, email, role) VALUES ($1, $2, $3, $4) RETURNING id`,
			a, c.ID, role+"-"+randomHex(4)+"@example.com", role)
		return w.NewMemberSession(t, a, c.ID, id)
	}

	u := w.NewUser(t, resolverstest.UserSpec{Scope: allText, Orgs: []uuid.UUID{a}, EmailVerified: true})
	user, pat := u.ID, u.Token
	clientID := auth.Generate(auth.PrefixClientID)
	if _, err := storage.CreateOAuth2Client(ctx, w.DB, storage.OAuth2ClientOwner{UserID: &user}, storage.OAuth2ClientWrite{
		ClientID: clientID, ClientName: "App", RedirectURIs: []string{"https://app.example/callback"}, Scope: allText,
		TokenEndpointAuthMethod: "none", GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"},
		DefaultSubType: "user"}); err != nil {
		t.Fatalf("creating OAuth2 client: %v", err)
	}
	oauthToken := func(sub string) string {
		prefix := auth.PrefixOAuthUserAccessToken
		if sub == "organization" {
			prefix = auth.PrefixOAuthOrganizationAccessToken
		}
		tok := auth.Generate(prefix)
		wr := storage.OAuth2TokenWrite{ClientID: clientID, AccessToken: auth.Hash(w.Secret, tok), Scope: allText,
			SubType: sub, ExpiresIn: time.Hour, ConsentedBy: &user}
		if sub == "user" {
			wr.UserID = &user
		} else {
			wr.OrganizationID = &a
		}
		if _, err := storage.CreateOAuth2Token(ctx, w.DB, wr); err != nil {
			t.Fatalf("creating OAuth2 token: %v", err)
		}
		return tok
	}

	return []principal{
		{name: "no credential", kind: auth.KindAnonymous},
		{name: "garbage", token: "not-a-till-token", invalid: true},
		{name: "bad checksum", token: badChecksum, invalid: true},
		{name: "expired token", token: expired, invalid: true},
		{name: "revoked token", token: revoked, invalid: true},
		{name: "organization token", token: owner, kind: auth.KindOrganization, scopes: all},
		{name: "another organization's token", token: other, kind: auth.KindOrganization, scopes: all},
		{name: "token without the scope", token: narrow, kind: auth.KindOrganization, scopes: auth.NewScopeSet(noScope)},
		{name: "customer session", token: customerSession, kind: auth.KindCustomerSession},
		{name: "member session (member)", token: memberSession("member"), kind: auth.KindMemberSession, role: "member"},
		{name: "member session (billing manager)", token: memberSession("billing_manager"), kind: auth.KindMemberSession, role: "billing_manager"},
		{name: "personal access token", token: pat, kind: auth.KindUser, scopes: all},
		{name: "OAuth2 user token", token: oauthToken("user"), kind: auth.KindUser, scopes: all, delegated: true},
		{name: "OAuth2 organization token", token: oauthToken("organization"), kind: auth.KindOrganization, scopes: all, delegated: true},
		{name: "browser session", browserOf: user, kind: auth.KindUser, scopes: all},
	}
}

// signIn makes req carry a new browser session of user as a page of Till's own origin sends
// it: the cookie, the session's CSRF token and the Origin.
func (w *world) signIn(t *testing.T, req *http.Request, user uuid.UUID) {
	t.Helper()
	cookie, csrf := w.NewUserSession(t, user)
	req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: cookie})
	req.Header.Set(auth.CSRFHeader, csrf)
	req.Header.Set("Origin", resolverstest.PortalURL)
}

func flip(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
