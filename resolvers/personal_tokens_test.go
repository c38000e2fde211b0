package resolvers_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers/resolverstest"
)

const (
	createPATDoc = `mutation($input: PersonalAccessTokenCreateInput!) { createPersonalAccessToken(input: $input) {
		token personalAccessToken { id comment scopes expiresAt lastUsedAt } } }`
	listPATDoc   = `{ personalAccessTokens { id comment scopes expiresAt lastUsedAt } }`
	revokePATDoc = `mutation($id: UUID!) { revokePersonalAccessToken(id: $id) { id } }`
)

// pat is a personal access token as the tests read it.
type pat struct {
	ID         uuid.UUID
	Comment    string
	Scopes     []string
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
}

func createPAT(t *testing.T, s *resolverstest.Server, token string, input vars) (string, pat) {
	t.Helper()
	var out struct {
		CreatePersonalAccessToken struct {
			Token               string
			PersonalAccessToken pat
		}
	}
	s.Query(t, token, createPATDoc, vars{"input": input}, &out)
	return out.CreatePersonalAccessToken.Token, out.CreatePersonalAccessToken.PersonalAccessToken
}

func listPATs(t *testing.T, s *resolverstest.Server, token string) map[uuid.UUID]pat {
	t.Helper()
	var out struct{ PersonalAccessTokens []pat }
	s.Query(t, token, listPATDoc, nil, &out)
	m := map[uuid.UUID]pat{}
	for _, p := range out.PersonalAccessTokens {
		m[p.ID] = p
	}
	return m
}

func TestPersonalAccessTokensRefuseBadInputAndOtherCallers(t *testing.T) {
	s := resolverstest.New(t)
	org := s.NewOrg(t, "customers:read")
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "customers:read customers:write", Orgs: []uuid.UUID{org.ID}})
	other := s.NewUser(t, resolverstest.UserSpec{Scope: "customers:read"})
	_, mine := createPAT(t, s, user.Token, vars{"comment": "ci", "scopes": []string{"customers:read"}})

	cases := []struct {
		name, token, doc string
		vars             vars
		code, reason     string
	}{
		{"a scope the caller lacks", user.Token, createPATDoc,
			vars{"input": vars{"comment": "x", "scopes": []string{"orders:read"}}}, "BAD_USER_INPUT", "PolarRequestValidationError"},
		{"an unknown scope", user.Token, createPATDoc,
			vars{"input": vars{"comment": "x", "scopes": []string{"root"}}}, "BAD_USER_INPUT", "PolarRequestValidationError"},
		{"no scope", user.Token, createPATDoc,
			vars{"input": vars{"comment": "x", "scopes": []string{}}}, "BAD_USER_INPUT", "PolarRequestValidationError"},
		{"a lifetime under a minute", user.Token, createPATDoc,
			vars{"input": vars{"comment": "x", "scopes": []string{"customers:read"}, "expiresIn": 59}}, "BAD_USER_INPUT", "PolarRequestValidationError"},
		{"an organization token lists", org.Token, listPATDoc, nil, "FORBIDDEN", "Unauthorized"},
		{"an organization token creates", org.Token, createPATDoc,
			vars{"input": vars{"comment": "x", "scopes": []string{"customers:read"}}}, "FORBIDDEN", "Unauthorized"},
		{"anyone else revokes", other.Token, revokePATDoc, vars{"id": mine.ID}, "NOT_FOUND", "ResourceNotFound"},
		{"no token", "", listPATDoc, nil, "UNAUTHENTICATED", "Unauthorized"},
	}
	row := `SELECT to_jsonb(t)::text FROM personal_access_tokens t WHERE id = $1`
	var before, after string
	s.Get(t, &before, row, mine.ID)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			coverTenancy(c.doc)
			got := s.QueryError(t, c.token, c.doc, c.vars)
			if got.Extensions.Code != c.code || got.Extensions.Reason != c.reason {
				t.Errorf("error %s (%s) %q, want %s (%s)", got.Extensions.Code, got.Extensions.Reason, got.Message, c.code, c.reason)
			}
		})
	}
	if s.Get(t, &after, row, mine.ID); after != before {
		t.Errorf("the refused calls changed the token:\n before %s\n after  %s", before, after)
	}
	if _, seen := listPATs(t, s, other.Token)[mine.ID]; seen {
		t.Error("another user lists the token")
	}
}

