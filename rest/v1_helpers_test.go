package rest_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"till/rest/fastapi/fastapitest"
	"till/storage"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/resolvers/resolverstest"
	"till/rest"
	"till/rest/resttest"
	"till/storage/storagetest"
)

// portalURL is the portal base of the test application, so tests can predict portal links.
const portalURL = resolverstest.PortalURL

// v1 is the real /v1 handler, wired as cmd/till wires it, in front of a test application
// over a fresh database.
type v1 struct {
	*resolverstest.App
	h http.Handler
}

// newV1 builds the production /v1 stack (bearer middleware, route table, persisted
// operations, resolvers) over a database of this test's own; opts change what the
// application is built with.
func newV1(tb testing.TB, opts ...resolverstest.Option) *v1 {
	tb.Helper()
	return newV1On(tb, storagetest.New(tb), opts...)
}

// newV1On is newV1 over db, for tests that count the statements of the pool.
func newV1On(tb testing.TB, db *sqlx.DB, opts ...resolverstest.Option) *v1 {
	tb.Helper()
	s := &v1{App: resolverstest.NewApp(tb, db, opts...)}
	s.mount(tb)
	return s
}

// rebuild builds the application again over the same database, with opts applied to what
// it was built with, as a server restarted with another configuration would be. Handlers
// mounted before hold the previous one.
func (s *v1) rebuild(tb testing.TB, opts ...resolverstest.Option) {
	tb.Helper()
	s.Rebuild(opts...)
	s.mount(tb)
}

// mount puts the /v1 router in front of the current application.
func (s *v1) mount(tb testing.TB) {
	tb.Helper()
	h, err := rest.New(s.Resolver, auth.Middleware(s.Resolver, s.Secret), s.Deps.Logger)
	if err != nil {
		tb.Fatalf("rest.New: %v", err)
	}
	s.h = h
}

// org is an organization with an organization access token.
type org = resolverstest.Org

// webhookPayload renders an event of typ about object the way the serve loop does, fails the
// test unless the payload matches the contract's webhook schema, and returns the payload's
// type and data.
func (s *v1) webhookPayload(t *testing.T, orgID uuid.UUID, typ, schema string, object uuid.UUID) (string, json.RawMessage) {
	t.Helper()
	docs, err := rest.LoadDocuments(rest.Operations())
	if err != nil {
		t.Fatal(err)
	}
	payload, err := rest.EventRenderer(s.Resolver.Executor(), docs).Render(t.Context(), &storage.DomainEvent{ID: uuid.New(),
		CreatedAt: time.Now(), OrganizationID: orgID, Type: typ, ObjectID: object})
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal([]byte(payload), &generic); err != nil {
		t.Fatalf("payload is not JSON: %v\n%s", err, payload)
	}
	sch, ok := resttest.Contract(t).Components.Schemas[schema]
	if !ok {
		t.Fatalf("no schema %s", schema)
	}
	if err := sch.Value.VisitJSON(generic, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("payload does not match %s: %v\n%s", schema, err, payload)
	}
	var v struct {
		Type string
		Data json.RawMessage
	}
	decodeJSON(t, []byte(payload), &v)
	return v.Type, v.Data
}

// call is one HTTP request to /v1.
type call struct {
	method, target string
	token          string            // bearer token; none when empty
	body           string            // sent with Content-Length as a client would
	header         map[string]string // extra headers; a "" value deletes the header
}

// request builds the call's *http.Request.
func (c call) request() *http.Request {
	method := c.method
	if method == "" {
		method = http.MethodGet
	}
	req := resttest.NewRequest(method, c.target, c.body)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	return req
}

// do sends the call through the real handler, validates the answer against the contract and
// records which route a success reached.
func (s *v1) do(tb testing.TB, c call) *httptest.ResponseRecorder {
	tb.Helper()
	return s.serve(tb, c.request())
}

// serve is do for a hand-built request.
func (s *v1) serve(tb testing.TB, req *http.Request) *httptest.ResponseRecorder {
	tb.Helper()
	rec := resttest.Serve(tb, s.h, req)
	if rec.Code >= 500 {
		tb.Errorf("%s %s answered %d: %s", req.Method, req.URL, rec.Code, rec.Body)
	}
	recordCoverage(req, rec.Code)
	return rec
}

