package resolvers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/internal/ratelimit"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// rawAnswer is an HTTP answer of /graphql read without assuming it is a success.
type rawAnswer struct {
	status int
	header http.Header
	body   []byte
	errors []gqlError
	// hasData says whether the body has a data entry at all (null included).
	hasData bool
}

// send makes one request to a /graphql URL: body is sent as is (nil for none).
func send(t *testing.T, method, target, token, contentType, accept string, body []byte) rawAnswer {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, target, r)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	a := rawAnswer{status: res.StatusCode, header: res.Header}
	if a.body, err = io.ReadAll(res.Body); err != nil {
		t.Fatal(err)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(a.body, &env); err != nil {
		t.Fatalf("HTTP %d: not a GraphQL response: %.300s", a.status, a.body)
	}
	_, a.hasData = env["data"]
	if raw, ok := env["errors"]; ok {
		if err := json.Unmarshal(raw, &a.errors); err != nil {
			t.Fatalf("errors: %v: %s", err, raw)
		}
	}
	return a
}

// postJSON sends an operation as a JSON POST.
func postJSON(t *testing.T, target, token, accept, query string, variables vars) rawAnswer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": variables})
	if err != nil {
		t.Fatal(err)
	}
	return send(t, http.MethodPost, target, token, "application/json", accept, body)
}

