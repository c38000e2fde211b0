package storage

import (
	"time"

	"github.com/google/uuid"
)

// CheckoutUpdate is a change to a checkout: each set field writes its column, the others
// keep what they hold; a set nil pointer clears the column. The use cases build one from
// the buyer's or seller's changes and the re-computed price, and a new checkout starts from
// one (see CheckoutWrite).
type CheckoutUpdate struct {
	Status                 Omittable[CheckoutStatus]
	SuccessURL             Omittable[string]
	ReturnURL              Omittable[*string]
	EmbedOrigin            Omittable[*string]
	Currency               Omittable[string]
	Amount                 Omittable[int64]
	DiscountAmount         Omittable[int64]
	NetAmount              Omittable[int64]
	TaxAmount              Omittable[int64]
	TotalAmount            Omittable[int64]
	Seats                  Omittable[*int]
	AllowTrial             Omittable[bool]
	TrialInterval          Omittable[*Interval]
	TrialIntervalCount     Omittable[*int]
	TrialEnd               Omittable[*time.Time]
	ProductID              Omittable[uuid.UUID]
	ProductPriceID         Omittable[uuid.UUID]
	DiscountID             Omittable[*uuid.UUID]
	SubscriptionID         Omittable[uuid.UUID]
	AllowDiscountCodes     Omittable[bool]
	RequireBillingAddress  Omittable[bool]
	IsBusinessCustomer     Omittable[bool]
	CustomerID             Omittable[*uuid.UUID]
	CustomerName           Omittable[*string]
	CustomerEmail          Omittable[*string]
	CustomerBillingName    Omittable[*string]
	CustomerBillingAddress Omittable[*Address]
	CustomerTaxID          Omittable[*string]
	Locale                 Omittable[*string]
	PaymentMethodType      Omittable[string]
	CustomerMetadata       Omittable[JSONMap]
	CustomFieldData        Omittable[JSONMap]
	Metadata               Omittable[JSONMap]
}

func (u CheckoutUpdate) assignments() []assignment {
	return []assignment{u.Status.to("status"), u.SuccessURL.to("success_url"), u.ReturnURL.to("return_url"),
		u.EmbedOrigin.to("embed_origin"), u.Currency.to("currency"), u.Amount.to("amount"),
		u.DiscountAmount.to("discount_amount"), u.NetAmount.to("net_amount"), u.TaxAmount.to("tax_amount"),
		u.TotalAmount.to("total_amount"), u.Seats.to("seats"), u.AllowTrial.to("allow_trial"),
		u.TrialInterval.to("trial_interval"), u.TrialIntervalCount.to("trial_interval_count"),
		u.TrialEnd.to("trial_end"), u.ProductID.to("product_id"), u.ProductPriceID.to("product_price_id"),
		u.DiscountID.to("discount_id"), u.SubscriptionID.to("subscription_id"),
		u.AllowDiscountCodes.to("allow_discount_codes"), u.RequireBillingAddress.to("require_billing_address"),
		u.IsBusinessCustomer.to("is_business_customer"), u.CustomerID.to("customer_id"),
		u.CustomerName.to("customer_name"), u.CustomerEmail.to("customer_email"),
		u.CustomerBillingName.to("customer_billing_name"), u.CustomerBillingAddress.to("customer_billing_address"),
		u.CustomerTaxID.to("customer_tax_id"), u.Locale.to("locale"), u.PaymentMethodType.to("payment_method_type"),
		u.CustomerMetadata.to("customer_metadata"), u.CustomFieldData.to("custom_field_data"),
		u.Metadata.to("metadata")}
}

// CheckoutWrite is a new checkout. Every checkout has an organization, a client secret and
// an expiry; the other columns are written when set and otherwise take the table's
// defaults, so a checkout is created with what its use case decided and nothing more.
type CheckoutWrite struct {
	OrganizationID     uuid.UUID
	ClientSecret       string
	ExpiresAt          time.Time
	ID                 Omittable[uuid.UUID]
	PaymentProcessor   Omittable[string]
	MinSeats           Omittable[*int]
	MaxSeats           Omittable[*int]
	ExternalCustomerID Omittable[*string]
	CheckoutUpdate
}

func (w CheckoutWrite) assignments() []assignment {
	return append([]assignment{{column: "organization_id", value: w.OrganizationID, set: true},
		{column: "client_secret", value: w.ClientSecret, set: true}, {column: "expires_at", value: w.ExpiresAt, set: true},
		w.ID.to("id"), w.PaymentProcessor.to("payment_processor"), w.MinSeats.to("min_seats"),
		w.MaxSeats.to("max_seats"), w.ExternalCustomerID.to("external_customer_id")},
		w.CheckoutUpdate.assignments()...)
}
