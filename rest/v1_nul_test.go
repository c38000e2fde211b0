package rest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"till/rest/fastapi/fastapitest"

	"till/rest"
	"till/rest/fastapi"
)

// nulProbe is a string PostgreSQL text cannot hold: it has a NUL inside.
const nulProbe = "a\x00b"

// probeTarget is route's path with parameter probed set to value and every other path
// parameter to a well-formed value, and the query holding only probed (when it is a query
// parameter), so that no other parameter's 422 hides what the probed one does.
func probeTarget(route rest.Route, probed fastapi.Param, value string) string {
	target := route.Path
	for _, p := range route.Params {
		if p.In != fastapi.InPath {
			continue
		}
		v := "x"
		if _, isUUID := p.Schema.(fastapi.UUID4); isUUID {
			v = fastapitest.UUID4
		}
		if p.Name == probed.Name && probed.In == fastapi.InPath {
			v = value
		}
		target = strings.Replace(target, "{"+p.Name+"}", url.PathEscape(v), 1)
	}
	if probed.In != fastapi.InQuery {
		return target
	}
	q := url.Values{}
	switch probed.Shape {
	case fastapi.ShapeDeepObject:
		q.Add(probed.Name+"["+value+"]", "v")
		q.Add(probed.Name+"[key]", value)
	default:
		q.Add(probed.Name, value)
	}
	return target + "?" + q.Encode()
}

// TestHostileStringsNeverReachTheDatabase sends a NUL (which PostgreSQL text refuses) and
// bytes that are not UTF-8 in every path and query parameter of every /v1 route, as every
// kind of caller: a server error would mean the value reached SQL.
func TestHostileStringsNeverReachTheDatabase(t *testing.T) {
	s := newV1(t)
	o := s.NewOrg(t, "all")
	c := s.NewCustomer(t, o.ID, "cust-1")
	session := s.NewCustomerSession(t, o.ID, c.ID)
	probes := []struct{ name, path, query string }{
		{"a NUL", nulProbe, nulProbe},
		{"bytes that are not UTF-8", "a\xffb\xc3", "a\xffb\xc3"},
		{"a NUL in a UUID-shaped value", "00000000-0000-4000-8000-00000000000\x00", "00000000-0000-4000-8000-00000000000\x00"},
	}
	principals := []struct{ name, token string }{{"anonymous", ""}, {"an organization", o.Token}, {"a customer", session}}
	for _, route := range rest.Routes() {
		for _, param := range route.Params {
			for _, probe := range probes {
				for _, p := range principals {
					t.Run(route.Method+" "+route.Path+" with "+probe.name+" in "+param.Name+" as "+p.name, func(t *testing.T) {
						body := ""
						if route.Body != nil {
							body = "{}"
						}
						rec := s.do(t, call{method: route.Method, target: probeTarget(route, param, probe.path), token: p.token, body: body})
						if rec.Code >= 500 {
							t.Fatalf("answered %d: %s", rec.Code, rec.Body)
						}
					})
				}
			}
		}
	}
	oauth := []string{"/v1/oauth2/token", "/v1/oauth2/introspect", "/v1/oauth2/revoke"}
	for _, path := range oauth {
		for _, probe := range probes {
			t.Run("POST "+path+" with "+probe.name+" in the form", func(t *testing.T) {
				form := url.Values{"client_id": {probe.query}, "client_secret": {probe.query}, "token": {probe.query},
					"grant_type": {"refresh_token"}, "refresh_token": {probe.query}, "token_type_hint": {probe.query}}
				req := formRequest(path, form.Encode())
				rec := s.serve(t, req)
				if rec.Code >= 500 {
					t.Fatalf("answered %d: %s", rec.Code, rec.Body)
				}
			})
		}
	}
}

