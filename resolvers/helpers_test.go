package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// TestMain stops the test database server after the run and, when the whole suite ran and
// passed, fails it if a root field that names an object by id has no tenancy case: a new
// one needs a case proving another organization's object is out of its reach.
func TestMain(m *testing.M) {
	code := storagetest.Main(m)
	if code == 0 && storagetest.WholeSuite() {
		if missing := uncoveredTenancyFields(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: these root fields take an id but no tenancy case calls them with another organization's:\n\t%s\n",
				strings.Join(missing, "\n\t"))
			code = 1
		}
	}
	os.Exit(code)
}

type (
	vars     = resolverstest.Vars
	gqlError = resolverstest.Error
	fieldErr = resolverstest.FieldError
)

// customerFields selects everything tests compare on a customer.
const customerFields = `id email emailVerified name externalId type billingName
	billingAddress { line1 line2 postalCode city state country } taxId locale metadata
	organizationId defaultPaymentMethodId deletedAt`

// customer is the JSON shape of customerFields.
type customer struct {
	ID                     uuid.UUID      `json:"id"`
	Email                  *string        `json:"email"`
	EmailVerified          bool           `json:"emailVerified"`
	Name                   *string        `json:"name"`
	ExternalID             *string        `json:"externalId"`
	Type                   string         `json:"type"`
	BillingName            *string        `json:"billingName"`
	BillingAddress         *address       `json:"billingAddress"`
	TaxID                  []string       `json:"taxId"`
	Locale                 *string        `json:"locale"`
	Metadata               map[string]any `json:"metadata"`
	OrganizationID         uuid.UUID      `json:"organizationId"`
	DefaultPaymentMethodID *uuid.UUID     `json:"defaultPaymentMethodId"`
	DeletedAt              *string        `json:"deletedAt"`
}

type address struct {
	Line1      *string `json:"line1"`
	Line2      *string `json:"line2"`
	PostalCode *string `json:"postalCode"`
	City       *string `json:"city"`
	State      *string `json:"state"`
	Country    string  `json:"country"`
}

func ptr[T any](v T) *T { return &v }

// createCustomer creates a customer through the API and fails the test if that fails.
func createCustomer(tb testing.TB, s *resolverstest.Server, token string, input vars) customer {
	tb.Helper()
	var out struct{ CreateCustomer customer }
	s.Query(tb, token, `mutation($input: CustomerCreateInput!) { createCustomer(input: $input) { `+customerFields+` } }`,
		vars{"input": input}, &out)
	return out.CreateCustomer
}

// newCustomer creates a customer with a unique email and the given external id (none when empty).
func newCustomer(tb testing.TB, s *resolverstest.Server, token, externalID string) customer {
	tb.Helper()
	in := vars{"email": fmt.Sprintf("c-%s@example.com", uuid.NewString()[:8])}
	if externalID != "" {
		in["externalId"] = externalID
	}
	return createCustomer(tb, s, token, in)
}

// addPaymentMethod stores a card for a customer directly, as the payment processor
// integration would, created age ago so tests control the newest-first order.
func addPaymentMethod(tb testing.TB, s *resolverstest.Server, orgID, customerID uuid.UUID, last4 string, age time.Duration) uuid.UUID {
	tb.Helper()
	pm, err := storage.CreatePaymentMethod(context.Background(), s.DB, orgID, customerID, storage.PaymentMethodWrite{
		Processor: "stripe", ProcessorID: "pm_" + uuid.NewString(), Type: "card",
		Brand: ptr("visa"), Last4: ptr(last4), ExpMonth: ptr(12), ExpYear: ptr(2030),
	})
	if err != nil {
		tb.Fatalf("creating payment method: %v", err)
	}
	s.Exec(tb, `UPDATE payment_methods SET created_at = now() - $2::interval WHERE id = $1`, pm.ID,
		fmt.Sprintf("%d microseconds", age.Microseconds()))
	return pm.ID
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

// newCustomerSession opens a portal session for a customer and returns its token.
func newCustomerSession(tb testing.TB, s *resolverstest.Server, orgToken string, customerID uuid.UUID) string {
	tb.Helper()
	var out struct{ CreateCustomerSession struct{ Token string } }
	s.Query(tb, orgToken, `mutation($id: UUID!) { createCustomerSession(input: {customerId: $id}) { token } }`,
		vars{"id": customerID}, &out)
	return out.CreateCustomerSession.Token
}

// decodeBody decodes a JSON response body.
func decodeBody(tb testing.TB, res *http.Response, out any) {
	tb.Helper()
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		tb.Fatalf("decoding body: %v", err)
	}
}

// productFields selects everything tests compare on a product.
const productFields = `id name description visibility recurringInterval recurringIntervalCount trialInterval
	trialIntervalCount isRecurring isArchived organizationId metadata
	prices { id productId source amountType priceCurrency taxBehavior isArchived priceAmount minimumAmount
		maximumAmount presetAmount seatTiers { seatTierType tiers { minSeats maxSeats pricePerSeat } minimumSeats maximumSeats }
		unitAmount capAmount meterId }
	benefits { id type description }`

type product struct {
	ID                     uuid.UUID         `json:"id"`
	Name                   string            `json:"name"`
	Description            *string           `json:"description"`
	Visibility             string            `json:"visibility"`
	RecurringInterval      *storage.Interval `json:"recurringInterval"`
	RecurringIntervalCount *int              `json:"recurringIntervalCount"`
	TrialInterval          *string           `json:"trialInterval"`
	TrialIntervalCount     *int              `json:"trialIntervalCount"`
	IsRecurring            bool              `json:"isRecurring"`
	IsArchived             bool              `json:"isArchived"`
	OrganizationID         uuid.UUID         `json:"organizationId"`
	Metadata               map[string]any    `json:"metadata"`
	Prices                 []price           `json:"prices"`
	Benefits               []struct {
		ID          uuid.UUID `json:"id"`
		Type        string    `json:"type"`
		Description string    `json:"description"`
	} `json:"benefits"`
}

type price struct {
	ID            uuid.UUID  `json:"id"`
	ProductID     uuid.UUID  `json:"productId"`
	Source        string     `json:"source"`
	AmountType    string     `json:"amountType"`
	PriceCurrency string     `json:"priceCurrency"`
	TaxBehavior   *string    `json:"taxBehavior"`
	IsArchived    bool       `json:"isArchived"`
	PriceAmount   *int       `json:"priceAmount"`
	MinimumAmount *int       `json:"minimumAmount"`
	MaximumAmount *int       `json:"maximumAmount"`
	PresetAmount  *int       `json:"presetAmount"`
	SeatTiers     any        `json:"seatTiers"`
	UnitAmount    *string    `json:"unitAmount"`
	CapAmount     *int       `json:"capAmount"`
	MeterID       *uuid.UUID `json:"meterId"`
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

func (p product) benefitIDs() []uuid.UUID {
	out := []uuid.UUID{}
	for _, b := range p.Benefits {
		out = append(out, b.ID)
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

// newProduct creates a one-time product with a fixed price and the given benefits.
func newProduct(tb testing.TB, s *resolverstest.Server, token, name string, benefitIDs ...uuid.UUID) product {
	tb.Helper()
	if benefitIDs == nil {
		benefitIDs = []uuid.UUID{}
	}
	return createProduct(tb, s, token, vars{"name": name, "benefitIds": benefitIDs,
		"prices": []vars{{"amountType": "fixed", "priceAmount": 1000}}})
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