// TestEveryGraphQLErrorCodeIsInTheSet makes every kind of failing request /graphql can get,
// from a refused token to a panicking resolver, and checks that each error carries one code
// of the fixed set (the expected one) and that the requests, together, meet every code.
func TestEveryGraphQLErrorCodeIsInTheSet(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	productsOnly := s.NewToken(t, org.ID, "products:read")
	c := s.NewCustomer(t, org.ID, "")
	session := s.NewCustomerSession(t, org.ID, c.ID)
	ebook := ckProduct(t, s, org.Token, "Ebook", "", ckFixed(2000))
	expired := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{ebook.ID}, "customerEmail": "late@example.com"})
	s.Exec(t, `UPDATE checkouts SET expires_at = now() - interval '1 minute' WHERE id = $1`, expired.ID)

	// A server whose cost budget is spent after one operation.
	budget, err := ratelimit.NewLimiter(ratelimit.Limit{Rate: 150, Interval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	spent := resolverstest.New(t, func(d *resolvers.Deps) { d.CostBudget = budget })
	spender := spent.NewOrg(t, resolverstest.AllScopes)
	spent.Query(t, spender.Token, `{ customers(limit: 100) { items { id } } }`, nil, nil)

	// A server whose customers table is gone, and a handler without a database, so a
	// resolver fails and one panics.
	broken := resolverstest.New(t)
	brokenOrg := broken.NewOrg(t, resolverstest.AllScopes)
	broken.Exec(t, `ALTER TABLE customers RENAME TO customers_gone`)
	bare := httptest.NewServer(resolvers.New(resolvers.Deps{}).Handler())
	t.Cleanup(bare.Close)

	apq := `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + strings.Repeat("ab", 32) + `"}}}`
	cases := []struct {
		name   string
		answer func(t *testing.T) rawAnswer
		code   string
		reason string
	}{
		{"a token that was never issued", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, auth.Generate(auth.PrefixOrganizationAccessToken), "", `{ customers { items { id } } }`, nil)
		}, "UNAUTHENTICATED", "invalid_token"},
		{"no token on an organization field", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, "", "", `{ customers { items { id } } }`, nil)
		}, "UNAUTHENTICATED", "Unauthorized"},
		{"a customer session on an organization field", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, session, "", `{ customers { items { id } } }`, nil)
		}, "FORBIDDEN", "Unauthorized"},
		{"a token without the scope", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, productsOnly, "", `{ customers { items { id } } }`, nil)
		}, "FORBIDDEN", "insufficient_scope"},
		{"an unknown customer", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, org.Token, "", `query($id: UUID!) { customer(id: $id) { id } }`, vars{"id": uuid.New()})
		}, "NOT_FOUND", "ResourceNotFound"},
		{"an unknown persisted query", func(t *testing.T) rawAnswer {
			return send(t, http.MethodPost, s.URL, org.Token, "application/json", "", []byte(apq))
		}, "NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"},
		{"a business rule on the input", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, org.Token, "", `mutation { createCustomer(input: {email: "not-an-email"}) { id } }`, nil)
		}, "BAD_USER_INPUT", "PolarRequestValidationError"},
		{"an argument that does not coerce", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, org.Token, "", `{ customer(id: "not-a-uuid") { id } }`, nil)
		}, "BAD_USER_INPUT", "RequestValidationError"},
		{"a field the schema does not have", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, org.Token, "", `{ nope }`, nil)
		}, "BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"},
		{"a variable that does not coerce", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, org.Token, "", `query($n: Int!) { customers(limit: $n) { items { id } } }`, vars{"n": "ten"})
		}, "BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED"},
		{"a document that does not parse", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, org.Token, "", `{ customers {`, nil)
		}, "BAD_USER_INPUT", "GRAPHQL_PARSE_FAILED"},
		{"a body that is not JSON", func(t *testing.T) rawAnswer {
			return send(t, http.MethodPost, s.URL, org.Token, "application/json", "", []byte(`{"query":`))
		}, "BAD_USER_INPUT", "BadRequest"},
		{"a body that is not declared JSON", func(t *testing.T) rawAnswer {
			return send(t, http.MethodPost, s.URL, org.Token, "text/plain", "", []byte(`{"query":"{ __typename }"}`))
		}, "BAD_USER_INPUT", "UnsupportedMediaType"},
		{"a mutation over GET", func(t *testing.T) rawAnswer {
			return send(t, http.MethodGet, s.URL+"?query="+url.QueryEscape(`mutation { __typename }`), org.Token, "", "", nil)
		}, "BAD_USER_INPUT", "MethodNotAllowed"},
		{"a checkout that expired", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, "", "", ckConfirm, vars{"in": vars{"clientSecret": expired.ClientSecret, "paymentToken": "tok_visa"}})
		}, "CONFLICT", "ExpiredCheckoutError"},
		{"an operation over the spent cost budget", func(t *testing.T) rawAnswer {
			return postJSON(t, spent.URL, spender.Token, "", `{ customers(limit: 100) { items { id } } }`, nil)
		}, "RATE_LIMITED", ""},
		{"a document over the token limit", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, org.Token, "", "{ "+strings.Repeat("__typename ", 5000)+"}", nil)
		}, "COST_LIMIT_EXCEEDED", ""},
		{"a body over the size cap", func(t *testing.T) rawAnswer {
			return postJSON(t, s.URL, org.Token, "", "{ __typename }"+strings.Repeat(" ", 70<<10), nil)
		}, "COST_LIMIT_EXCEEDED", "RequestBodyTooLarge"},
		{"a URL over the size cap", func(t *testing.T) rawAnswer {
			return send(t, http.MethodGet, s.URL+"?query="+url.QueryEscape("{ __typename }"+strings.Repeat(" ", 70<<10)), org.Token, "", "", nil)
		}, "COST_LIMIT_EXCEEDED", "RequestURITooLong"},
		{"a resolver whose table is gone", func(t *testing.T) rawAnswer {
			return postJSON(t, broken.URL, brokenOrg.Token, "", `{ customers { items { id } } }`, nil)
		}, "INTERNAL", "InternalServerError"},
		{"a resolver that panics", func(t *testing.T) rawAnswer {
			return postJSON(t, bare.URL, "", "", `{ checkoutByClientSecret(clientSecret: "x") { id } }`, nil)
		}, "INTERNAL", "InternalServerError"},
	}
	seen := map[resolvers.GraphQLCode]bool{}
	for _, tc := range cases {
		t.Run(tc.name+" is "+tc.code, func(t *testing.T) {
			a := tc.answer(t)
			if len(a.errors) == 0 {
				t.Fatalf("HTTP %d without errors: %.300s", a.status, a.body)
			}
			for _, e := range a.errors {
				if !slices.Contains(resolvers.GraphQLCodes, resolvers.GraphQLCode(e.Extensions.Code)) {
					t.Errorf("code %q is not one of %v: %.300s", e.Extensions.Code, resolvers.GraphQLCodes, a.body)
				}
				seen[resolvers.GraphQLCode(e.Extensions.Code)] = true
			}
			if tc.code != "" {
				if got := a.errors[0].Extensions; got.Code != tc.code || got.Reason != tc.reason {
					t.Errorf("error %s (%s), want %s (%s): %.300s", got.Code, got.Reason, tc.code, tc.reason, a.body)
				}
			}
		})
	}
	for _, code := range resolvers.GraphQLCodes {
		if !seen[code] {
			t.Errorf("no request met %s; add one that does", code)
		}
	}
}

