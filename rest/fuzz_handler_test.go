package rest_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"till/rest/fastapi/fastapitest"

	"till/rest"
)

// fuzzWorld is one /v1 stack over one database for a whole fuzz target: an organization
// that may do everything, one of its customers' portal session, and the route table.
type fuzzWorld struct {
	s      *v1
	tokens []string // anonymous, organization, customer
	routes []rest.Route
}

func newFuzzWorld(f *testing.F) *fuzzWorld {
	s := newV1(f)
	o := s.NewOrg(f, "all")
	c := s.NewCustomer(f, o.ID, "fuzz-customer")
	return &fuzzWorld{s: s, tokens: []string{"", o.Token, s.NewCustomerSession(f, o.ID, c.ID)}, routes: rest.Routes()}
}

// answer serves req through the real handler and fails on a server error.
func (w *fuzzWorld) answer(t *testing.T, req *http.Request) {
	t.Helper()
	rec := httptest.NewRecorder()
	w.s.h.ServeHTTP(rec, req)
	if rec.Code >= http.StatusInternalServerError {
		t.Fatalf("%s %s answered %d: %s", req.Method, req.URL, rec.Code, rec.Body)
	}
}

// request builds a request for a route with every path parameter set to segment, the raw
// query and the body as a client sends them.
func fuzzRequest(method, path, segment, rawQuery string, body []byte, contentType, token string) *http.Request {
	target := path
	for {
		open := strings.IndexByte(target, '{')
		end := strings.IndexByte(target, '}')
		if open < 0 || end < open {
			break
		}
		target = target[:open] + url.PathEscape(segment) + target[end+1:]
	}
	req := httptest.NewRequest(method, "http://till.test/", strings.NewReader(string(body)))
	req.URL.Path, req.URL.RawPath = "", ""
	if u, err := url.Parse(target); err == nil {
		req.URL.Path, req.URL.RawPath = u.Path, u.RawPath
	}
	req.URL.RawQuery = strings.NewReplacer("#", "%23", " ", "%20").Replace(rawQuery)
	req.RequestURI = req.URL.RequestURI()
	if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		req.Header.Set("Content-Length", strconv.Itoa(len(body)))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// FuzzV1Routes sends untrusted path segments, query strings and bodies to every /v1 route
// through the real handler and database, as each kind of caller: whatever the input, the
// answer is never a server error (a NUL or a float the database refuses once was).
func FuzzV1Routes(f *testing.F) {
	w := newFuzzWorld(f)
	for i, r := range w.routes {
		body := []byte(`{}`)
		if r.Path == "/v1/events/ingest" {
			body = []byte(`{"events":[{"name":"a","external_customer_id":"x\u0000","metadata":{"k":1e400}}]}`)
		}
		f.Add(uint8(i), uint8(i), "a\x00b", "external_customer_id=%00&metadata[k]=%00&page=1", body, "application/json")
		f.Add(uint8(i), uint8(i+1), fastapitest.UUID4, "sorting=-created_at&limit=1000", []byte(`{"metadata":{"k":"\u0000"}}`), "")
		f.Add(uint8(i), uint8(i+2), "%ff", "customer_id="+fastapitest.UUID4+"&query=%C3", []byte(`{"name":NaN}`), "text/plain")
	}
	f.Fuzz(func(t *testing.T, route, who uint8, segment, rawQuery string, body []byte, contentType string) {
		r := w.routes[int(route)%len(w.routes)]
		w.answer(t, fuzzRequest(r.Method, r.Path, segment, rawQuery, body, contentType, w.tokens[int(who)%len(w.tokens)]))
	})
}

// FuzzOAuth2Forms sends untrusted forms, queries, content types and Basic credentials to
// the OAuth2 endpoints, which decode their own forms: never a server error.
func FuzzOAuth2Forms(f *testing.F) {
	w := newFuzzWorld(f)
	endpoints := []struct{ method, path string }{
		{http.MethodPost, "/v1/oauth2/token"}, {http.MethodPost, "/v1/oauth2/introspect"}, {http.MethodPost, "/v1/oauth2/revoke"},
		{http.MethodGet, "/v1/oauth2/authorize"}, {http.MethodGet, "/v1/oauth2/register/{client_id}"},
		{http.MethodPost, "/v1/oauth2/register"},
	}
	for i := range endpoints {
		f.Add(uint8(i), "grant_type=refresh_token&refresh_token=%00&client_id=a%00", "application/x-www-form-urlencoded", "", "client_id=%00&response_type=code")
		f.Add(uint8(i), "token=x&token_type_hint=%ff", "application/x-www-form-urlencoded", "a%00:b", "redirect_uri=https://x.test/%00")
		f.Add(uint8(i), `{"client_name":"a\u0000","redirect_uris":["https://x.test"]}`, "application/json", "\xff:\x00", "a=%zz")
	}
	f.Fuzz(func(t *testing.T, endpoint uint8, form, contentType, basic, rawQuery string) {
		e := endpoints[int(endpoint)%len(endpoints)]
		req := fuzzRequest(e.method, e.path, form, rawQuery, []byte(form), contentType, "")
		if basic != "" {
			req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(basic)))
		}
		w.answer(t, req)
	})
}
