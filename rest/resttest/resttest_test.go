package resttest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/99designs/gqlgen/graphql"

	"till/rest"
	"till/rest/fastapi"
	"till/rest/resttest"
)

const (
	customerID = "3f1c2a5e-8b7d-4c19-9e2f-0a1b2c3d4e5f"
	cardItem   = `{"id":"0b0c2e9a-6a8e-4d51-8a49-6e1d3c3b9f10","created_at":"2026-04-01T12:00:00Z","modified_at":null,` +
		`"processor":"stripe","customer_id":"` + customerID + `","type":"card",` +
		`"method_metadata":{"brand":"visa","last4":"4242","exp_month":12,"exp_year":2030,"wallet":null},"is_default":true}`
	paymentMethods = `{"items":[` + cardItem + `],"pagination":{"total_count":1,"max_page":1}}`
	stripeWebhook  = "/v1/integrations/stripe/webhook"
	confirmPayment = "/v1/customer-portal/orders/" + customerID + "/confirm-payment"
)

func jsonHeader() http.Header {
	return http.Header{"Content-Type": []string{"application/json"}}
}

func TestCheckAcceptsWhatUpstreamSends(t *testing.T) {
	doc := resttest.Contract(t)
	listPM := "/v1/customers/" + customerID + "/payment-methods"
	tests := []struct {
		name, method, target string
		status               int
		header               http.Header
		body                 string
	}{
		{"a full payment-method page", http.MethodGet, listPM, 200, jsonHeader(), paymentMethods},
		{"an empty page", http.MethodGet, listPM + "?page=9", 200, jsonHeader(), `{"items":[],"pagination":{"total_count":1,"max_page":1}}`},
		{"the same page under /api", http.MethodGet, "/api" + listPM, 200, jsonHeader(), paymentMethods},
		{"a 422 with Polar's extra error key", http.MethodGet, listPM + "?page=0", 422, jsonHeader(),
			`{"error":"RequestValidationError","detail":[{"type":"greater_than","loc":["query","page"],"msg":"Input should be greater than 0","input":"0","ctx":{"gt":0}}]}`},
		{"a 422 where the operation documents another error", http.MethodPost, "/v1/orders/" + customerID + "/invoice", 422, jsonHeader(),
			`{"error":"RequestValidationError","detail":[{"type":"uuid_version","loc":["path","id"],"msg":"UUID version 4 expected","input":"x","ctx":{"expected_version":4}}]}`},
		{"a 422 item whose input is null, as for a missing body", http.MethodPost, "/v1/customer-sessions/", 422, jsonHeader(),
			`{"error":"RequestValidationError","detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"a documented 404", http.MethodGet, listPM, 404, jsonHeader(), `{"error":"ResourceNotFound","detail":"Not found"}`},
		{"a domain error under ResourceNotFound", http.MethodGet, "/v1/orders/" + customerID + "/invoice", 404, jsonHeader(),
			`{"error":"InvoiceDoesNotExist","detail":"No invoice"}`},
		{"an undocumented insufficient_scope", http.MethodGet, listPM, 403, jsonHeader(),
			`{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token."}`},
		{"an undocumented Unauthorized", http.MethodGet, listPM, 401, jsonHeader(), `{"error":"Unauthorized","detail":"Unauthorized"}`},
		{"a 411 from the size guard", http.MethodPost, "/v1/customer-sessions/", 411, jsonHeader(),
			`{"error":"LengthRequired","detail":"A Content-Length header is required."}`},
		{"a 202 with JSON null", http.MethodPost, "/v1/orders/" + customerID + "/invoice", 202, jsonHeader(), `null`},
		{"a 204 without a body", http.MethodPost, "/v1/license-keys/deactivate", 204, http.Header{}, ``},
		{"a framework 404 on an unknown path", http.MethodGet, "/v1/nowhere", 404, jsonHeader(), `{"detail":"Not Found"}`},
		{"a slash redirect", http.MethodGet, "/v1/orders", 307, http.Header{"Location": []string{"http://x/v1/orders/"}}, ``},
		{"a Stripe event taken", http.MethodPost, stripeWebhook, 202, jsonHeader(), `null`},
		{"a forged Stripe event", http.MethodPost, stripeWebhook, 401, jsonHeader(), `{"detail":"Unauthorized"}`},
		{"a payment retry refused under the 422 documented for another name", http.MethodPost, confirmPayment, 422, jsonHeader(),
			`{"error":"PaymentRetryValidationError","detail":"Payment method does not belong to customer"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := resttest.NewRequest(tt.method, tt.target, "")
			if err := resttest.Check(doc, req, tt.status, tt.header, []byte(tt.body)); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

func TestCheckRejectsWhatClientsCouldNotDecode(t *testing.T) {
	doc := resttest.Contract(t)
	listPM := "/v1/customers/" + customerID + "/payment-methods"
	tests := []struct {
		name, method, target string
		status               int
		header               http.Header
		body                 string
		wantErr              string
	}{
		{"an integer sent as a string", http.MethodGet, listPM, 200, jsonHeader(),
			strings.Replace(paymentMethods, `"total_count":1`, `"total_count":"1"`, 1), "total_count"},
		{"an integer sent as a float", http.MethodGet, listPM, 200, jsonHeader(),
			strings.Replace(paymentMethods, `"max_page":1`, `"max_page":1.5`, 1), "max_page"},
		{"a required field left out", http.MethodGet, listPM, 200, jsonHeader(),
			strings.Replace(paymentMethods, `,"is_default":true`, ``, 1), "is_default"},
		{"an optional field left out instead of null", http.MethodGet, listPM, 200, jsonHeader(),
			strings.Replace(paymentMethods, `,"wallet":null`, ``, 1), "wallet"},
		{"an undocumented success status", http.MethodGet, listPM, 201, jsonHeader(), paymentMethods, "not documented"},
		{"a server error", http.MethodGet, listPM, 500, jsonHeader(), `{"error":"InternalServerError","detail":"Internal Server Error"}`, "server error"},
		{"a JSON body without its content type", http.MethodGet, listPM, 200, http.Header{}, paymentMethods, "Content-Type"},
		{"a 404 with the wrong error name", http.MethodGet, listPM, 404, jsonHeader(), `{"error":"NotFound","detail":"x"}`, "ResourceNotFound"},
		{"a 422 item without input", http.MethodGet, listPM, 422, jsonHeader(),
			`{"error":"RequestValidationError","detail":[{"type":"missing","loc":["query","page"],"msg":"Field required"}]}`, `"input"`},
		{"a 401 in neither known shape", http.MethodGet, listPM, 401, jsonHeader(), `{"message":"nope"}`, "unexpected error body"},
		{"a 200 on a path the contract does not have", http.MethodGet, "/v1/nowhere", 200, jsonHeader(), `{}`, "no documented operation"},
		{"a Stripe event accepted with a body", http.MethodPost, stripeWebhook, 202, jsonHeader(), `{}`, "want null"},
		{"a Stripe refusal in the wrong words", http.MethodPost, stripeWebhook, 401, jsonHeader(), `{"detail":"Bad Request"}`, "Unauthorized"},
		{"a Stripe refusal with an error name", http.MethodPost, stripeWebhook, 400, jsonHeader(),
			`{"error":"BadRequest","detail":"Bad Request"}`, "want {"},
		{"a 422 of a name no route sends", http.MethodPost, confirmPayment, 422, jsonHeader(),
			`{"error":"PaymentFailed","detail":"x"}`, "OrderNotEligibleForRetry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := resttest.NewRequest(tt.method, tt.target, "")
			err := resttest.Check(doc, req, tt.status, tt.header, []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Check = %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestServeValidatesTheRealRouter(t *testing.T) {
	docs := fstest.MapFS{"ListCustomerPaymentMethods.graphql": &fstest.MapFile{Data: []byte(
		`query ListCustomerPaymentMethods($customerId: UUID!, $page: Int, $limit: Int) { paymentMethods(customerId: $customerId, page: $page, limit: $limit) { items { id } } }`)}}
	exec := rest.ExecutorFunc(func(context.Context, string, string, map[string]any) *graphql.Response {
		return &graphql.Response{Data: json.RawMessage(`{"paymentMethods":` + paymentMethods + `}`)}
	})
	h, err := rest.NewRouter(rest.Config{Executor: exec, Documents: docs, Routes: []rest.Route{{
		Method: http.MethodGet, Path: "/v1/customers/{id}/payment-methods", Operation: "ListCustomerPaymentMethods",
		Params: []fastapi.Param{rest.Page(), rest.Limit(), rest.PathUUID4("id", "customerId")}, Field: "paymentMethods",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, target string
		status       int
		errorName    string
	}{
		{"a page of payment methods conforms", "/v1/customers/" + customerID + "/payment-methods", 200, ""},
		{"a bad page conforms as a 422", "/v1/customers/" + customerID + "/payment-methods?page=0", 422, "RequestValidationError"},
		{"a wrong method conforms as a 405", "/v1/customers/" + customerID + "/payment-methods", 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodGet
			if tt.status == http.StatusMethodNotAllowed {
				method = http.MethodDelete
			}
			rec := resttest.Serve(t, h, resttest.NewRequest(method, tt.target, ""))
			if rec.Code != tt.status || resttest.ErrorName(rec.Body.Bytes()) != tt.errorName {
				t.Errorf("got %d %s", rec.Code, rec.Body)
			}
		})
	}
}
