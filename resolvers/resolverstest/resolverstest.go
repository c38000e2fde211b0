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
	// Resolver is the dependency root behind the handler.
	Resolver *resolvers.Resolver
	// URL is the /graphql endpoint.
	URL string

	http *http.Client
}

// New starts a server on a fresh database of its own.
func New(tb testing.TB) *Server {
	tb.Helper()
	return NewWithDB(tb, storagetest.New(tb))
}

// NewWithDB starts a server whose resolver uses db, for tests that must observe or shape the
// pool itself (statement counting).
func NewWithDB(tb testing.TB, db *sqlx.DB) *Server {
	tb.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	r := &resolvers.Resolver{
		DB:        db,
		Secret:    secret,
		Logger:    slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
		PortalURL: PortalURL,
		Now:       time.Now,
		Payments:  payment.NewTestProcessor(),
		Customers: expirable.NewLRU[uuid.UUID, *storage.Customer](1000, nil, time.Minute),
	}
	mux := http.NewServeMux()
	h := ratelimit.WithClientIP(ratelimit.ClientIP(nil))(auth.Middleware(r, secret)(r.Handler()))
	mux.Handle("/graphql", h)
	mux.Handle("/graphql/assets/", h)
	ts := httptest.NewServer(mux)
	tb.Cleanup(ts.Close)
	return &Server{DB: db, Secret: secret, Resolver: r, URL: ts.URL + "/graphql", http: ts.Client()}
}

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
	slug := "org-" + randomHex(6)
	o, err := storage.CreateOrganization(context.Background(), s.DB, "Org "+slug, slug)
	if err != nil {
		tb.Fatalf("creating organization: %v", err)
	}
	return Org{ID: o.ID, Slug: slug, Token: s.NewToken(tb, o.ID, scope)}
}

// NewToken creates another organization access token for orgID.
func (s *Server) NewToken(tb testing.TB, orgID uuid.UUID, scope string) string {
	tb.Helper()
	tok := auth.Generate(auth.PrefixOrganizationAccessToken)
	if _, err := storage.CreateOrganizationToken(context.Background(), s.DB, orgID, auth.Hash(s.Secret, tok), scope, "", nil); err != nil {
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
