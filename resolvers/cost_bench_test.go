package resolvers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"till/resolvers"
)

// BenchmarkDocumentRefusal measures what refusing each attack document costs the server,
// through the real /graphql handler in process ("refusal-ns/op"), and reports it as a
// multiple of answering a trivial accepted query in the same loop ("x-trivial"); ns/op is
// the two together. The documents are the ones that
// took seconds before the document limits: 5,900 `__typename` in a 65 KB POST, 8,850 by
// GET, and a 749 KB query.
func BenchmarkDocumentRefusal(b *testing.B) {
	h := resolvers.New(resolvers.Deps{}).Handler()
	post := func(query string) func() *http.Request {
		body, _ := json.Marshal(map[string]any{"query": query})
		return func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			return r
		}
	}
	get := func(query string) func() *http.Request {
		// Built once: net/http has read and parsed the URL before the handler runs.
		r := httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape(query), nil)
		return func() *http.Request { return r }
	}
	serve := func(b *testing.B, req func() *http.Request) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req())
		body, _ := io.ReadAll(w.Result().Body)
		return string(body)
	}
	trivial := post("{ __typename }")
	attacks := []struct {
		name string
		req  func() *http.Request
		want string
	}{
		{"5900 __typename by POST", post(repeat(5900, "__typename")), "COST_LIMIT_EXCEEDED"},
		{"8850 __typename by GET", get(repeat(8850, "__typename")), "RequestURITooLong"},
		{"749 KB query by POST", post("{" + strings.Repeat(" ", 749<<10) + "__typename }"), "RequestBodyTooLarge"},
		{"1001 aliases by POST", post(repeat(1001, "a%d: __typename")), "COST_LIMIT_EXCEEDED"},
	}
	for _, a := range attacks {
		b.Run(a.name, func(b *testing.B) {
			if got := serve(b, a.req); !strings.Contains(got, a.want) {
				b.Fatalf("answer %.200s, want %s", got, a.want)
			}
			// Refusals and trivial queries alternate, so both meet the same load on the machine.
			var refusing, answering time.Duration
			for b.Loop() {
				start := time.Now()
				serve(b, a.req)
				mid := time.Now()
				serve(b, trivial)
				refusing, answering = refusing+mid.Sub(start), answering+time.Since(mid)
			}
			n := float64(b.N)
			b.ReportMetric(float64(refusing)/n, "refusal-ns/op")
			b.ReportMetric(float64(answering)/n, "trivial-ns/op")
			b.ReportMetric(float64(refusing)/float64(answering), "x-trivial")
		})
	}
}
