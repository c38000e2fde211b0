package storage

import (
	"time"

	"github.com/google/uuid"
)

// The commerce records: what a purchase leaves behind. Each is read and written by its own
// file (orders.go, subscriptions.go, …); they are declared together because the use cases of
// one purchase pass them to each other.

// Order is a bill: created when a checkout succeeds and at every subscription renewal.
type Order struct {
	Rendered
	ID                   uuid.UUID          `db:"id"`
	CreatedAt            time.Time          `db:"created_at"`
	ModifiedAt           *time.Time         `db:"modified_at"`
	OrganizationID       uuid.UUID          `db:"organization_id"`
	CustomerID           uuid.UUID          `db:"customer_id"`
	ProductID            *uuid.UUID         `db:"product_id"`
	DiscountID           *uuid.UUID         `db:"discount_id"`
	SubscriptionID       *uuid.UUID         `db:"subscription_id"`
	CheckoutID           *uuid.UUID         `db:"checkout_id"`
	Status               OrderStatus        `db:"status"`
	BillingReason        OrderBillingReason `db:"billing_reason"`
	Currency             string             `db:"currency"`
	SubtotalAmount       int64              `db:"subtotal_amount"`
	DiscountAmount       int64              `db:"discount_amount"`
	NetAmount            int64              `db:"net_amount"`
	TaxAmount            int64              `db:"tax_amount"`
	TotalAmount          int64              `db:"total_amount"`
	AppliedBalanceAmount int64              `db:"applied_balance_amount"`
	DueAmount            int64              `db:"due_amount"`
	RefundedAmount       int64              `db:"refunded_amount"`
	RefundedTaxAmount    int64              `db:"refunded_tax_amount"`
	PlatformFeeAmount    int64              `db:"platform_fee_amount"`
	PlatformFeeCurrency  *string            `db:"platform_fee_currency"`
	BillingName          *string            `db:"billing_name"`
	BillingAddress       *Address           `db:"billing_address"`
	Description          string             `db:"description"`
	Seats                *int               `db:"seats"`
	InvoiceNumber        *string            `db:"invoice_number"`
	InvoicePath          *string            `db:"invoice_path"`
	InvoiceChecksum      *string            `db:"invoice_checksum"`
	ReceiptNumber        *string            `db:"receipt_number"`
	ReceiptPath          *string            `db:"receipt_path"`
	NextPaymentAttemptAt *time.Time         `db:"next_payment_attempt_at"`
	CustomFieldData      JSONMap            `db:"custom_field_data"`
	Metadata             JSONMap            `db:"metadata"`
}

// OrderItem is one line of an order.
type OrderItem struct {
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	OrderID        uuid.UUID  `db:"order_id"`
	Label          string     `db:"label"`
	Amount         int64      `db:"amount"`
	TaxAmount      int64      `db:"tax_amount"`
	Proration      bool       `db:"proration"`
	ProductPriceID *uuid.UUID `db:"product_price_id"`
}

// Subscription is a recurring purchase of a product.
type Subscription struct {
	Rendered
	ID                          uuid.UUID                   `db:"id"`
	CreatedAt                   time.Time                   `db:"created_at"`
	ModifiedAt                  *time.Time                  `db:"modified_at"`
	OrganizationID              uuid.UUID                   `db:"organization_id"`
	CustomerID                  uuid.UUID                   `db:"customer_id"`
	ProductID                   uuid.UUID                   `db:"product_id"`
	DiscountID                  *uuid.UUID                  `db:"discount_id"`
	CheckoutID                  *uuid.UUID                  `db:"checkout_id"`
	PaymentMethodID             *uuid.UUID                  `db:"payment_method_id"`
	Status                      SubscriptionStatus          `db:"status"`
	Amount                      int64                       `db:"amount"`
	Currency                    string                      `db:"currency"`
	RecurringInterval           Interval                    `db:"recurring_interval"`
	RecurringIntervalCount      int                         `db:"recurring_interval_count"`
	CurrentPeriodStart          time.Time                   `db:"current_period_start"`
	CurrentPeriodEnd            time.Time                   `db:"current_period_end"`
	CurrentMeterPeriodStart     *time.Time                  `db:"current_meter_period_start"`
	CurrentMeterPeriodEnd       *time.Time                  `db:"current_meter_period_end"`
	TrialStart                  *time.Time                  `db:"trial_start"`
	TrialEnd                    *time.Time                  `db:"trial_end"`
	CancelAtPeriodEnd           bool                        `db:"cancel_at_period_end"`
	CanceledAt                  *time.Time                  `db:"canceled_at"`
	StartedAt                   *time.Time                  `db:"started_at"`
	EndsAt                      *time.Time                  `db:"ends_at"`
	EndedAt                     *time.Time                  `db:"ended_at"`
	PastDueAt                   *time.Time                  `db:"past_due_at"`
	PauseAtPeriodEnd            bool                        `db:"pause_at_period_end"`
	PausedAt                    *time.Time                  `db:"paused_at"`
	ResumesAt                   *time.Time                  `db:"resumes_at"`
	Seats                       *int                        `db:"seats"`
	CustomerCancellationReason  *CustomerCancellationReason `db:"customer_cancellation_reason"`
	CustomerCancellationComment *string                     `db:"customer_cancellation_comment"`
	CustomFieldData             JSONMap                     `db:"custom_field_data"`
	Metadata                    JSONMap                     `db:"metadata"`
}

