// Package resolverstest runs Till's GraphQL API for tests the way production wires it: the
// bearer middleware in front of the real /graphql handler, served over HTTP, on a fresh
// migrated PostgreSQL database per test. Tests talk to it with real bearer tokens whose hashes
// live in that database, so authentication, scopes, tenancy, loaders and the error presenter
// all run exactly as they do in `till serve`.
package resolverstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/internal/payment"
	"till/internal/ratelimit"
	"till/resolvers"
	"till/storage"
	"till/storage/storagetest"
)

// PortalURL is the portal base every test server uses, so tests can predict portal links.
const PortalURL = "https://portal.till.test"

// Server is one running GraphQL API over one test database.
type Server struct {
	// DB is the pool the resolver uses; tests may use it to arrange rows directly.
	DB *sqlx.DB
	// Secret keys token hashes, as the server secret does in production.
	Secret []byte
	// Resolver is the application behind the handler.
	Resolver *resolvers.Resolver
	// Deps is what Resolver was built with, for tests that build a second application on
	// the same database or reach a collaborator (the payment processor).
	Deps resolvers.Deps
	// Clock is the server's clock, which tests may stop at a time of their choosing.
	Clock *Clock
	// URL is the /graphql endpoint.
	URL string

	http *http.Client
}

// Option changes what a test server's application is built with (a webhook sender, a blob
// store, a cost budget), before it is built: resolvers.New takes everything at once.
type Option func(*resolvers.Deps)

// New starts a server on a fresh database of its own.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	return NewWithDB(tb, storagetest.New(tb), opts...)
}

// NewWithDB starts a server whose resolver uses db, for tests that must observe or shape the
// pool itself (statement counting).
func NewWithDB(tb testing.TB, db *sqlx.DB, opts ...Option) *Server {
	tb.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	clock := &Clock{}
	d := resolvers.Deps{
		DB:        db,
		Secret:    secret,
		Logger:    slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
		PortalURL: PortalURL,
		Clock:     clock.Now,
		Payments:  payment.NewTestProcessor(),
		Customers: expirable.NewLRU[uuid.UUID, *storage.Customer](1000, nil, time.Minute),
	}
	for _, o := range opts {
		o(&d)
	}
	r := resolvers.New(d)
	mux := http.NewServeMux()
	h := ratelimit.WithClientIP(ratelimit.ClientIP(nil))(auth.Middleware(r, secret)(r.Handler()))
	mux.Handle("/graphql", h)
	mux.Handle("/graphql/assets/", h)
	ts := httptest.NewServer(mux)
	tb.Cleanup(ts.Close)
	return &Server{DB: db, Secret: secret, Resolver: r, Deps: d, Clock: clock, URL: ts.URL + "/graphql", http: ts.Client()}
}

// Clock is a test server's clock: the real time until a test sets it.
type Clock struct{ at atomic.Pointer[time.Time] }

// Now is the set time, or the real one.
func (c *Clock) Now() time.Time {
	if t := c.at.Load(); t != nil {
		return *t
	}
	return time.Now()
}

// Set stops the clock at t.
func (c *Clock) Set(t time.Time) { c.at.Store(&t) }

// Reset lets the clock run with the real time again.
func (c *Clock) Reset() { c.at.Store(nil) }

// Org is an organization with an organization access token.
type Org struct {
	ID    uuid.UUID
	Slug  string
	Token string
}

// AllScopes is the scope string of a token that may do everything.
const AllScopes = "all"

// NewOrg creates an organization and an organization access token carrying scope (a space
// or comma separated list, or AllScopes).
func (s *Server) NewOrg(tb testing.TB, scope string) Org {
	tb.Helper()
	return NewOrgIn(tb, s.DB, s.Secret, scope)
}

// NewToken creates another organization access token for orgID.
func (s *Server) NewToken(tb testing.TB, orgID uuid.UUID, scope string) string {
	tb.Helper()
	return NewTokenIn(tb, s.DB, s.Secret, orgID, scope)
}

// NewOrgIn is NewOrg on any test database whose tokens are hashed with secret, for harnesses
// that serve the application otherwise (the /v1 tests).
func NewOrgIn(tb testing.TB, db *sqlx.DB, secret []byte, scope string) Org {
	tb.Helper()
	slug := "org-" + randomHex(6)
	o, err := storage.CreateOrganization(context.Background(), db, "Org "+slug, slug)
	if err != nil {
		tb.Fatalf("creating organization: %v", err)
	}
	return Org{ID: o.ID, Slug: slug, Token: NewTokenIn(tb, db, secret, o.ID, scope)}
}

// NewTokenIn is NewToken on any test database whose tokens are hashed with secret.
func NewTokenIn(tb testing.TB, db *sqlx.DB, secret []byte, orgID uuid.UUID, scope string) string {
	tb.Helper()
	tok := auth.Generate(auth.PrefixOrganizationAccessToken)
	if _, err := storage.CreateOrganizationToken(context.Background(), db, orgID, auth.Hash(secret, tok), scope, "", nil); err != nil {
		tb.Fatalf("creating organization token: %v", err)
	}
	return tok
}

// Exec runs a SQL statement on the server's database, for arranging states the API cannot
// reach (expired sessions, feature flags).
func (s *Server) Exec(tb testing.TB, query string, args ...any) {
	tb.Helper()
	if _, err := s.DB.ExecContext(context.Background(), query, args...); err != nil {
		tb.Fatalf("exec %q: %v", strings.Join(strings.Fields(query), " "), err)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Get runs a single-row SQL query on the server's database into dest, for checking what
// the API stored.
func (s *Server) Get(tb testing.TB, dest any, query string, args ...any) {
	tb.Helper()
	if err := s.DB.GetContext(context.Background(), dest, query, args...); err != nil {
		tb.Fatalf("get %q: %v", strings.Join(strings.Fields(query), " "), err)
	}
}
