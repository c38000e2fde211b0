package rest_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/rest"
)

func gqlError(ext map[string]any) *graphql.Response {
	return &graphql.Response{Errors: gqlerror.List{{Message: "resolver message", Extensions: ext}}, Data: json.RawMessage(`null`)}
}

func TestGraphQLErrorsBecomePolarEnvelopes(t *testing.T) {
	paymentMethods := request(http.MethodGet, "/v1/customers/"+uuid4+"/payment-methods", "")
	tests := []struct {
		name    string
		req     *http.Request
		resp    *graphql.Response
		status  int
		body    string
		headers map[string]string
	}{
		{"a missing resource is 404 with its detail", paymentMethods,
			gqlError(map[string]any{"code": "ResourceNotFound", "status": 404, "detail": "Not found"}),
			http.StatusNotFound, `{"error":"ResourceNotFound","detail":"Not found"}`, nil},
		{"a status decoded from JSON still counts", paymentMethods,
			gqlError(map[string]any{"code": "NotPermitted", "status": float64(403), "detail": "You don't have permission to manage sales"}),
			http.StatusForbidden, `{"error":"NotPermitted","detail":"You don't have permission to manage sales"}`, nil},
		{"a domain error keeps its own name", paymentMethods,
			gqlError(map[string]any{"code": "InvoiceDoesNotExist", "status": json.Number("404"), "detail": "No invoice <yet> & none pending"}),
			http.StatusNotFound, `{"error":"InvoiceDoesNotExist","detail":"No invoice <yet> & none pending"}`, nil},
		{"a well-known kind without a status gets its default", paymentMethods,
			gqlError(map[string]any{"code": "BadRequest"}),
			http.StatusBadRequest, `{"error":"BadRequest","detail":"resolver message"}`, nil},
		{"Unauthorized challenges the client", paymentMethods,
			gqlError(map[string]any{"code": "Unauthorized", "status": 401, "detail": "Unauthorized"}),
			http.StatusUnauthorized, `{"error":"Unauthorized","detail":"Unauthorized"}`,
			map[string]string{"WWW-Authenticate": `Bearer realm="till"`}},
		{"a missing scope is an OAuth 403 listing the scopes", paymentMethods,
			gqlError(map[string]any{"code": "insufficient_scope", "status": 403, "scopes": []any{"customers:read", "customers:write"}}),
			http.StatusForbidden, `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token."}`,
			map[string]string{
				"WWW-Authenticate": `Bearer realm="till", scope="customers:read customers:write", error="insufficient_scope", error_description="The request requires higher privileges than provided by the access token."`,
				"Cache-Control":    "no-store", "Pragma": "no-cache",
			}},
		{"a dead token is an OAuth 401", paymentMethods,
			gqlError(map[string]any{"code": "invalid_token", "status": 401}),
			http.StatusUnauthorized, `{"error":"invalid_token","error_description":"The access token provided is expired, revoked, malformed, or invalid for other reasons."}`,
			map[string]string{"WWW-Authenticate": `Bearer realm="till", error="invalid_token", error_description="The access token provided is expired, revoked, malformed, or invalid for other reasons."`}},
		{"service validation maps GraphQL locs to the wire", request(http.MethodPost, "/v1/customer-sessions/", `{"customer_id":"`+uuid4+`"}`),
			gqlError(map[string]any{"code": "PolarRequestValidationError", "status": 422, "errors": []map[string]any{
				{"type": "value_error", "loc": []any{"input", "customerId"}, "msg": "Customer does not exist.", "input": uuid4},
				{"type": "missing", "loc": []any{"input", "memberId"}, "msg": "member_id is required for team customers.", "input": nil},
				{"type": "enum", "loc": []any{"query", "sorting"}, "msg": "Invalid sorting criterion.", "input": "x"},
			}}),
			http.StatusUnprocessableEntity, `{"error":"PolarRequestValidationError","detail":[` +
				`{"type":"value_error","loc":["body","customer_id"],"msg":"Customer does not exist.","input":"` + uuid4 + `"},` +
				`{"type":"missing","loc":["body","member_id"],"msg":"member_id is required for team customers.","input":null},` +
				`{"type":"enum","loc":["query","sorting"],"msg":"Invalid sorting criterion.","input":"x"}]}`, nil},
		{"a parameter's variable maps back to its location", paymentMethods,
			gqlError(map[string]any{"code": "PolarRequestValidationError", "errors": []any{
				map[string]any{"type": "invalid", "loc": []any{"customerId"}, "msg": "Bad.", "input": uuid4},
			}}),
			http.StatusUnprocessableEntity, `{"error":"PolarRequestValidationError","detail":[{"type":"invalid","loc":["path","id"],"msg":"Bad.","input":"` + uuid4 + `"}]}`, nil},
		{"nested locs walk the body schema", request(http.MethodPost, "/v1/license-keys/validate", `{"key":"k","organization_id":"`+orgUUID+`"}`),
			gqlError(map[string]any{"code": "PolarRequestValidationError", "errors": []any{
				map[string]any{"type": "invalid", "loc": []any{"input", "conditions", "maxSeats"}, "msg": "Bad.", "input": 1},
				map[string]any{"type": "invalid", "loc": []any{"input", "someThing", 0, "deepName"}, "msg": "Bad.", "input": 1},
			}}),
			http.StatusUnprocessableEntity, `{"error":"PolarRequestValidationError","detail":[` +
				`{"type":"invalid","loc":["body","conditions","maxSeats"],"msg":"Bad.","input":1},` +
				`{"type":"invalid","loc":["body","some_thing",0,"deep_name"],"msg":"Bad.","input":1}]}`, nil},
		{"an error without a code is hidden behind a 500", paymentMethods,
			&graphql.Response{Errors: gqlerror.List{{Message: "Cannot query field \"nope\""}}},
			http.StatusInternalServerError, `{"error":"InternalServerError","detail":"Internal Server Error"}`, nil},
		{"a code without any usable status is a 500", paymentMethods,
			gqlError(map[string]any{"code": "SomethingNew"}),
			http.StatusInternalServerError, `{"error":"InternalServerError","detail":"Internal Server Error"}`, nil},
		{"the first coded error wins", paymentMethods,
			&graphql.Response{Errors: gqlerror.List{
				{Message: "internal"},
				{Message: "gone", Extensions: map[string]any{"code": "ResourceNotFound", "status": 404}},
			}},
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
	rec := serve(newTestRouter(t, exec, nil), request(http.MethodGet, "/v1/customers/"+uuid4+"/payment-methods", ""))
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
	rec := serve(newTestRouter(t, exec, nil), request(http.MethodGet, "/v1/customers/"+uuid4+"/payment-methods", ""))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "InternalServerError") {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
}
