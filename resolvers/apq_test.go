package resolvers_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"till/resolvers/resolverstest"
)

// apq is the persistedQuery extension naming query by its hash.
func apq(query string) map[string]any {
	sum := sha256.Sum256([]byte(query))
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
}

// getGraphQL sends a GET with the given query string parameters.
func getGraphQL(t *testing.T, s *resolverstest.Server, token string, params map[string]any) string {
	t.Helper()
	q := url.Values{}
	for k, v := range params {
		if s, ok := v.(string); ok {
			q.Set(k, s)
			continue
		}
		b, _ := json.Marshal(v)
		q.Set(k, string(b))
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+"?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return string(out)
}

func TestAutomaticPersistedQueriesMeetTheFrontendsNeeds(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)

	t.Run("a GET sends the hash alone after a GET registered the query", func(t *testing.T) {
		query := "{ customers { pagination { maxPage } } }"
		if body := getGraphQL(t, s, org.Token, map[string]any{"extensions": apq(query)}); !strings.Contains(body, "PersistedQueryNotFound") {
			t.Fatalf("unknown hash answered %s", body)
		}
		if body := getGraphQL(t, s, org.Token, map[string]any{"query": query, "extensions": apq(query)}); !strings.Contains(body, `"maxPage"`) {
			t.Fatalf("registering answered %s", body)
		}
		if body := getGraphQL(t, s, org.Token, map[string]any{"extensions": apq(query)}); !strings.Contains(body, `"maxPage"`) {
			t.Fatalf("the hash alone answered %s", body)
		}
	})

	t.Run("a query sent under another query's hash is refused and not kept", func(t *testing.T) {
		asked, sent := "{ customers { items { id } } }", "{ __typename }"
		_, body := post(t, s, org.Token, map[string]any{"query": sent, "extensions": apq(asked)})
		if !strings.Contains(body, "provided APQ hash does not match query") || strings.Contains(body, `"data":{`) {
			t.Fatalf("a mismatched hash answered %s", body)
		}
		if _, body = post(t, s, org.Token, map[string]any{"extensions": apq(asked)}); !strings.Contains(body, "PersistedQueryNotFound") {
			t.Fatalf("the mismatched query was kept: %s", body)
		}
	})

	t.Run("many large distinct queries evict the oldest instead of growing the cache", func(t *testing.T) {
		first := "{ __typename }"
		if _, body := post(t, s, org.Token, map[string]any{"query": first, "extensions": apq(first)}); !strings.Contains(body, "__typename") {
			t.Fatalf("registering answered %s", body)
		}
		// 200 queries of 60 KiB are 12 MiB, more than the cache holds; a cache bounded only
		// by its count (a thousand entries) would keep them all, and the first.
		padding := strings.Repeat("x", 60<<10)
		for i := range 200 {
			q := fmt.Sprintf("{ __typename } # %d %s", i, padding)
			if status, body := post(t, s, org.Token, map[string]any{"query": q, "extensions": apq(q)}); status >= 500 {
				t.Fatalf("query %d: %d %.200s", i, status, body)
			}
		}
		if _, body := post(t, s, org.Token, map[string]any{"extensions": apq(first)}); !strings.Contains(body, "PersistedQueryNotFound") {
			t.Fatalf("the first query is still held after 12 MiB of others: %s", body)
		}
	})
}
