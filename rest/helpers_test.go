package rest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"till/rest/fastapi/fastapitest"

	"github.com/99designs/gqlgen/graphql"

	"till/rest"
	"till/rest/fastapi"
)

// The documents and rows below stand in for the real table: the executor is
// fake, so the documents only have to satisfy NewRouter's static checks.
func testDocuments() fstest.MapFS {
	doc := func(src string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(src)} }
	return fstest.MapFS{
		"ListCustomerPaymentMethods.graphql": doc(`query ListCustomerPaymentMethods($customerId: UUID!, $page: Int, $limit: Int) {
  paymentMethods(customerId: $customerId, page: $page, limit: $limit) { items { id } }
}`),
		"CreateCustomerSession.graphql": doc(`mutation CreateCustomerSession($input: CustomerSessionCreateInput!) {
  customerSession: createCustomerSession(input: $input) { id }
}`),
		"ListOrders.graphql": doc(`query ListOrders($page: Int, $limit: Int, $sorting: [String!], $metadata: MetadataQuery,
  $organizationId: [UUID!], $status: [OrderStatus!], $externalCustomerId: [String!], $active: Boolean, $createdAfter: DateTime) {
  orders(page: $page, limit: $limit) { items { id } }
}`),
		"GenerateOrderInvoice.graphql": doc(`mutation GenerateOrderInvoice($id: UUID!) { generateOrderInvoice(id: $id) }`),
		"DeactivateLicenseKey.graphql": doc(`mutation DeactivateLicenseKey($input: LicenseKeyDeactivateInput!) { deactivateLicenseKey(input: $input) }`),
		"ValidateLicenseKey.graphql":   doc(`mutation ValidateLicenseKey($input: LicenseKeyValidateInput!) { validateLicenseKey(input: $input) { id } }`),
	}
}

func testRoutes() []rest.Route {
	return []rest.Route{
		{Method: http.MethodGet, Path: "/v1/customers/{id}/payment-methods", Operation: "ListCustomerPaymentMethods",
			Params: []fastapi.Param{rest.Page(), rest.Limit(), rest.PathUUID4("id", "customerId")}, Field: "paymentMethods"},
		{Method: http.MethodPost, Path: "/v1/customer-sessions/", Operation: "CreateCustomerSession",
			Body: fastapitest.CustomerSessionBody(), Field: "customerSession", Status: http.StatusCreated},
		{Method: http.MethodGet, Path: "/v1/orders/", Operation: "ListOrders", Field: "orders", Params: []fastapi.Param{
			rest.Page(), rest.Limit(), rest.Sorting("created_at", "status"), rest.Metadata(),
			rest.Filter("organization_id", "", fastapi.UUID4{}),
			rest.Filter("status", "", fastapi.Enum{Name: "OrderStatus", Values: []string{"draft", "pending", "paid"}}),
			rest.Filter("external_customer_id", "", fastapi.String{}),
			rest.Query("active", "", fastapi.Bool{}),
			rest.Query("created_after", "", fastapi.Nullable{Schema: fastapi.DateTime{}}),
		}},
		{Method: http.MethodPost, Path: "/v1/orders/{id}/invoice", Operation: "GenerateOrderInvoice",
			Params: []fastapi.Param{rest.PathUUID4("id", "")}, Status: http.StatusAccepted},
		{Method: http.MethodPost, Path: "/v1/license-keys/deactivate", Operation: "DeactivateLicenseKey",
			Body: &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "LicenseKeyDeactivate"}}, Status: http.StatusNoContent},
		{Method: http.MethodPost, Path: "/v1/license-keys/validate", Operation: "ValidateLicenseKey",
			Body: fastapitest.LicenseKeyValidateBody(), Field: "validateLicenseKey"},
	}
}

// fakeExecutor answers every operation with a canned response and records
// what it was asked.
type fakeExecutor struct {
	mu        sync.Mutex
	response  *graphql.Response
	calls     int
	operation string
	variables map[string]any
}

func (f *fakeExecutor) Execute(_ context.Context, _, operationName string, variables map[string]any) *graphql.Response {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.operation, f.variables = operationName, variables
	if f.response != nil {
		return f.response
	}
	return &graphql.Response{Data: json.RawMessage(`{"paymentMethods":{"items":[]},"customerSession":{"id":"x"},"orders":{"items":[]},"validateLicenseKey":{"id":"x"}}`)}
}

// newTestRouter builds the router over the test table; mutate adjusts the
// configuration first.
func newTestRouter(tb testing.TB, exec rest.Executor, mutate func(*rest.Config)) http.Handler {
	tb.Helper()
	cfg := rest.Config{Executor: exec, Routes: testRoutes(), Documents: testDocuments()}
	if mutate != nil {
		mutate(&cfg)
	}
	h, err := rest.NewRouter(cfg)
	if err != nil {
		tb.Fatalf("NewRouter: %v", err)
	}
	return h
}

// request builds a request the way a real client sends it: with a
// Content-Length on POST, PUT and PATCH (httptest leaves the header out).
func request(method, target, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func readAll(tb testing.TB, r io.Reader) string {
	tb.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