// Discount lowers the price of a checkout and of the orders that follow it.
type Discount struct {
	ID                        uuid.UUID        `db:"id"`
	CreatedAt                 time.Time        `db:"created_at"`
	ModifiedAt                *time.Time       `db:"modified_at"`
	OrganizationID            uuid.UUID        `db:"organization_id"`
	Name                      string           `db:"name"`
	Type                      DiscountType     `db:"type"`
	BasisPoints               *int             `db:"basis_points"`
	Amount                    *int64           `db:"amount"`
	Currency                  *string          `db:"currency"`
	Duration                  DiscountDuration `db:"duration"`
	DurationInMonths          *int             `db:"duration_in_months"`
	Code                      *string          `db:"code"`
	StartsAt                  *time.Time       `db:"starts_at"`
	EndsAt                    *time.Time       `db:"ends_at"`
	MaxRedemptions            *int             `db:"max_redemptions"`
	MaxRedemptionsPerCustomer *int             `db:"max_redemptions_per_customer"`
	RedemptionsCount          int              `db:"redemptions_count"`
	Metadata                  JSONMap          `db:"metadata"`
}

// BenefitGrant records that a customer (or a member holding a seat) holds a benefit because
// of an order or a subscription.
type BenefitGrant struct {
	Rendered
	ID             uuid.UUID  `db:"id"`
	CreatedAt      time.Time  `db:"created_at"`
	ModifiedAt     *time.Time `db:"modified_at"`
	OrganizationID uuid.UUID  `db:"organization_id"`
	BenefitID      uuid.UUID  `db:"benefit_id"`
	CustomerID     uuid.UUID  `db:"customer_id"`
	MemberID       *uuid.UUID `db:"member_id"`
	SubscriptionID *uuid.UUID `db:"subscription_id"`
	OrderID        *uuid.UUID `db:"order_id"`
	GrantedAt      *time.Time `db:"granted_at"`
	RevokedAt      *time.Time `db:"revoked_at"`
	Properties     RawJSON    `db:"properties"`
	Error          RawJSON    `db:"error"`
}

// IsGranted is derived from granted_at, as upstream does.
func (g *BenefitGrant) IsGranted() bool { return g.GrantedAt != nil }

// IsRevoked is derived from revoked_at, as upstream does.
func (g *BenefitGrant) IsRevoked() bool { return g.RevokedAt != nil }

// GetterColumns names the columns each getter reads, so a list that shows only these can
// read only them (see ColumnsOfGetter).
func (*BenefitGrant) GetterColumns() map[string][]string {
	return map[string][]string{"IsGranted": {"granted_at"}, "IsRevoked": {"revoked_at"}}
}

// GetterKinds tells how PostgreSQL writes each getter from its one column (renderValue), so
// a list that shows them can be written by PostgreSQL (see KindOfGetter).
func (*BenefitGrant) GetterKinds() map[string]string {
	return map[string]string{"IsGranted": "present", "IsRevoked": "present"}
}

// LicenseKey is a key issued by a license-key benefit grant.
type LicenseKey struct {
	Rendered
	ID               uuid.UUID        `db:"id"`
	CreatedAt        time.Time        `db:"created_at"`
	ModifiedAt       *time.Time       `db:"modified_at"`
	OrganizationID   uuid.UUID        `db:"organization_id"`
	BenefitID        uuid.UUID        `db:"benefit_id"`
	CustomerID       uuid.UUID        `db:"customer_id"`
	MemberID         *uuid.UUID       `db:"member_id"`
	Key              string           `db:"key"`
	DisplayKey       string           `db:"display_key"`
	Status           LicenseKeyStatus `db:"status"`
	LimitActivations *int             `db:"limit_activations"`
	Usage            int              `db:"usage"`
	LimitUsage       *int             `db:"limit_usage"`
	Validations      int              `db:"validations"`
	LastValidatedAt  *time.Time       `db:"last_validated_at"`
	ExpiresAt        *time.Time       `db:"expires_at"`
}

