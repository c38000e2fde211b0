package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/internal/wake"
	"till/storage"
)

// countingAuth counts the lookups that reach the database.
type countingAuth struct {
	next  auth.Resolver
	calls atomic.Int64
}

func (c *countingAuth) ResolveToken(ctx context.Context, kind auth.TokenKind, hash string) (auth.Principal, error) {
	c.calls.Add(1)
	return c.next.ResolveToken(ctx, kind, hash)
}

// TestSessionsAreCachedUntilAChangeIsAnnounced runs serve's credential cache over a real
// listener with a ttl of an hour: a session is looked up once, and each change to what the
// lookup answers shows within moments, which only the change's notification can explain.
func TestSessionsAreCachedUntilAChangeIsAnnounced(t *testing.T) {
	app := newTestApp(t, map[string]string{}, &syncBuffer{})
	ctx := t.Context()
	db := app.db.DB
	store := &countingAuth{next: app.resolver}
	cfg := app.cfg
	cfg.TokenCacheTTL = time.Hour
	listener := wake.New(app.db.dsn, slog.New(slog.DiscardHandler))
	cache := credentialCache(cfg, store, listener)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { listener.Run(runCtx); close(done) }()
	defer func() { stop(); <-done }()
	waitFor(t, "the listener", func() bool { return listener.Listening() })

	org, err := storage.CreateOrganization(ctx, db, "Cache", "cache")
	if err != nil {
		t.Fatal(err)
	}
	email := "buyer@example.com"
	c, err := storage.CreateCustomer(ctx, db, org.ID, storage.CustomerWrite{Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	m, err := storage.EnsureOwnerMember(ctx, db, c)
	if err != nil {
		t.Fatal(err)
	}
	in := time.Now().Add(24 * time.Hour)
	for _, s := range []struct {
		hash   string
		member bool
	}{{"cst-1", false}, {"cst-2", false}, {"cst-3", false}, {"mst-1", true}} {
		if s.member {
			_, err = storage.CreateMemberSession(ctx, db, org.ID, c.ID, m.ID, s.hash, in, nil)
		} else {
			_, err = storage.CreateCustomerSession(ctx, db, org.ID, c.ID, s.hash, in, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	resolve := func(kind auth.TokenKind, hash string) (auth.Principal, error) {
		return cache.ResolveToken(ctx, kind, hash)
	}
	customerName := func(p auth.Principal) string {
		if c, ok := p.Subject.(*storage.Customer); ok && c.Name != nil {
			return *c.Name
		}
		return ""
	}
	exec := func(query string, args ...any) func(t *testing.T) {
		return func(t *testing.T) {
			if _, err := db.Exec(query, args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		kind   auth.TokenKind
		hash   string
		change func(t *testing.T)
		shows  func(p auth.Principal, err error) bool
	}{
		{"the customer renamed", auth.TokenCustomerSession, "cst-1", func(t *testing.T) {
			renamed := "Renamed"
			if _, err := storage.UpdateCustomer(ctx, db, []uuid.UUID{org.ID}, c.ID, storage.CustomerUpdate{Name: storage.Set(&renamed)}); err != nil {
				t.Fatal(err)
			}
		}, func(p auth.Principal, err error) bool { return err == nil && customerName(p) == "Renamed" }},
		{"the member's role changed", auth.TokenMemberSession, "mst-1", exec(`UPDATE members SET role = 'member' WHERE id = $1`, m.ID),
			func(p auth.Principal, err error) bool { return err == nil && p.MemberRole == "member" }},
		{"the session ended", auth.TokenCustomerSession, "cst-2", exec(`UPDATE customer_sessions SET expires_at = now() WHERE token = 'cst-2'`),
			func(_ auth.Principal, err error) bool { return errors.Is(err, auth.ErrInvalidToken) }},
		{"the customer deleted", auth.TokenCustomerSession, "cst-3", func(t *testing.T) {
			if _, err := storage.DeleteCustomer(ctx, db, []uuid.UUID{org.ID}, c.ID); err != nil {
				t.Fatal(err)
			}
		}, func(_ auth.Principal, err error) bool { return errors.Is(err, auth.ErrInvalidToken) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := resolve(tt.kind, tt.hash); err != nil {
				t.Fatal(err)
			}
			before := store.calls.Load()
			p, err := resolve(tt.kind, tt.hash)
			if err != nil || store.calls.Load() != before {
				t.Fatalf("the second lookup reached the database (%v)", err)
			}
			if tt.shows(p, err) {
				t.Fatal("the change shows before it was made")
			}
			tt.change(t)
			waitFor(t, "the change", func() bool { return tt.shows(resolve(tt.kind, tt.hash)) })
		})
	}
	// revokedStops checks that a credential made by create is cached, and refused within
	// moments of revoke, which only the revocation's notification can explain.
	revokedStops := func(kind auth.TokenKind, hash string, create func() error, revoke string) func(t *testing.T) {
		return func(t *testing.T) {
			if err := create(); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := resolve(kind, hash); err != nil {
					t.Fatal(err)
				}
			}
			before := store.calls.Load()
			if _, err := resolve(kind, hash); err != nil || store.calls.Load() != before {
				t.Fatalf("the credential was not cached (%v)", err)
			}
			if _, err := db.Exec(revoke, hash); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the revocation", func() bool {
				_, err := resolve(kind, hash)
				return errors.Is(err, auth.ErrInvalidToken)
			})
		}
	}
	t.Run("an organization token revoked", revokedStops(auth.TokenOrganization, "oat-1", func() error {
		_, err := storage.CreateOrganizationToken(ctx, db, org.ID, "oat-1", "customers:read", "test", nil)
		return err
	}, `UPDATE organization_access_tokens SET deleted_at = now() WHERE token = $1`))
	t.Run("a browser session revoked", revokedStops(auth.TokenUserSession, "us-1", func() error {
		u, err := storage.EnsureVerifiedUser(ctx, db, "signed-in@example.com")
		if err == nil {
			_, err = storage.CreateUserSession(ctx, db, storage.UserSessionWrite{UserID: u.ID, Hash: "us-1", ExpiresAt: in}, 50)
		}
		return err
	}, `UPDATE user_sessions SET deleted_at = now() WHERE token = $1`))
	t.Run("a member removed by another process", func(t *testing.T) {
		var user uuid.UUID
		if err := db.Get(&user, `INSERT INTO users (email) VALUES ('member@example.com') RETURNING id`); err != nil {
			t.Fatal(err)
		}
		exec(`INSERT INTO user_organizations (user_id, organization_id, role) VALUES ($1, $2, 'member')`, user, org.ID)(t)
		exec(`INSERT INTO personal_access_tokens (user_id, token, scope) VALUES ($1, 'pat-1', 'customers:read')`, user)(t)
		waitFor(t, "the membership", func() bool {
			p, err := resolve(auth.TokenPersonal, "pat-1")
			return err == nil && p.Roles[org.ID] == auth.RoleMember
		})
		// Notifications of the earlier cases may still empty the cache once: wait until a
		// lookup is answered from it.
		waitFor(t, "the token cached with its organization", func() bool {
			before := store.calls.Load()
			p, err := resolve(auth.TokenPersonal, "pat-1")
			return err == nil && store.calls.Load() == before && len(p.Organizations) == 1
		})
		exec(`UPDATE user_organizations SET deleted_at = now() WHERE user_id = $1`, user)(t)
		waitFor(t, "the removal", func() bool {
			p, err := resolve(auth.TokenPersonal, "pat-1")
			return err == nil && len(p.Organizations) == 0 && p.Roles[org.ID] == ""
		})
	})
	t.Run("without the listener nothing is kept", func(t *testing.T) {
		if _, err := storage.CreateCustomerSession(ctx, db, org.ID, m.CustomerID, "cst-4", in, nil); err != nil {
			t.Fatal(err)
		}
		stop()
		<-done
		before := store.calls.Load()
		for range 3 {
			_, _ = resolve(auth.TokenCustomerSession, "cst-4")
		}
		if got := store.calls.Load() - before; got != 3 {
			t.Errorf("%d lookups for 3 requests with the listener stopped, want 3", got)
		}
	})
}

// waitFor polls ok for up to 5 seconds, far below the cache's ttl of an hour.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not show within 5s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// silentFeed listens and never notifies, so that only a request's own report of its change
// can empty the cache.
type silentFeed struct{}

func (silentFeed) Listening() bool { return true }

// TestAChangeShowsInTheNextRequestWithoutWaitingForItsNotification changes a customer through
// /v1 and reads the portal through the same server at once: the answer already shows the
// change, though no notification ever reaches the cache.
func TestAChangeShowsInTheNextRequestWithoutWaitingForItsNotification(t *testing.T) {
	app := newTestApp(t, map[string]string{}, &syncBuffer{})
	ctx := t.Context()
	db := app.db.DB
	cache := auth.NewCache(app.resolver, time.Hour, time.Now, silentFeed{})
	h, _, err := newHTTPHandler(app.cfg, app.resolver, cache, app.secret, app.db, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	org, err := storage.CreateOrganization(ctx, db, "Mine", "mine")
	if err != nil {
		t.Fatal(err)
	}
	set, _ := auth.ParseScopes("all")
	orgToken, _, err := createToken(ctx, db, app.secret, org.ID, set, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	email := "mine@example.com"
	c, err := storage.CreateCustomer(ctx, db, org.ID, storage.CustomerWrite{Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	session := auth.Generate(auth.PrefixCustomerSession)
	if _, err := storage.CreateCustomerSession(ctx, db, org.ID, c.ID, auth.Hash(app.secret, session), time.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	do := func(method, path, token, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Length", strconv.Itoa(len(body)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	portal := func() (int, string) {
		// organization { id } keeps the executor on the customer the session's lookup read
		return do(http.MethodPost, "/graphql", session, `{"query":"{ me { customer { name organization { id } } } }"}`)
	}
	for range 2 {
		if code, body := portal(); code != http.StatusOK || !strings.Contains(body, `"name":null`) {
			t.Fatalf("portal before: %d %s", code, body)
		}
	}
	mutate := func(query string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"id": c.ID}})
		if code, out := do(http.MethodPost, "/graphql", orgToken, string(body)); code != http.StatusOK || strings.Contains(out, `"errors"`) {
			t.Fatalf("%s: %d %s", query, code, out)
		}
	}
	mutate(`mutation($id: UUID!) { updateCustomer(input: {id: $id, name: "Renamed"}) { id } }`)
	if code, body := portal(); code != http.StatusOK || !strings.Contains(body, `"name":"Renamed"`) {
		t.Errorf("portal right after the rename: %d %s", code, body)
	}
	mutate(`mutation($id: UUID!) { deleteCustomer(id: $id) { id } }`)
	if code, body := portal(); !strings.Contains(body, "UNAUTHENTICATED") {
		t.Errorf("portal right after the deletion: %d %s", code, body)
	}
}
