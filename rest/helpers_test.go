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

func customerSessionBody() *rest.Body {
	common := func(idField rest.Field) []rest.Field {
		return []rest.Field{
			{Name: "member_id", Schema: rest.Nullable{Schema: rest.UUID4{}}},
			{Name: "external_member_id", Schema: rest.Nullable{Schema: rest.String{}}},
			{Name: "return_url", Schema: rest.Nullable{Schema: rest.URL{Schemes: []string{"http", "https"}, MaxLength: 2083}}},
			idField,
		}
	}
	return &rest.Body{Var: "input", Schema: rest.Union{Members: []rest.Schema{
		rest.Object{Name: "CustomerSessionCustomerIDCreate", Fields: common(
			rest.Field{Name: "customer_id", Schema: rest.UUID4{}, Required: true})},
		rest.Object{Name: "CustomerSessionCustomerExternalIDCreate", Fields: common(
			rest.Field{Name: "external_customer_id", Aliases: []string{"customer_external_id"}, Schema: rest.String{}, Required: true})},
	}}}
}

func metadataValues() rest.Map {
	return rest.Map{
		Keys:      rest.String{MinLength: 1, MaxLength: 40},
		Values:    rest.Union{Members: []rest.Schema{rest.String{MinLength: 1, MaxLength: 500}, rest.Int{}, rest.Float{}, rest.Bool{}}},
		MaxLength: 50,
	}
}

func licenseKeyValidateBody() *rest.Body {
	return &rest.Body{Var: "input", Schema: rest.Object{Name: "LicenseKeyValidate", Fields: []rest.Field{
		{Name: "key", Schema: rest.String{}, Required: true},
		{Name: "organization_id", Schema: rest.UUID4{}, Required: true},
		{Name: "activation_id", Schema: rest.Nullable{Schema: rest.UUID4{}}},
		{Name: "increment_usage", Schema: rest.Nullable{Schema: rest.Int{Ge: rest.At(0)}}},
		{Name: "conditions", Schema: metadataValues()},
	}}}
}

func testRoutes() []rest.Route {
	return []rest.Route{
		{Method: http.MethodGet, Path: "/v1/customers/{id}/payment-methods", Operation: "ListCustomerPaymentMethods",
			Params: []rest.Param{rest.Page(), rest.Limit(), rest.PathUUID4("id", "customerId")}, Field: "paymentMethods"},
		{Method: http.MethodPost, Path: "/v1/customer-sessions/", Operation: "CreateCustomerSession",
			Body: customerSessionBody(), Field: "customerSession", Status: http.StatusCreated},
		{Method: http.MethodGet, Path: "/v1/orders/", Operation: "ListOrders", Field: "orders", Params: []rest.Param{
			rest.Page(), rest.Limit(), rest.Sorting("created_at", "status"), rest.Metadata(),
			rest.Filter("organization_id", "", rest.UUID4{}),
			rest.Filter("status", "", rest.Enum{Name: "OrderStatus", Values: []string{"draft", "pending", "paid"}}),
			rest.Filter("external_customer_id", "", rest.String{}),
			rest.Query("active", "", rest.Bool{}),
			rest.Query("created_after", "", rest.Nullable{Schema: rest.DateTime{}}),
		}},
		{Method: http.MethodPost, Path: "/v1/orders/{id}/invoice", Operation: "GenerateOrderInvoice",
			Params: []rest.Param{rest.PathUUID4("id", "")}, Status: http.StatusAccepted},
		{Method: http.MethodPost, Path: "/v1/license-keys/deactivate", Operation: "DeactivateLicenseKey",
			Body: &rest.Body{Var: "input", Schema: rest.Object{Name: "LicenseKeyDeactivate"}}, Status: http.StatusNoContent},
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
