package resolverstest

import (
	"context"
	"testing"

	"till/storage"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// CustomerFields selects everything tests compare on a customer.
const CustomerFields = `id email emailVerified name externalId type billingName
	billingAddress { line1 line2 postalCode city state country } taxId locale metadata
	organizationId defaultPaymentMethodId deletedAt`

// Customer is a customer as GraphQL shows it: the JSON shape of CustomerFields.
type Customer struct {
	ID                     uuid.UUID      `json:"id"`
	Email                  *string        `json:"email"`
	EmailVerified          bool           `json:"emailVerified"`
	Name                   *string        `json:"name"`
	ExternalID             *string        `json:"externalId"`
	Type                   string         `json:"type"`
	BillingName            *string        `json:"billingName"`
	BillingAddress         *Address       `json:"billingAddress"`
	TaxID                  []string       `json:"taxId"`
	Locale                 *string        `json:"locale"`
	Metadata               map[string]any `json:"metadata"`
	OrganizationID         uuid.UUID      `json:"organizationId"`
	DefaultPaymentMethodID *uuid.UUID     `json:"defaultPaymentMethodId"`
	DeletedAt              *string        `json:"deletedAt"`
}

// Address is a billing address as GraphQL shows it.
type Address struct {
	Line1      *string `json:"line1"`
	Line2      *string `json:"line2"`
	PostalCode *string `json:"postalCode"`
	City       *string `json:"city"`
	State      *string `json:"state"`
	Country    string  `json:"country"`
}

// ProductFields selects everything tests compare on a product.
const ProductFields = `id name description visibility recurringInterval recurringIntervalCount trialInterval
	trialIntervalCount isRecurring isArchived organizationId metadata
	prices { id productId source amountType priceCurrency taxBehavior isArchived priceAmount minimumAmount
		maximumAmount presetAmount seatTiers { seatTierType tiers { minSeats maxSeats pricePerSeat } minimumSeats maximumSeats }
		unitAmount capAmount meterId }
	benefits { id type description }`

// Product is a product as GraphQL shows it: the JSON shape of ProductFields.
type Product struct {
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
	Prices                 []Price           `json:"prices"`
	Benefits               []struct {
		ID          uuid.UUID `json:"id"`
		Type        string    `json:"type"`
		Description string    `json:"description"`
	} `json:"benefits"`
}

// BenefitIDs lists the product's benefits in the order GraphQL gives them; never nil, so
// none compares equal to an empty want.
func (p Product) BenefitIDs() []uuid.UUID {
	out := []uuid.UUID{}
	for _, b := range p.Benefits {
		out = append(out, b.ID)
	}
	return out
}

// Price is a product price as GraphQL shows it.
type Price struct {
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

// NewProduct creates a one-time product of orgID with a fixed price of 1000 and the given
// benefits, through createProduct.
func (a *App) NewProduct(tb testing.TB, orgID uuid.UUID, name string, benefitIDs ...uuid.UUID) Product {
	tb.Helper()
	if benefitIDs == nil {
		benefitIDs = []uuid.UUID{}
	}
	var out struct{ CreateProduct Product }
	a.Run(tb, orgID, `mutation($input: ProductCreateInput!) { createProduct(input: $input) { `+ProductFields+` } }`,
		Vars{"input": Vars{"name": name, "benefitIds": benefitIDs, "prices": []Vars{{"amountType": "fixed", "priceAmount": 1000}}}}, &out)
	return out.CreateProduct
}

// StoreProduct stores a product of orgID with its prices, in the order given (in usd when a
// price names no currency), and its benefits, through the storage functions the product use
// case runs, on q: the pool, or the transaction of a seed that builds many. It is for
// catalogs a test needs as storage records or in bulk; NewProduct makes one as a seller does.
func StoreProduct(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, w storage.ProductWrite,
	prices []storage.ProductPriceWrite, benefitIDs ...uuid.UUID) (*storage.Product, []*storage.ProductPrice, error) {
	p, err := storage.CreateProduct(ctx, q, orgID, w)
	if err != nil {
		return nil, nil, err
	}
	stored := make([]*storage.ProductPrice, 0, len(prices))
	for _, pw := range prices {
		if pw.PriceCurrency == "" {
			pw.PriceCurrency = "usd"
		}
		pr, err := storage.CreatePrice(ctx, q, orgID, p.ID, pw)
		if err != nil {
			return nil, nil, err
		}
		stored = append(stored, pr)
	}
	if len(benefitIDs) > 0 {
		if err := storage.SetProductBenefits(ctx, q, orgID, p.ID, benefitIDs); err != nil {
			return nil, nil, err
		}
	}
	return p, stored, nil
}