// CustomerSeat is one seat of a seat-based subscription or order, assigned to a member.
type CustomerSeat struct {
	ID                       uuid.UUID          `db:"id"`
	CreatedAt                time.Time          `db:"created_at"`
	ModifiedAt               *time.Time         `db:"modified_at"`
	OrganizationID           uuid.UUID          `db:"organization_id"`
	SubscriptionID           *uuid.UUID         `db:"subscription_id"`
	OrderID                  *uuid.UUID         `db:"order_id"`
	Status                   CustomerSeatStatus `db:"status"`
	CustomerID               *uuid.UUID         `db:"customer_id"`
	MemberID                 *uuid.UUID         `db:"member_id"`
	Email                    *string            `db:"email"`
	InvitationTokenExpiresAt *time.Time         `db:"invitation_token_expires_at"`
	ClaimedAt                *time.Time         `db:"claimed_at"`
	RevokedAt                *time.Time         `db:"revoked_at"`
	SeatMetadata             RawJSON            `db:"seat_metadata"`
}

// Checkout is a purchase in progress: products and price chosen, a customer being
// identified, then confirmed with a payment and turned into an order.
type Checkout struct {
	ID                       uuid.UUID      `db:"id"`
	CreatedAt                time.Time      `db:"created_at"`
	ModifiedAt               *time.Time     `db:"modified_at"`
	OrganizationID           uuid.UUID      `db:"organization_id"`
	PaymentProcessor         string         `db:"payment_processor"`
	Status                   CheckoutStatus `db:"status"`
	ClientSecret             string         `db:"client_secret"`
	ExpiresAt                time.Time      `db:"expires_at"`
	SuccessURL               string         `db:"success_url"`
	ReturnURL                *string        `db:"return_url"`
	EmbedOrigin              *string        `db:"embed_origin"`
	Currency                 string         `db:"currency"`
	Amount                   int64          `db:"amount"`
	DiscountAmount           int64          `db:"discount_amount"`
	NetAmount                int64          `db:"net_amount"`
	TaxAmount                *int64         `db:"tax_amount"`
	TaxBehavior              *string        `db:"tax_behavior"`
	TotalAmount              int64          `db:"total_amount"`
	Seats                    *int           `db:"seats"`
	MinSeats                 *int           `db:"min_seats"`
	MaxSeats                 *int           `db:"max_seats"`
	AllowTrial               *bool          `db:"allow_trial"`
	TrialInterval            *Interval      `db:"trial_interval"`
	TrialIntervalCount       *int           `db:"trial_interval_count"`
	TrialEnd                 *time.Time     `db:"trial_end"`
	ProductID                *uuid.UUID     `db:"product_id"`
	ProductPriceID           *uuid.UUID     `db:"product_price_id"`
	DiscountID               *uuid.UUID     `db:"discount_id"`
	SubscriptionID           *uuid.UUID     `db:"subscription_id"`
	AllowDiscountCodes       bool           `db:"allow_discount_codes"`
	RequireBillingAddress    bool           `db:"require_billing_address"`
	IsBusinessCustomer       bool           `db:"is_business_customer"`
	CustomerID               *uuid.UUID     `db:"customer_id"`
	ExternalCustomerID       *string        `db:"external_customer_id"`
	CustomerName             *string        `db:"customer_name"`
	CustomerEmail            *string        `db:"customer_email"`
	CustomerIPAddress        *string        `db:"customer_ip_address"`
	CustomerBillingName      *string        `db:"customer_billing_name"`
	CustomerBillingAddress   *Address       `db:"customer_billing_address"`
	CustomerTaxID            *string        `db:"customer_tax_id"`
	Locale                   *string        `db:"locale"`
	PaymentMethodType        *string        `db:"payment_method_type"`
	PaymentProcessorMetadata JSONMap        `db:"payment_processor_metadata"`
	CustomerMetadata         JSONMap        `db:"customer_metadata"`
	CustomFieldData          JSONMap        `db:"custom_field_data"`
	Metadata                 JSONMap        `db:"metadata"`
}