// TestHostileStringsInOAuth2RequestsNeverReachTheDatabase covers the hand-written OAuth2
// endpoints, which read their own forms, queries, credentials and paths.
func TestHostileStringsInOAuth2RequestsNeverReachTheDatabase(t *testing.T) {
	s := newV1(t)
	for _, hostile := range []string{"a\x00b", "a\xffb"} {
		cases := []struct {
			name string
			req  *http.Request
			want int
		}{
			{"the authorization query", call{target: "/v1/oauth2/authorize?" + url.Values{"client_id": {hostile},
				"response_type": {"code"}, "redirect_uri": {"https://example.com/cb"}, "scope": {"openid"}}.Encode()}.request(),
				http.StatusBadRequest},
			{"the client configuration path", call{target: "/v1/oauth2/register/" + url.PathEscape(hostile)}.request(), 0},
			{"the client configuration path of a deletion", call{method: http.MethodDelete, target: "/v1/oauth2/register/" + url.PathEscape(hostile)}.request(), 0},
			{"Basic credentials", func() *http.Request {
				req := formRequest("/v1/oauth2/token", "grant_type=refresh_token&refresh_token=x")
				req.SetBasicAuth(url.QueryEscape(hostile), "secret")
				return req
			}(), http.StatusBadRequest},
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%q in %s is refused", hostile, c.name), func(t *testing.T) {
				rec := s.serve(t, c.req)
				if rec.Code >= 500 || c.want != 0 && rec.Code != c.want {
					t.Fatalf("answered %d, want %d: %s", rec.Code, c.want, rec.Body)
				}
			})
		}
	}
}

// formRequest is a POST of a urlencoded form to path.
func formRequest(path, body string) *http.Request {
	req := call{method: http.MethodPost, target: path, body: body}.request()
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

// TestHostileValuesAreRefusedAtTheirLoc pins the 422 items: a NUL anywhere is Polar's
// value_error at the parameter's loc, a float JSON cannot hold is pydantic's finite_number
// at the value's loc.
func TestHostileValuesAreRefusedAtTheirLoc(t *testing.T) {
	t.Parallel()
	f := newEventsFixture(t)
	reader := f.s.NewToken(t, f.org.ID, "orders:read customers:read")
	nul := func(loc ...any) item {
		return item{Type: "value_error", Loc: loc, Msg: "Value error, This value contains invalid characters", Ctx: map[string]any{"error": map[string]any{}}}
	}
	metadataMembers := func(i int, model, value string) []item {
		loc := []any{"body", "events", i, model, "metadata", "k"}
		return []item{
			{Type: "string_type", Loc: append(loc[:6:6], "constrained-str")},
			{Type: "finite_number", Loc: append(loc[:6:6], "int"), Msg: "Input should be a finite number"},
			{Type: "finite_number", Loc: append(loc[:6:6], "float"), Msg: "Input should be a finite number"},
			{Type: "bool_type", Loc: append(loc[:6:6], "bool")},
		}
	}
	tests := []struct {
		name   string
		method string
		target string
		body   string
		want   want
	}{
		{"a NUL in a string path parameter", "", "/v1/customers/external/a%00b/payment-methods", "",
			validation(nul("path", "external_id"))},
		{"a NUL in a filter", "", "/v1/orders/?external_customer_id=a%00b", "",
			validation(nul("query", "external_customer_id"))},
		{"a NUL in a repeated filter", "", "/v1/orders/?external_customer_id=a&external_customer_id=%00", "",
			validation(nul("query", "external_customer_id"))},
		{"a NUL in a metadata filter's value", "", "/v1/orders/?metadata[k]=a%00", "",
			validation(nul("query", "metadata", "k"))},
		{"a NUL in a metadata filter's key", "", "/v1/orders/?metadata[k%00]=a", "",
			validation(nul("query", "metadata", "k\x00"))},
	}
	for _, number := range []string{"1e400", "-1e400", "NaN", "Infinity", "-Infinity"} {
		body := f.batch("n", 3, 1, `{"name":"api_call","external_customer_id":"x","metadata":{"k":`+number+`}}`)
		items := append(metadataMembers(1, "EventCreateCustomer", number),
			item{Type: "missing", Loc: []any{"body", "events", 1, "EventCreateCustomer", "customer_id"}})
		items = append(items, metadataMembers(1, "EventCreateExternalCustomer", number)...)
		tests = append(tests, struct {
			name   string
			method string
			target string
			body   string
			want   want
		}{"event metadata of " + number, http.MethodPost, "/v1/events/ingest", body, validation(items...)})
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			token := reader
			if tt.method == http.MethodPost {
				token = f.org.Token
			}
			tt.want.check(t, f.s.do(t, call{method: tt.method, target: tt.target, token: token, body: tt.body}))
		})
	}
	t.Run("a path parameter that is not UTF-8 is read as Python decodes it", func(t *testing.T) {
		rec := f.s.do(t, call{target: "/v1/customers/external/a%FFb/payment-methods", token: reader})
		want{status: http.StatusNotFound}.check(t, rec)
	})
	if n := f.stored(t); n != 0 {
		t.Errorf("%d events stored, want none", n)
	}
}
