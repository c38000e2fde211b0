package resolvers_test

import (
	"encoding/base64"
	"errors"
	"html"
	"regexp"

	"github.com/google/uuid"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"

	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"till/resolvers"

	"till/resolvers/resolverstest"
)

// post sends a raw JSON body to /graphql with the token and returns status and body.
func post(t *testing.T, s *resolverstest.Server, token string, body any) (int, string) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

func TestHandlerLimits(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)

	t.Run("a nested query within the limits runs", func(t *testing.T) {
		_, body := post(t, s, org.Token, map[string]any{"query": "{ products { items { benefits { organization { id } } } } }"})
		if !strings.Contains(body, `"data":{"products"`) {
			t.Fatalf("body %s", body)
		}
	})

	t.Run("a body larger than the query cap is refused without running", func(t *testing.T) {
		huge := "{ customers { items { id } } }" + strings.Repeat(" ", 70<<10)
		status, body := post(t, s, org.Token, map[string]any{"query": huge})
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "RequestBodyTooLarge") {
			t.Fatalf("status %d body %.200s", status, body)
		}
	})
}

func TestAutomaticPersistedQueries(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	query := "{ customers { pagination { totalCount } } }"
	sum := sha256.Sum256([]byte(query))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}

	_, body := post(t, s, org.Token, map[string]any{"extensions": ext})
	if !strings.Contains(body, "PersistedQueryNotFound") {
		t.Fatalf("unknown hash answered %s", body)
	}
	_, body = post(t, s, org.Token, map[string]any{"query": query, "extensions": ext})
	if !strings.Contains(body, `"totalCount":0`) {
		t.Fatalf("registering the query answered %s", body)
	}
	_, body = post(t, s, org.Token, map[string]any{"extensions": ext})
	if !strings.Contains(body, `"totalCount":0`) {
		t.Fatalf("the hash alone answered %s", body)
	}
}

func TestGraphiQLForBrowsers(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "graphiql") {
		t.Fatalf("GET /graphql from a browser: %d %.200s", res.StatusCode, body)
	}
	if strings.Contains(string(body), "cdn.jsdelivr.net") {
		t.Error("the GraphiQL page loads files from a CDN; it must work offline")
	}
	assets := regexp.MustCompile(`(?:src|href)="(/graphql/assets/[^"]+)"\s+integrity="(sha256-[^"]+)"`).FindAllStringSubmatch(string(body), -1)
	if len(assets) < 4 {
		t.Fatalf("page references %d embedded assets, want the scripts and styles:\n%s", len(assets), body)
	}
	base := strings.TrimSuffix(s.URL, "/graphql")
	for _, a := range assets {
		res, err := http.Get(base + a[1])
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		sum := sha256.Sum256(b)
		if got := "sha256-" + base64.StdEncoding.EncodeToString(sum[:]); res.StatusCode != http.StatusOK || got != html.UnescapeString(a[2]) {
			t.Errorf("GET %s: status %d, integrity %s, page says %s", a[1], res.StatusCode, got, a[2])
		}
	}
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	schema := resolvers.New(resolvers.Deps{}).Schema().Schema()
	cases := []struct {
		name  string
		max   int
		query string
		ok    bool
	}{
		{"a query as deep as the limit passes", 3, "{ products { items { benefits { id } } } }", true},
		{"a query one level deeper is refused", 2, "{ products { items { benefits { id } } } }", false},
		{"depth counts through fragments", 2, "{ products { ...P } } fragment P on ProductPage { items { benefits { id } } }", false},
		{"depth counts through inline fragments", 2, "{ products { ... on ProductPage { items { benefits { id } } } } }", false},
		{"introspection does not count, so IDEs can load the schema", 2,
			"{ __schema { types { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } } }", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(schema, c.query)
			if errs != nil {
				t.Fatal(errs)
			}
			op := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
			err := resolvers.DepthLimit{Max: c.max}.MutateOperationContext(t.Context(), op)
			if (err == nil) != c.ok {
				t.Fatalf("MutateOperationContext = %v, want ok %v", err, c.ok)
			}
			var te *resolvers.Error
			if err != nil && (!errors.As(err, &te) || te.GraphQLCode() != resolvers.GraphQLCostLimitExceeded) {
				t.Errorf("refusal %v is not a COST_LIMIT_EXCEEDED Till error", err)
			}
		})
	}
}

// A signed-in browser's GraphiQL sends its CSRF token, so what it POSTs passes the check; the
// page of anyone else holds none, and neither is cached.
func TestGraphiQLCarriesASignedInBrowsersCSRFToken(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	u := s.NewUser(t, resolverstest.UserSpec{Scope: "all", Orgs: []uuid.UUID{org.ID}})
	session, csrf := s.NewUserSession(t, u.ID)
	page := func(cookie string) (string, http.Header) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL, nil)
		req.Header.Set("Accept", "text/html")
		if cookie != "" {
			req.Header.Set("Cookie", "till_session="+cookie)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return string(body), res.Header
	}
	signedIn, header := page(session)
	if !strings.Contains(signedIn, csrf) || !strings.Contains(signedIn, "X-CSRF-Token") {
		t.Errorf("the signed-in page does not send the session's CSRF token")
	}
	if header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q, want no-store on a page holding a token", header.Get("Cache-Control"))
	}
	if anonymous, _ := page(""); strings.Contains(anonymous, "X-CSRF-Token") {
		t.Error("an anonymous page carries a CSRF header")
	}
}
