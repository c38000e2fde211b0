package resolvers_test

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// ckFields selects everything the checkout tests compare.
const ckFields = `id status clientSecret url expiresAt successUrl returnUrl amount seats minSeats maxSeats
	discountAmount netAmount taxAmount totalAmount currency allowTrial activeTrialInterval activeTrialIntervalCount
	trialEnd organizationId productId productPriceId discountId allowDiscountCodes requireBillingAddress
	isDiscountApplicable isFreeProductPrice isPaymentRequired isPaymentSetupRequired isPaymentFormRequired
	customerId customerName customerEmail customerBillingName externalCustomerId subscriptionId paymentMethodType
	metadata customerMetadata customFieldData
	products { id name prices: wirePrices } productPrice: wireProductPrice prices
	discount { __typename
		... on CheckoutDiscountFixedOnceForeverDuration { id amount currency }
		... on CheckoutDiscountPercentageOnceForeverDuration { id basisPoints }
		... on CheckoutDiscountPercentageRepeatDuration { id basisPoints durationInMonths }
		... on CheckoutDiscountFixedRepeatDuration { id amount durationInMonths } }
	billingAddressFields { country state city postalCode line1 line2 }`

// ckCheckout is the JSON shape of ckFields.
type ckCheckout struct {
	ID                       uuid.UUID       `json:"id"`
	Status                   string          `json:"status"`
	ClientSecret             string          `json:"clientSecret"`
	URL                      string          `json:"url"`
	ExpiresAt                string          `json:"expiresAt"`
	SuccessURL               string          `json:"successUrl"`
	Amount                   int64           `json:"amount"`
	Seats                    *int            `json:"seats"`
	DiscountAmount           int64           `json:"discountAmount"`
	NetAmount                int64           `json:"netAmount"`
	TaxAmount                *int64          `json:"taxAmount"`
	TotalAmount              int64           `json:"totalAmount"`
	Currency                 string          `json:"currency"`
	ActiveTrialInterval      *string         `json:"activeTrialInterval"`
	ActiveTrialIntervalCount *int            `json:"activeTrialIntervalCount"`
	TrialEnd                 *string         `json:"trialEnd"`
	ProductID                *uuid.UUID      `json:"productId"`
	ProductPriceID           *uuid.UUID      `json:"productPriceId"`
	DiscountID               *uuid.UUID      `json:"discountId"`
	IsDiscountApplicable     bool            `json:"isDiscountApplicable"`
	IsFreeProductPrice       bool            `json:"isFreeProductPrice"`
	IsPaymentRequired        bool            `json:"isPaymentRequired"`
	IsPaymentSetupRequired   bool            `json:"isPaymentSetupRequired"`
	IsPaymentFormRequired    bool            `json:"isPaymentFormRequired"`
	CustomerID               *uuid.UUID      `json:"customerId"`
	CustomerName             *string         `json:"customerName"`
	CustomerEmail            *string         `json:"customerEmail"`
	ExternalCustomerID       *string         `json:"externalCustomerId"`
	SubscriptionID           *uuid.UUID      `json:"subscriptionId"`
	PaymentMethodType        *string         `json:"paymentMethodType"`
	Metadata                 map[string]any  `json:"metadata"`
	CustomerMetadata         map[string]any  `json:"customerMetadata"`
	ProductPrice             json.RawMessage `json:"productPrice"`
	Prices                   json.RawMessage `json:"prices"`
	Products                 []struct {
		ID     uuid.UUID         `json:"id"`
		Name   string            `json:"name"`
		Prices []json.RawMessage `json:"prices"`
	} `json:"products"`
	Discount *struct {
		Typename         string    `json:"__typename"`
		ID               uuid.UUID `json:"id"`
		Amount           *int      `json:"amount"`
		BasisPoints      *int      `json:"basisPoints"`
		DurationInMonths *int      `json:"durationInMonths"`
	} `json:"discount"`
	BillingAddressFields map[string]string `json:"billingAddressFields"`
}

// ckAmounts are the money fields of a checkout, for table comparisons.
type ckAmounts struct{ Amount, Discount, Net, Total int64 }

func (c ckCheckout) amounts() ckAmounts {
	return ckAmounts{c.Amount, c.DiscountAmount, c.NetAmount, c.TotalAmount}
}

const ckCreate = `mutation($in: CheckoutCreateInput!) { createCheckout(input: $in) { ` + ckFields + ` } }`

const ckConfirm = `mutation($in: CheckoutConfirmInput!) { confirmCheckout(input: $in) { ` + ckFields + ` } }`

const ckUpdate = `mutation($in: CheckoutUpdateInput!) { updateCheckout(input: $in) { ` + ckFields + ` } }`

// ckNewCheckout opens a checkout and fails the test if that fails.
func ckNewCheckout(tb testing.TB, s *resolverstest.Server, token string, in vars) ckCheckout {
	tb.Helper()
	var out struct{ CreateCheckout ckCheckout }
	s.Query(tb, token, ckCreate, vars{"in": in}, &out)
	return out.CreateCheckout
}

// ckGet reads a checkout by id.
func ckGet(tb testing.TB, s *resolverstest.Server, token string, id uuid.UUID) ckCheckout {
	tb.Helper()
	var out struct{ Checkout ckCheckout }
	s.Query(tb, token, `query($id: UUID!) { checkout(id: $id) { `+ckFields+` } }`, vars{"id": id}, &out)
	return out.Checkout
}

// ckProduct creates a product with the given prices (and recurrence, when interval is set).
func ckProduct(tb testing.TB, s *resolverstest.Server, token, name, interval string, prices ...vars) product {
	tb.Helper()
	in := vars{"name": name, "prices": prices}
	if interval != "" {
		in["recurringInterval"] = interval
	}
	return createProduct(tb, s, token, in)
}

// ckDiscount creates a discount and returns its id.
func ckDiscount(tb testing.TB, s *resolverstest.Server, token string, in vars) uuid.UUID {
	tb.Helper()
	var out struct{ CreateDiscount struct{ ID uuid.UUID } }
	s.Query(tb, token, `mutation($in: DiscountCreateInput!) { createDiscount(input: $in) { id } }`, vars{"in": in}, &out)
	return out.CreateDiscount.ID
}

// ckCount counts rows of a table matching a condition on one argument.
func ckCount(tb testing.TB, s *resolverstest.Server, query string, arg any) int {
	tb.Helper()
	var n int
	s.Get(tb, &n, query, arg)
	return n
}

// fixedPrice and friends build price inputs.
func ckFixed(amount int) vars { return vars{"amountType": "fixed", "priceAmount": amount} }

func ckCustom(minimum, maximum, preset any) vars {
	return vars{"amountType": "custom", "minimumAmount": minimum, "maximumAmount": maximum, "presetAmount": preset}
}

func ckSeats(tierType string, tiers ...vars) vars {
	st := vars{"tiers": tiers}
	if tierType != "" {
		st["seatTierType"] = tierType
	}
	return vars{"amountType": "seat_based", "seatTiers": st}
}
