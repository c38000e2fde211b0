package security_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/internal/payment"
	"till/resolvers"
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
	db         *sqlx.DB
	secret     []byte
	h          http.Handler
	schema     *resolvers.Resolver
	routes     []rest.Route
	principals []principal
}

// newWorld wires /graphql and /v1 as till serve does, over a fresh database holding two
// organizations, and creates one credential of every kind.
func newWorld(t *testing.T) *world {
	t.Helper()
	db := storagetest.New(t)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	r := resolvers.New(resolvers.Deps{DB: db, Secret: secret, Logger: logger, PortalURL: "https://portal.till.test",
		Payments: payment.NewTestProcessor()})
	authn := auth.Middleware(r, secret)
	v1, err := rest.New(r, authn, logger)
	if err != nil {
		t.Fatalf("rest.New: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/graphql", authn(r.Handler()))
	mux.Handle("/", v1)
	w := &world{db: db, secret: secret, h: mux, schema: r, routes: rest.Table(r)}
	w.principals = w.credentials(t, unusedScope(t, r.Schema().Schema(), w.routes))
	return w
}

func (w *world) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := w.db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("exec %q: %v", strings.Join(strings.Fields(query), " "), err)
	}
}

func (w *world) org(t *testing.T) uuid.UUID {
	t.Helper()
	slug := "org-" + randomHex(6)
	o, err := storage.CreateOrganization(context.Background(), w.db, "Org "+slug, slug)
	if err != nil {
		t.Fatalf("creating organization: %v", err)
	}
	return o.ID
}

// orgToken creates an organization access token; expired ones expired an hour ago.
func (w *world) orgToken(t *testing.T, orgID uuid.UUID, scope string, expired bool) (string, uuid.UUID) {
	t.Helper()
	tok := auth.Generate(auth.PrefixOrganizationAccessToken)
	var expires *time.Time
	if expired {
		past := time.Now().Add(-time.Hour)
		expires = &past
	}
	row, err := storage.CreateOrganizationToken(context.Background(), w.db, orgID, auth.Hash(w.secret, tok), scope, "", expires)
	if err != nil {
		t.Fatalf("creating organization token: %v", err)
	}
	return tok, row.ID
}

// credentials creates every principal of the matrix. Organization A owns everything the
// legitimate principals act on; organization B is the other tenant.
func (w *world) credentials(t *testing.T, noScope auth.Scope) []principal {
	t.Helper()
	ctx := context.Background()
	a, b := w.org(t), w.org(t)
	all := auth.NewScopeSet(auth.AllScopes()...)
	allText := all.String()
	owner, _ := w.orgToken(t, a, allText, false)
	other, _ := w.orgToken(t, b, allText, false)
	narrow, _ := w.orgToken(t, a, string(noScope), false)
	expired, _ := w.orgToken(t, a, allText, true)
	revoked, revokedID := w.orgToken(t, a, allText, false)
	w.exec(t, `UPDATE organization_access_tokens SET deleted_at = now() WHERE id = $1`, revokedID)
	badChecksum := owner[:len(owner)-1] + flip(owner[len(owner)-1])

	c, err := storage.CreateCustomer(ctx, w.db, a, storage.CustomerWrite{Email: ptr("buyer-" + randomHex(4) + "@example.com")})
	if err != nil {
		t.Fatalf("creating customer: %v", err)
	}
	customerSession := auth.Generate(auth.PrefixCustomerSession)
	if _, err := storage.CreateCustomerSession(ctx, w.db, a, c.ID, auth.Hash(w.secret, customerSession), time.Now().Add(time.Hour), nil); err != nil {
		t.Fatalf("creating customer session: %v", err)
	}
	memberSession := func(role string) string {
		id := uuid.New()
		w.exec(t, `INSERT INTO members (id, organization_id, customer_id, email, role) VALUES ($1, $2, $3, $4, $5)`,
			id, a, c.ID, role+"-"+randomHex(4)+"@example.com", role)
		tok := auth.Generate(auth.PrefixMemberSession)
		if _, err := storage.CreateMemberSession(ctx, w.db, a, c.ID, id, auth.Hash(w.secret, tok), time.Now().Add(time.Hour), nil); err != nil {
			t.Fatalf("creating member session: %v", err)
		}
		return tok
	}

	user := uuid.New()
	w.exec(t, `INSERT INTO users (id, email, email_verified) VALUES ($1, $2, true)`, user, "u-"+randomHex(4)+"@example.com")
	w.exec(t, `INSERT INTO user_organizations (user_id, organization_id) VALUES ($1, $2)`, user, a)
	pat := auth.Generate(auth.PrefixPersonalAccessToken)
	w.exec(t, `INSERT INTO personal_access_tokens (user_id, token, scope) VALUES ($1, $2, $3)`, user, auth.Hash(w.secret, pat), allText)
	clientID := auth.Generate(auth.PrefixClientID)
	if _, err := storage.CreateOAuth2Client(ctx, w.db, storage.OAuth2ClientOwner{UserID: &user}, storage.OAuth2ClientWrite{
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
		wr := storage.OAuth2TokenWrite{ClientID: clientID, AccessToken: auth.Hash(w.secret, tok), Scope: allText,
			SubType: sub, ExpiresIn: time.Hour, ConsentedBy: &user}
		if sub == "user" {
			wr.UserID = &user
		} else {
			wr.OrganizationID = &a
		}
		if _, err := storage.CreateOAuth2Token(ctx, w.db, wr); err != nil {
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
	}
}

func flip(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}

func ptr[T any](v T) *T { return &v }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