// want is what a test expects of an answer; zero fields are not checked.
type want struct {
	status  int
	error   string            // the "error" key
	detail  string            // a string "detail"
	items   []item            // 422 items, compared on type, loc, msg (and input/ctx when set)
	headers map[string]string // exact header values; "" means the header must be absent
	body    string            // the exact body, compact JSON
	has     []string          // substrings of the body, for fields a case pins
}

// item is the part of a 422 item a test pins.
type item struct {
	Type  string
	Loc   []any
	Msg   string // compared when non-empty
	Input any    // compared when non-nil; use jsonNull for an explicit null
	Ctx   any    // compared when non-nil
}

// jsonNull stands for an expected JSON null input.
type jsonNullType struct{}

var jsonNull = jsonNullType{}

// check compares an answer with w.
func (w want) check(tb testing.TB, rec *httptest.ResponseRecorder) {
	tb.Helper()
	body := rec.Body.Bytes()
	if w.status != 0 && rec.Code != w.status {
		tb.Fatalf("status = %d, want %d; body %s", rec.Code, w.status, body)
	}
	if w.error != "" {
		if got := resttest.ErrorName(body); got != w.error {
			tb.Errorf(`"error" = %q, want %q; body %s`, got, w.error, body)
		}
	}
	if w.detail != "" {
		if got := resttest.Detail(body); got != w.detail {
			tb.Errorf(`"detail" = %q, want %q`, got, w.detail)
		}
	}
	if w.items != nil {
		checkItems(tb, resttest.Items(tb, body), w.items)
	}
	for k, v := range w.headers {
		got, present := rec.Header()[http.CanonicalHeaderKey(k)]
		switch {
		case v == "" && present:
			tb.Errorf("header %s = %q, want it absent", k, got)
		case v != "" && (len(got) != 1 || got[0] != v):
			tb.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	for _, sub := range w.has {
		if !strings.Contains(rec.Body.String(), sub) {
			tb.Errorf("body lacks %s: %s", sub, body)
		}
	}
	if w.body != "" && rec.Body.String() != fastapitest.CompactJSON(tb, w.body) {
		tb.Errorf("body = %s\nwant   %s", body, fastapitest.CompactJSON(tb, w.body))
	}
}

// checkItems compares 422 items on what the want pins.
func checkItems(tb testing.TB, got []resttest.Item, want []item) {
	tb.Helper()
	type view struct {
		Type  string
		Loc   []any
		Msg   string
		Input any
		Ctx   any
	}
	norm := func(raw json.RawMessage) any {
		if len(raw) == 0 {
			return nil
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		if v == nil {
			return jsonNull
		}
		return v
	}
	gotViews := make([]view, len(got))
	for i, g := range got {
		loc := make([]any, len(g.Loc))
		for j, l := range g.Loc {
			if n, isNum := l.(float64); isNum {
				l = int(n)
			}
			loc[j] = l
		}
		gotViews[i] = view{Type: g.Type, Loc: loc, Msg: g.Msg}
		if i < len(want) && want[i].Msg == "" {
			gotViews[i].Msg = "" // the case does not pin it (e.g. the long country enum list)
		}
		if i < len(want) && want[i].Input != nil {
			gotViews[i].Input = norm(g.Input)
		}
		if i < len(want) && want[i].Ctx != nil {
			gotViews[i].Ctx = norm(g.Ctx)
		}
	}
	wantViews := make([]view, len(want))
	for i, w := range want {
		wantViews[i] = view{Type: w.Type, Loc: w.Loc, Msg: w.Msg, Input: w.Input, Ctx: w.Ctx}
	}
	if diff := cmp.Diff(wantViews, gotViews); diff != "" {
		tb.Errorf("422 items (-want +got):\n%s", diff)
	}
}

// Headers every test pins on the auth pipeline's answers.
const (
	challenge             = `Bearer realm="till"`
	invalidTokenChallenge = `Bearer realm="till", error="invalid_token", error_description="The access token provided is expired, revoked, malformed, or invalid for other reasons."`
	invalidTokenBody      = `{"error":"invalid_token","error_description":"The access token provided is expired, revoked, malformed, or invalid for other reasons."}`
	insufficientScopeBody = `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token."}`
	unauthorizedBody      = `{"error":"Unauthorized","detail":"Unauthorized"}`
	notFoundBody          = `{"detail":"Not Found"}`
	methodNotAllowedBody  = `{"detail":"Method Not Allowed"}`
	resourceNotFoundBody  = `{"error":"ResourceNotFound","detail":"Not found"}`
)

// scopeChallenge is the WWW-Authenticate of a 403 insufficient_scope for these scopes.
func scopeChallenge(scopes string) string {
	return `Bearer realm="till", scope="` + scopes + `", error="insufficient_scope", error_description="The request requires higher privileges than provided by the access token."`
}

// unauthorized is the 401 of an anonymous (or downgraded) caller on an authenticated route.
func unauthorized() want {
	return want{status: http.StatusUnauthorized, body: unauthorizedBody, headers: map[string]string{"WWW-Authenticate": challenge}}
}

// invalidToken is the 401 of a bearer token that resolves to nothing.
func invalidToken() want {
	return want{status: http.StatusUnauthorized, body: invalidTokenBody, headers: map[string]string{
		"WWW-Authenticate": invalidTokenChallenge, "Cache-Control": "no-store", "Pragma": "no-cache"}}
}

// insufficientScope is the 403 of a token without any of scopes.
func insufficientScope(scopes string) want {
	return want{status: http.StatusForbidden, body: insufficientScopeBody, headers: map[string]string{
		"WWW-Authenticate": scopeChallenge(scopes), "Cache-Control": "no-store", "Pragma": "no-cache"}}
}

// validation is a 422 RequestValidationError with these items.
func validation(items ...item) want {
	return want{status: http.StatusUnprocessableEntity, error: "RequestValidationError", items: items}
}

// polarValidation is a 422 PolarRequestValidationError with these items.
func polarValidation(items ...item) want {
	return want{status: http.StatusUnprocessableEntity, error: "PolarRequestValidationError", items: items}
}

// decodeJSON decodes a response body.
func decodeJSON(tb testing.TB, body []byte, out any) {
	tb.Helper()
	if err := json.Unmarshal(body, out); err != nil {
		tb.Fatalf("decoding %s: %v", body, err)
	}
}

// keysOf returns the sorted keys of a JSON object.
func keysOf(tb testing.TB, raw json.RawMessage) []string {
	tb.Helper()
	var m map[string]json.RawMessage
	decodeJSON(tb, raw, &m)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// methodPage is a payment-method list body.
type methodPage struct {
	Items []struct {
		ID             uuid.UUID `json:"id"`
		CustomerID     uuid.UUID `json:"customer_id"`
		Type           string    `json:"type"`
		Processor      string    `json:"processor"`
		IsDefault      *bool     `json:"is_default"`
		MethodMetadata *struct {
			Brand    string  `json:"brand"`
			Last4    string  `json:"last4"`
			ExpMonth int     `json:"exp_month"`
			ExpYear  int     `json:"exp_year"`
			Wallet   *string `json:"wallet"`
		} `json:"method_metadata"`
	} `json:"items"`
	Pagination struct {
		TotalCount int `json:"total_count"`
		MaxPage    int `json:"max_page"`
	} `json:"pagination"`
	raw []json.RawMessage
}

// decodeMethods decodes a payment-method list and keeps each item's raw JSON.
func decodeMethods(tb testing.TB, body []byte) methodPage {
	tb.Helper()
	var p methodPage
	decodeJSON(tb, body, &p)
	var raw struct{ Items []json.RawMessage }
	decodeJSON(tb, body, &raw)
	p.raw = raw.Items
	return p
}

// ids lists the page's item ids in order.
func (p methodPage) ids() []uuid.UUID {
	out := make([]uuid.UUID, len(p.Items))
	for i, it := range p.Items {
		out[i] = it.ID
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
