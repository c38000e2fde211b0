package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"till/rest/fastapi/fastapitest"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/resolvers"
	"till/rest"
)

// tillError is the response of an operation that failed with te, as the resolvers'
// presenter renders it.
func tillError(te *resolvers.Error) *graphql.Response {
	e := resolvers.ErrorPresenter(slog.New(slog.DiscardHandler))(context.Background(), te)
	return &graphql.Response{Errors: gqlerror.List{e}, Data: json.RawMessage(`null`)}
}

func TestGraphQLErrorsBecomePolarEnvelopes(t *testing.T) {
	paymentMethods := request(http.MethodGet, "/v1/customers/"+fastapitest.UUID4+"/payment-methods", "")
	tests := []struct {
		name    string
		req     *http.Request
		resp    *graphql.Response
		status  int
		body    string
		headers map[string]string
	}{
		{"a missing resource is 404 with its detail", paymentMethods,
			tillError(resolvers.NotFound("Not found")),
			http.StatusNotFound, `{"error":"ResourceNotFound","detail":"Not found"}`, nil},
		{"a refusal keeps its detail", paymentMethods,
			tillError(resolvers.NotPermitted("You don't have permission to manage sales")),
			http.StatusForbidden, `{"error":"NotPermitted","detail":"You don't have permission to manage sales"}`, nil},
		{"a domain error keeps its own name", paymentMethods,
			tillError(&resolvers.Error{Code: resolvers.CodeInvoiceDoesNotExist, Detail: "No invoice <yet> & none pending"}),
			http.StatusNotFound, `{"error":"InvoiceDoesNotExist","detail":"No invoice <yet> & none pending"}`, nil},
		{"a code the status table does not know is a 400, never a server fault", paymentMethods,
			tillError(&resolvers.Error{Code: "SomethingNew", Detail: "resolver message"}),
			http.StatusBadRequest, `{"error":"SomethingNew","detail":"resolver message"}`, nil},
		{"Unauthorized challenges the client", paymentMethods,
			tillError(resolvers.Unauthorized()),
			http.StatusUnauthorized, `{"error":"Unauthorized","detail":"Unauthorized"}`,
			map[string]string{"WWW-Authenticate": `Bearer realm="till"`}},
		{"a missing scope is an OAuth 403 listing the scopes", paymentMethods,
			tillError(resolvers.InsufficientScope([]string{"customers:read", "customers:write"})),
			http.StatusForbidden, `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token."}`,
			map[string]string{
				"WWW-Authenticate": `Bearer realm="till", scope="customers:read customers:write", error="insufficient_scope", error_description="The request requires higher privileges than provided by the access token."`,
				"Cache-Control":    "no-store", "Pragma": "no-cache",
			}},
		{"a rate limit is the limiter's 429", paymentMethods,
			tillError(resolvers.RateLimited(90 * time.Second)),
			http.StatusTooManyRequests, `{"error":"TooManyRequests","detail":"Rate limit exceeded. Retry in 90 seconds."}`,
			map[string]string{"Retry-After": "90"}},
		{"service validation maps GraphQL locs to the wire", request(http.MethodPost, "/v1/customer-sessions/", `{"customer_id":"`+fastapitest.UUID4+`"}`),
			tillError(&resolvers.Error{Code: resolvers.CodeValidation, Errors: []resolvers.FieldError{
				{Type: "value_error", Loc: []any{"input", "customerId"}, Msg: "Customer does not exist.", Input: fastapitest.UUID4},
				{Type: "missing", Loc: []any{"input", "memberId"}, Msg: "member_id is required for team customers.", Input: nil},
				{Type: "enum", Loc: []any{"query", "sorting"}, Msg: "Invalid sorting criterion.", Input: "x"},
			}}),
			http.StatusUnprocessableEntity, `{"error":"PolarRequestValidationError","detail":[` +
				`{"type":"value_error","loc":["body","customer_id"],"msg":"Customer does not exist.","input":"` + fastapitest.UUID4 + `"},` +
				`{"type":"missing","loc":["body","member_id"],"msg":"member_id is required for team customers.","input":null},` +
				`{"type":"enum","loc":["query","sorting"],"msg":"Invalid sorting criterion.","input":"x"}]}`, nil},
		{"a parameter's variable maps back to its location", paymentMethods,
			tillError(resolvers.Invalid("invalid", "Bad.", fastapitest.UUID4, "customerId")),
			http.StatusUnprocessableEntity, `{"error":"PolarRequestValidationError","detail":[{"type":"invalid","loc":["path","id"],"msg":"Bad.","input":"` + fastapitest.UUID4 + `"}]}`, nil},
		{"nested locs walk the body schema", request(http.MethodPost, "/v1/license-keys/validate", `{"key":"k","organization_id":"`+fastapitest.OrgUUID+`"}`),
			tillError(&resolvers.Error{Code: resolvers.CodeValidation, Errors: []resolvers.FieldError{
				{Type: "invalid", Loc: []any{"input", "conditions", "maxSeats"}, Msg: "Bad.", Input: 1},
				{Type: "invalid", Loc: []any{"input", "someThing", 0, "deepName"}, Msg: "Bad.", Input: 1},
			}}),
			http.StatusUnprocessableEntity, `{"error":"PolarRequestValidationError","detail":[` +
				`{"type":"invalid","loc":["body","conditions","maxSeats"],"msg":"Bad.","input":1},` +
				`{"type":"invalid","loc":["body","some_thing",0,"deep_name"],"msg":"Bad.","input":1}]}`, nil},
		{"an error without a Till error is hidden behind a 500", paymentMethods,
			&graphql.Response{Errors: gqlerror.List{{Message: "Cannot query field \"nope\""}}},
			http.StatusInternalServerError, `{"error":"InternalServerError","detail":"Internal Server Error"}`, nil},
		{"GraphQL's own coded error is hidden behind a 500 too", paymentMethods,
			&graphql.Response{Errors: gqlerror.List{{Message: "Cannot query field \"nope\"",
				Extensions: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}}}},
			http.StatusInternalServerError, `{"error":"InternalServerError","detail":"Internal Server Error"}`, nil},
		{"the first Till error wins", paymentMethods,
			&graphql.Response{Errors: gqlerror.List{{Message: "internal"}, tillError(resolvers.NotFound("gone")).Errors[0]}},
			http.StatusNotFound, `{"error":"ResourceNotFound","detail":"gone"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := newTestRouter(t, &fakeExecutor{response: tt.resp}, func(c *rest.Config) {
				c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			})
			rec := serve(h, tt.req)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.status, rec.Body)
			}
			if got := rec.Body.String(); got != tt.body {
				t.Errorf("body:\n got %s\nwant %s", got, tt.body)
			}
			for k, v := range tt.headers {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if logged := logs.Len() > 0; logged != (tt.status == http.StatusInternalServerError) {
				t.Errorf("logged = %v for status %d: %s", logged, tt.status, logs.String())
			}
		})
	}
}

func TestSuccessBodiesKeepGraphQLBytes(t *testing.T) {
	data := `{"paymentMethods":{"items":[{"id":"a","exp_month":12,"amount":12345678901234567890,"ratio":1.50,"created_at":"2026-04-01T12:00:00.123456Z","wallet":null}],` +
		`"pagination":{"total_count":1,"max_page":1}}}`
	exec := &fakeExecutor{response: &graphql.Response{Data: json.RawMessage(data)}}
	rec := serve(newTestRouter(t, exec, nil), request(http.MethodGet, "/v1/customers/"+fastapitest.UUID4+"/payment-methods", ""))
	want := `{"items":[{"id":"a","exp_month":12,"amount":12345678901234567890,"ratio":1.50,"created_at":"2026-04-01T12:00:00.123456Z","wallet":null}],` +
		`"pagination":{"total_count":1,"max_page":1}}`
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Errorf("got %d %s\nwant 200 %s", rec.Code, rec.Body, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if exec.operation != "ListCustomerPaymentMethods" {
		t.Errorf("operation = %q", exec.operation)
	}
}

func TestDataWithoutTheFieldIsAServerError(t *testing.T) {
	exec := &fakeExecutor{response: &graphql.Response{Data: json.RawMessage(`{"other":1}`)}}
	rec := serve(newTestRouter(t, exec, nil), request(http.MethodGet, "/v1/customers/"+fastapitest.UUID4+"/payment-methods", ""))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "InternalServerError") {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
}
