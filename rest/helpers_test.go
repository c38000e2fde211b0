package rest_test

import (
	"bytes"
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

const (
	uuid4   = "3f1c2a5e-8b7d-4c19-9e2f-0a1b2c3d4e5f"
	uuidV1  = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	uuid4b  = "0b0c2e9a-6a8e-4d51-8a49-6e1d3c3b9f10"
	orgUUID = "1dbfc517-0bbf-4301-9ba8-555ca42b9737"
)

func customerSessionBody() *fastapi.Body {
	common := func(idField fastapi.Field) []fastapi.Field {
		return []fastapi.Field{
			{Name: "member_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
			{Name: "external_member_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
			{Name: "return_url", Schema: fastapi.Nullable{Schema: fastapi.URL{Schemes: []string{"http", "https"}, MaxLength: 2083}}},
			idField,
		}
	}
	return &fastapi.Body{Var: "input", Schema: fastapi.Union{Members: []fastapi.Schema{
		fastapi.Object{Name: "CustomerSessionCustomerIDCreate", Fields: common(
			fastapi.Field{Name: "customer_id", Schema: fastapi.UUID4{}, Required: true})},
		fastapi.Object{Name: "CustomerSessionCustomerExternalIDCreate", Fields: common(
			fastapi.Field{Name: "external_customer_id", Aliases: []string{"customer_external_id"}, Schema: fastapi.String{}, Required: true})},
	}}}
}

func metadataValues() fastapi.Map {
	return fastapi.Map{
		Keys:      fastapi.String{MinLength: 1, MaxLength: 40},
		Values:    fastapi.Union{Members: []fastapi.Schema{fastapi.String{MinLength: 1, MaxLength: 500}, fastapi.Int{}, fastapi.Float{}, fastapi.Bool{}}},
		MaxLength: 50,
	}
}

func licenseKeyValidateBody() *fastapi.Body {
	return &fastapi.Body{Var: "input", Schema: fastapi.Object{Name: "LicenseKeyValidate", Fields: []fastapi.Field{
		{Name: "key", Schema: fastapi.String{}, Required: true},
		{Name: "organization_id", Schema: fastapi.UUID4{}, Required: true},
		{Name: "activation_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
		{Name: "increment_usage", Schema: fastapi.Nullable{Schema: fastapi.Int{Ge: fastapi.At(0)}}},
		{Name: "conditions", Schema: metadataValues()},
	}}}
}

func testRoutes() []rest.Route {
	return []rest.Route{
		{Method: http.MethodGet, Path: "/v1/customers/{id}/payment-methods", Operation: "ListCustomerPaymentMethods",
			Params: []fastapi.Param{rest.Page(), rest.Limit(), rest.PathUUID4("id", "customerId")}, Field: "paymentMethods"},
		{Method: http.MethodPost, Path: "/v1/customer-sessions/", Operation: "CreateCustomerSession",
			Body: customerSessionBody(), Field: "customerSession", Status: http.StatusCreated},
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
			Body: licenseKeyValidateBody(), Field: "validateLicenseKey"},
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

// compactJSON normalises whitespace so expectations can be written readably
// while key order and number spelling still count.
func compactJSON(tb testing.TB, s string) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		tb.Fatalf("invalid JSON %q: %v", s, err)
	}
	return buf.String()
}

func readAll(tb testing.TB, r io.Reader) string {
	tb.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
