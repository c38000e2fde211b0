// Package resolverstest runs Till's GraphQL API for tests the way production wires it: the
// bearer middleware in front of the real /graphql handler, served over HTTP, on a fresh
// migrated PostgreSQL database per test. Tests talk to it with real bearer tokens whose hashes
// live in that database, so authentication, scopes, tenancy, loaders and the error presenter
// all run exactly as they do in `till serve`.
//
// It is also the one home of the fixtures every layer's tests arrange their worlds with
// (organizations and tokens, users, customers, sessions, saved cards, products, paid orders),
// so that GraphQL and /v1 tests build the same world the same way.
package resolverstest

import (
	"crypto/rand"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// PortalURL is the portal base every test application uses, so tests can predict portal
// links.
const PortalURL = "https://portal.till.test"

// App is the application under test over one test database, with no listener of its own:
// Server serves it as /graphql over HTTP, and the /v1 tests put the rest router in front of
// it. Without a Server, its Do, Query and QueryError run GraphQL in process through the same
// handler chain.
type App struct {
	// DB is the pool the resolver uses; tests may use it to arrange rows directly.
	DB *sqlx.DB
	// Secret keys token hashes, as the server secret does in production.
	Secret []byte
	// Resolver is the application.
	Resolver *resolvers.Resolver
	// Deps is what Resolver was built with, for tests that build a second application on
	// the same database or reach a collaborator (the payment processor).
	Deps resolvers.Deps
	// Clock is the application's clock, which tests may stop at a time of their choosing.
	Clock *Clock
	// GraphQL is the /graphql handler as till serve mounts it: client address, the bearer
	// and browser-session middleware, then the resolver's handler.
	GraphQL http.Handler

	exec *resolvers.Executor // runs the fixtures' operations as an organization
	url  string              // where Do sends operations
	http *http.Client
}

// Option changes what a test application is built with (a webhook sender, a blob store, a
// cost budget), before it is built: resolvers.New takes everything at once.
type Option func(*resolvers.Deps)

// NewApp builds the application over db with the collaborators a test can control: a
// stoppable clock, the test payment processor, a fresh secret.
func NewApp(tb testing.TB, db *sqlx.DB, opts ...Option) *App {
	tb.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	clock := &Clock{}
	a := &App{DB: db, Secret: secret, Clock: clock, Deps: resolvers.Deps{
		DB:        db,
		Secret:    secret,
		Logger:    slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
		PortalURL: PortalURL,
		Clock:     clock.Now,
		Payments:  payment.NewTestProcessor(),
		Customers: expirable.NewLRU[uuid.UUID, *storage.Customer](1000, nil, time.Minute),
	}}
	a.url, a.http = "http://graphql.in.process/graphql", &http.Client{Transport: inProcess{a}}
	a.Rebuild(opts...)
	return a
}

// Rebuild builds the application again over the same database, with opts applied to what it
// was built with, as a server restarted with another configuration would be. Handlers taken
// from the App before keep the previous application; a Server serves the new one.
func (a *App) Rebuild(opts ...Option) {
	for _, o := range opts {
		o(&a.Deps)
	}
	a.Resolver = resolvers.New(a.Deps)
	if tp, ok := a.Deps.Payments.(*payment.TestProcessor); ok {
		tp.EventDelay = 0
		tp.SetEventSink(a.Resolver.ProcessorEventSink(a.DB))
	}
	a.GraphQL = ratelimit.WithClientIP(ratelimit.ClientIP(nil))(auth.Middleware(a.Resolver, a.Secret,
		auth.WithBrowserSessions(a.Resolver.Browser()))(a.Resolver.Handler(resolvers.WithSubscriptions(a.Resolver))))
	a.exec = a.Resolver.Executor()
}

// inProcess answers an App's own requests with its current GraphQL handler, so an App
// without a listener goes through the same middleware a Server does.
type inProcess struct{ a *App }

// RoundTrip implements http.RoundTripper.
func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.a.GraphQL.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// Server is one application served as /graphql over HTTP, on one test database.
type Server struct {
	*App
	// URL is the /graphql endpoint.
	URL string
}

// New starts a server on a fresh database of its own.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	return NewWithDB(tb, storagetest.New(tb), opts...)
}

// NewWithDB starts a server whose resolver uses db, for tests that must observe or shape the
// pool itself (statement counting).
func NewWithDB(tb testing.TB, db *sqlx.DB, opts ...Option) *Server {
	tb.Helper()
	a := NewApp(tb, db, opts...)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.GraphQL.ServeHTTP(w, r) })
	mux := http.NewServeMux()
	mux.Handle("/graphql", h)
	mux.Handle("/graphql/assets/", h)
	ts := httptest.NewServer(mux)
	tb.Cleanup(ts.Close)
	a.url, a.http = ts.URL+"/graphql", ts.Client()
	return &Server{App: a, URL: a.url}
}

// Clock is a test application's clock: the real time until a test sets it.
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
