package resolvers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// TestMain stops the test database server after the run and, when the whole suite ran and
// passed, fails it if a root field that names an object by id has no tenancy case (a new one
// needs a case proving another organization's object is out of its reach), or if a mutation
// has no audit case (a new one needs a case proving what the audit log records of it).
func TestMain(m *testing.M) {
	code := storagetest.Main(m)
	if code == 0 && storagetest.WholeSuite() {
		if missing := uncoveredTenancyFields(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: these root fields take an id but no tenancy case calls them with another organization's:\n\t%s\n",
				strings.Join(missing, "\n\t"))
			code = 1
		}
		if missing := uncoveredAuditMutations(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no audit case runs these mutations:\n\t%s\n", strings.Join(missing, "\n\t"))
			code = 1
		}
	}
	os.Exit(code)
}

type (
	vars     = resolverstest.Vars
	gqlError = resolverstest.Error
	fieldErr = resolverstest.FieldError
	customer = resolverstest.Customer
	address  = resolverstest.Address
	product  = resolverstest.Product
	price    = resolverstest.Price
)

const (
	customerFields = resolverstest.CustomerFields
	productFields  = resolverstest.ProductFields
)

func ptr[T any](v T) *T { return &v }

// createCustomer creates a customer through the API and fails the test if that fails.
func createCustomer(tb testing.TB, s *resolverstest.Server, token string, input vars) customer {
	tb.Helper()
	var out struct{ CreateCustomer customer }
	s.Query(tb, token, `mutation($input: CustomerCreateInput!) { createCustomer(input: $input) { `+customerFields+` } }`,
		vars{"input": input}, &out)
	return out.CreateCustomer
}

// wantInvalid checks a BAD_USER_INPUT PolarRequestValidationError with exactly one failing
// field.
func wantInvalid(tb testing.TB, got gqlError, want fieldErr) {
	tb.Helper()
	wantError(tb, got, "BAD_USER_INPUT", "PolarRequestValidationError", want)
}

// wantError checks an error's GraphQL code, its reason (the upstream name) and its failing
// input fields (none when want is empty).
func wantError(tb testing.TB, got gqlError, code, reason string, want ...fieldErr) {
	tb.Helper()
	if got.Extensions.Code != code || got.Extensions.Reason != reason {
		tb.Errorf("error code = %s (%s), want %s (%s); message %q, fields %+v",
			got.Extensions.Code, got.Extensions.Reason, code, reason, got.Message, got.Extensions.Fields)
	}
	if len(want) == 0 {
		want = nil
	}
	if diff := cmp.Diff(want, got.Extensions.Fields); diff != "" {
		tb.Errorf("fields (-want +got):\n%s", diff)
	}
}

// jsonOf decodes a JSON document into a generic value, for comparing "input" fields.
func jsonOf(tb testing.TB, doc string) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// decodeBody decodes a JSON response body.
func decodeBody(tb testing.TB, res *http.Response, out any) {
	tb.Helper()
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		tb.Fatalf("decoding body: %v", err)
	}
}

// itemIDs is the ids of a page's items, in page order; never nil, so an empty page compares
// equal to an empty want.
func itemIDs(items []struct{ ID uuid.UUID }) []uuid.UUID {
	out := []uuid.UUID{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// createProduct creates a product through the API and fails the test if that fails.
func createProduct(tb testing.TB, s *resolverstest.Server, token string, input vars) product {
	tb.Helper()
	var out struct{ CreateProduct product }
	s.Query(tb, token, `mutation($input: ProductCreateInput!) { createProduct(input: $input) { `+productFields+` } }`,
		vars{"input": input}, &out)
	return out.CreateProduct
}

// benefitFields selects everything tests compare on a benefit.
const benefitFields = `id type description selectable deletable isDeleted organizationId metadata visibility
	visibilityConfigurable properties
	licenseKeys { prefix expires { ttl timeframe } activations { limit enableCustomerAdmin } limitUsage }`

type benefit struct {
	ID                     uuid.UUID      `json:"id"`
	Type                   string         `json:"type"`
	Description            string         `json:"description"`
	Selectable             bool           `json:"selectable"`
	Deletable              bool           `json:"deletable"`
	IsDeleted              bool           `json:"isDeleted"`
	OrganizationID         uuid.UUID      `json:"organizationId"`
	Metadata               map[string]any `json:"metadata"`
	Visibility             string         `json:"visibility"`
	VisibilityConfigurable bool           `json:"visibilityConfigurable"`
	Properties             map[string]any `json:"properties"`
	LicenseKeys            *licenseKeys   `json:"licenseKeys"`
}

type licenseKeys struct {
	Prefix  *string `json:"prefix"`
	Expires *struct {
		TTL       int    `json:"ttl"`
		Timeframe string `json:"timeframe"`
	} `json:"expires"`
	Activations *struct {
		Limit               int  `json:"limit"`
		EnableCustomerAdmin bool `json:"enableCustomerAdmin"`
	} `json:"activations"`
	LimitUsage *int `json:"limitUsage"`
}

// createBenefit creates a benefit through the API and fails the test if that fails.
func createBenefit(tb testing.TB, s *resolverstest.Server, token string, input vars) benefit {
	tb.Helper()
	var out struct{ CreateBenefit benefit }
	s.Query(tb, token, `mutation($input: BenefitCreateInput!) { createBenefit(input: $input) { `+benefitFields+` } }`,
		vars{"input": input}, &out)
	return out.CreateBenefit
}

// newBenefit creates a custom benefit.
func newBenefit(tb testing.TB, s *resolverstest.Server, token, description string) benefit {
	tb.Helper()
	return createBenefit(tb, s, token, vars{"type": "custom", "description": description, "properties": vars{"note": "hi"}})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