// TestGraphQLOverHTTPStatuses pins the status and media type of each kind of answer, as the
// GraphQL-over-HTTP spec gives them for application/json and
// application/graphql-response+json.
func TestGraphQLOverHTTPStatuses(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	const (
		asJSON     = "application/json"
		asResponse = "application/graphql-response+json"
	)
	get := func(query string) func(t *testing.T, accept string) rawAnswer {
		return func(t *testing.T, accept string) rawAnswer {
			return send(t, http.MethodGet, s.URL+"?query="+url.QueryEscape(query), org.Token, "", accept, nil)
		}
	}
	post := func(token, query string, variables vars) func(t *testing.T, accept string) rawAnswer {
		return func(t *testing.T, accept string) rawAnswer {
			return postJSON(t, s.URL, token, accept, query, variables)
		}
	}
	raw := func(contentType, body string) func(t *testing.T, accept string) rawAnswer {
		return func(t *testing.T, accept string) rawAnswer {
			return send(t, http.MethodPost, s.URL, org.Token, contentType, accept, []byte(body))
		}
	}
	cases := []struct {
		name string
		do   func(t *testing.T, accept string) rawAnswer
		// the statuses with application/json and with application/graphql-response+json
		json, response int
		data           bool
	}{
		{"a successful query", post(org.Token, `{ customers { items { id } } }`, nil), 200, 200, true},
		{"a field error beside data", post(org.Token, `query($id: UUID!) { customer(id: $id) { id } }`, vars{"id": uuid.New()}), 200, 200, true},
		{"a field refused to an anonymous caller", post("", `{ customers { items { id } } }`, nil), 200, 200, true},
		{"a document that fails validation", post(org.Token, `{ nope }`, nil), 200, 400, false},
		{"a document that does not parse", post(org.Token, `{ customers {`, nil), 200, 400, false},
		{"a variable that does not coerce", post(org.Token, `query($n: Int!) { customers(limit: $n) { items { id } } }`, vars{"n": "x"}), 200, 400, false},
		{"a document over the cost limits", post(org.Token, "{ "+strings.Repeat("__typename ", 5000)+"}", nil), 200, 400, false},
		{"a body that is not JSON", raw("application/json", `{"query":`), 400, 400, false},
		{"variables that are not an object", raw("application/json", `{"query":"{ __typename }","variables":[7]}`), 400, 400, false},
		{"a body without a query", raw("application/json", `{"qeury":"{ __typename }"}`), 400, 400, false},
		{"a body of another media type", raw("text/plain", `{"query":"{ __typename }"}`), 415, 415, false},
		{"a query over GET", get(`{ __typename }`), 200, 200, true},
		{"a mutation over GET", get(`mutation { __typename }`), 405, 405, false},
		{"a bad token", post("till_oat_nope", `{ __typename }`, nil), 401, 401, false},
		{"a body over the size cap", post(org.Token, "{ __typename }"+strings.Repeat(" ", 70<<10), nil), 413, 413, false},
	}
	for _, tc := range cases {
		for _, media := range []string{asJSON, asResponse} {
			want := tc.json
			if media == asResponse {
				want = tc.response
			}
			t.Run(tc.name+" answers "+media+" with "+http.StatusText(want), func(t *testing.T) {
				a := tc.do(t, media)
				if a.status != want || a.hasData != tc.data {
					t.Errorf("HTTP %d, data present %v; want %d, %v: %.300s", a.status, a.hasData, want, tc.data, a.body)
				}
				if got := a.header.Get("Content-Type"); got != media+"; charset=utf-8" {
					t.Errorf("Content-Type = %q, want %s", got, media)
				}
			})
		}
	}

	t.Run("a request error with graphql-response+json says who may not", func(t *testing.T) {
		budget, err := ratelimit.NewLimiter(ratelimit.Limit{Rate: 1, Interval: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		spent := resolverstest.New(t, func(d *resolvers.Deps) { d.CostBudget = budget })
		o := spent.NewOrg(t, resolverstest.AllScopes)
		a := postJSON(t, spent.URL, o.Token, asResponse, `{ customers { items { id } } }`, nil)
		if a.status != http.StatusTooManyRequests || a.hasData || a.header.Get("Retry-After") == "" {
			t.Errorf("over the budget: HTTP %d, Retry-After %q: %s", a.status, a.header.Get("Retry-After"), a.body)
		}
		if a = postJSON(t, spent.URL, o.Token, asJSON, `{ customers { items { id } } }`, nil); a.status != http.StatusOK {
			t.Errorf("over the budget as application/json: HTTP %d", a.status)
		}
	})
	t.Run("a bad token keeps its challenge", func(t *testing.T) {
		a := postJSON(t, s.URL, "till_oat_nope", asResponse, `{ __typename }`, nil)
		if h := a.header.Get("WWW-Authenticate"); h != auth.InvalidTokenChallenge {
			t.Errorf("WWW-Authenticate = %q", h)
		}
	})
	t.Run("a variable's failing path is in extensions.fields", func(t *testing.T) {
		a := postJSON(t, s.URL, org.Token, "", `mutation($in: CustomerCreateInput!) { createCustomer(input: $in) { id } }`,
			vars{"in": vars{"email": "a@example.com", "nope": 1}})
		if len(a.errors) != 1 {
			t.Fatalf("errors: %s", a.body)
		}
		e := a.errors[0]
		if e.Extensions.Code != "BAD_USER_INPUT" || len(e.Extensions.Fields) != 1 ||
			!slices.Equal(e.Extensions.Fields[0].Loc, []any{"in", "nope"}) || len(e.Path) != 0 {
			t.Errorf("error = %+v, want BAD_USER_INPUT naming in.nope and no response path", e)
		}
	})
	t.Run("Accept picks the most preferred media type", func(t *testing.T) {
		for accept, want := range map[string]string{
			"":    asJSON,
			"*/*": asJSON,
			"application/graphql-response+json, application/json":       asResponse,
			"application/json, application/graphql-response+json":       asJSON,
			"application/json;q=0.9, application/graphql-response+json": asResponse,
			"application/graphql-response+json;q=0.5, */*":              asJSON,
			"application/graphql-response+json;q=0, application/json":   asJSON,
		} {
			if got := postJSON(t, s.URL, org.Token, accept, `{ __typename }`, nil).header.Get("Content-Type"); got != want+"; charset=utf-8" {
				t.Errorf("Accept %q: Content-Type %q, want %s", accept, got, want)
			}
		}
	})
}

// TestARefusedFieldLeavesTheRestOfTheResponse: a member session without a billing role is
// refused me.orders, and only that field is null.
func TestARefusedFieldLeavesTheRestOfTheResponse(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, org.ID)
	c := s.NewCustomer(t, org.ID, "")
	var memberID uuid.UUID
	s.Get(t, &memberID, `INSERT INTO members (organization_id, customer_id, email, role) VALUES ($1, $2, 'm@example.com', 'member') RETURNING id`,
		org.ID, c.ID)
	var created struct{ CreateCustomerSession struct{ Token string } }
	s.Query(t, org.Token, `mutation($c: UUID!, $m: UUID!) { createCustomerSession(input: {customerId: $c, memberId: $m}) { token } }`,
		vars{"c": c.ID, "m": memberID}, &created)

	res := s.Do(t, created.CreateCustomerSession.Token, `{ me { customer { id } orders { items { id } } } }`, nil)
	if res.Status != http.StatusOK || len(res.Errors) != 1 {
		t.Fatalf("HTTP %d: %s", res.Status, res.Body)
	}
	wantError(t, res.Errors[0], "FORBIDDEN", "NotPermitted")
	var data struct {
		Me *struct {
			Customer *struct{ ID uuid.UUID }
			Orders   *struct{ Items []any }
		}
	}
	if err := json.Unmarshal(res.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Me == nil || data.Me.Customer == nil || data.Me.Customer.ID != c.ID || data.Me.Orders != nil {
		t.Errorf("data = %s, want me.customer and a null me.orders", res.Data)
	}
}

// TestEveryErrorCodeHasAGraphQLCode keeps the two tables in step: an error code with a /v1
// status has a GraphQL code of the fixed set too, and the other way round.
func TestEveryErrorCodeHasAGraphQLCode(t *testing.T) {
	t.Parallel()
	for code := range resolvers.StatusByCode {
		if _, ok := resolvers.GraphQLCodeByCode[code]; !ok {
			t.Errorf("%s has a status but no GraphQL code", code)
		}
	}
	for code, g := range resolvers.GraphQLCodeByCode {
		if _, ok := resolvers.StatusByCode[code]; !ok {
			t.Errorf("%s has a GraphQL code but no status", code)
		}
		if !slices.Contains(resolvers.GraphQLCodes, g) {
			t.Errorf("%s maps to %s, which is not one of the GraphQL codes", code, g)
		}
	}
	if got := (&resolvers.Error{Code: "SomethingNew"}).GraphQLCode(); got != resolvers.GraphQLBadUserInput {
		t.Errorf("an unknown code is %s, want BAD_USER_INPUT like its status 400", got)
	}
}