func TestPersonalAccessTokensLifecycle(t *testing.T) {
	s := resolverstest.New(t)
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "customers:read customers:write"})
	token, created := createPAT(t, s, user.Token,
		vars{"comment": "deploy", "scopes": []string{"customers:write", "customers:read"}, "expiresIn": 3600})
	if created.Comment != "deploy" || len(created.Scopes) != 2 || created.ExpiresAt == nil ||
		time.Until(*created.ExpiresAt) < 59*time.Minute || created.LastUsedAt != nil {
		t.Errorf("created %+v", created)
	}
	if auth.Classify(token) != auth.TokenPersonal || !auth.ChecksumValid(token) {
		t.Fatalf("token %q is not a personal access token", token)
	}
	var stored int
	s.Get(t, &stored, `SELECT count(*) FROM personal_access_tokens WHERE token = $1`, token)
	if stored != 0 {
		t.Error("the token is stored in clear")
	}

	lastUse := func() *time.Time { return listPATs(t, s, user.Token)[created.ID].LastUsedAt }
	s.Query(t, token, listPATDoc, nil, nil)
	first := lastUse()
	if first == nil {
		t.Fatal("using the token recorded no last use")
	}
	steps := []struct {
		name    string
		age     string // how long ago the last use is set to have been
		changes bool
	}{
		{"a use within the minute writes nothing", "30 seconds", false},
		{"a use after the minute is recorded", "2 minutes", true},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			s.Exec(t, `UPDATE personal_access_tokens SET last_used_at = now() - $2::interval WHERE id = $1`, created.ID, st.age)
			before := lastUse()
			s.Query(t, token, listPATDoc, nil, nil)
			if after := lastUse(); after.Equal(*before) == st.changes {
				t.Errorf("last use went from %s to %s", before, after)
			}
		})
	}

	s.Exec(t, `UPDATE personal_access_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, created.ID)
	if res := s.Do(t, token, listPATDoc, nil); res.Status != http.StatusUnauthorized {
		t.Errorf("an expired token: HTTP %d %s", res.Status, res.Body)
	}
	if _, listed := listPATs(t, s, user.Token)[created.ID]; !listed {
		t.Error("an expired token is no longer listed for its owner")
	}
	s.Query(t, user.Token, revokePATDoc, vars{"id": created.ID}, nil)
	if _, listed := listPATs(t, s, user.Token)[created.ID]; listed {
		t.Error("a revoked token is still listed")
	}
	wantError(t, s.QueryError(t, user.Token, revokePATDoc, vars{"id": created.ID}), "NOT_FOUND", "ResourceNotFound")
}

// TestARevokedTokenIsRefusedOnceTheRevocationAnswers authenticates with a token from many
// goroutines through a token cache that keeps principals for an hour and hears no
// notifications, while the token's owner revokes it: no request that starts after the
// revocation has answered (and so committed) may get through.
func TestARevokedTokenIsRefusedOnceTheRevocationAnswers(t *testing.T) {
	s := resolverstest.New(t)
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "customers:read"})
	token, created := createPAT(t, s, user.Token, vars{"comment": "raced", "scopes": []string{"customers:read"}})
	cache := auth.NewCache(s.Resolver, time.Hour, time.Now, nil)
	srv := httptest.NewServer(auth.Middleware(cache, s.Secret)(s.Resolver.Handler()))
	defer srv.Close()
	post := func(tok, doc string, v vars) *resolverstest.Response {
		res, err := resolverstest.Post(t.Context(), srv.Client(), srv.URL, tok, doc, v)
		if err != nil {
			t.Error(err)
			return &resolverstest.Response{}
		}
		return res
	}

	var (
		revoked    atomic.Pointer[time.Time] // when the revocation answered
		admitted   atomic.Int64              // requests let through before it
		leaked     atomic.Int64              // requests started after it and let through
		wg         sync.WaitGroup
		stop       = make(chan struct{})
		warmedOnce sync.Once
		warmed     = make(chan struct{})
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := revoked.Load() != nil
				res := post(token, `{ personalAccessTokens { id } }`, nil)
				if res.Status == http.StatusOK {
					if after {
						leaked.Add(1)
					} else {
						admitted.Add(1)
						warmedOnce.Do(func() { close(warmed) })
					}
				}
			}
		}()
	}
	<-warmed
	time.Sleep(20 * time.Millisecond)
	if res := post(user.Token, revokePATDoc, vars{"id": created.ID}); res.Status != http.StatusOK || len(res.Errors) > 0 {
		t.Fatalf("revoking: HTTP %d %s", res.Status, res.Body)
	}
	now := time.Now()
	revoked.Store(&now)
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	if admitted.Load() == 0 {
		t.Error("the token never authenticated before its revocation")
	}
	if n := leaked.Load(); n > 0 {
		t.Errorf("%d requests that started after the revocation answered were let through", n)
	}
}
