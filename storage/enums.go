package storage

// The GraphQL enums whose values records hold. Each is a named string type whose values are
// the wire values (the column text, the GraphQL enum value, the /v1 and webhook string), so
// records carry them as they are read and gqlgen binds the schema's enum of the same name to
// the type (autobind), writing and reading it as the string it is. The constants are the only
// spelling of these values in Go; a test holds them equal to the schema. Enums that no record
// holds are generated with the GraphQL models (graph/model).

// BenefitType is the GraphQL enum of that name. What a benefit gives. Till issues license keys
// and download access, credits meters, and records grants of the others without calling their
// services.
type BenefitType string

// The values of BenefitType.
const (
	// Anything the seller delivers: a note is shown to holders.
	BenefitTypeCustom BenefitType = "custom"
	// A Discord server role; Till records grants without calling Discord.
	BenefitTypeDiscord BenefitType = "discord"
	// Access to a GitHub repository; Till records grants without calling GitHub.
	BenefitTypeGithubRepository BenefitType = "github_repository"
	// Files holders can download (Me.downloadables).
	BenefitTypeDownloadables BenefitType = "downloadables"
	// A license key issued to each holder.
	BenefitTypeLicenseKeys BenefitType = "license_keys"
	// Units credited to a meter, deducted from the holder's metered usage.
	BenefitTypeMeterCredit BenefitType = "meter_credit"
	// A flag an application checks; Till records the grants.
	BenefitTypeFeatureFlag BenefitType = "feature_flag"
	// A shared Slack channel; Till records grants without calling Slack.
	BenefitTypeSlackSharedChannel BenefitType = "slack_shared_channel"
)

// BenefitVisibility is the GraphQL enum of that name. Whether the customer portal may show a
// benefit.
type BenefitVisibility string

// The values of BenefitVisibility.
const (
	// Shown to its holders (the default).
	BenefitVisibilityPublic BenefitVisibility = "public"
	// Hidden from its holders.
	BenefitVisibilityPrivate BenefitVisibility = "private"
)

// CustomerType is the GraphQL enum of that name. Whether a customer is a person or a team (the
// contract's CustomerIndividual and CustomerTeam).
type CustomerType string

// The values of CustomerType.
const (
	// A person; needs an email.
	CustomerTypeIndividual CustomerType = "individual"
	// A team whose members share its purchases; email is optional.
	CustomerTypeTeam CustomerType = "team"
)

// ProcessorMode is the GraphQL enum of that name. Which payment processor an organization's
// payments run against.
type ProcessorMode string

// The values of ProcessorMode.
const (
	// Till's built-in test processor: no money moves, test cards decide the outcome, and the test
	// clock can be advanced.
	ProcessorModeTest ProcessorMode = "test"
	// The configured live processor: real charges.
	ProcessorModeLive ProcessorMode = "live"
)

// Interval is the GraphQL enum of that name. A calendar unit of time for billing periods and
// trials.
type Interval string

// The values of Interval.
const (
	// A day.
	IntervalDay Interval = "day"
	// A week.
	IntervalWeek Interval = "week"
	// A calendar month.
	IntervalMonth Interval = "month"
	// A calendar year.
	IntervalYear Interval = "year"
)

// ProductVisibility is the GraphQL enum of that name. Who can buy a product.
type ProductVisibility string

// The values of ProductVisibility.
const (
	// Being prepared: not for sale.
	ProductVisibilityDraft ProductVisibility = "draft"
	// For sale through checkouts the organization creates, not listed publicly.
	ProductVisibilityPrivate ProductVisibility = "private"
	// For sale and listed publicly.
	ProductVisibilityPublic ProductVisibility = "public"
)

// AmountType is the GraphQL enum of that name. How a price sets the amount charged.
type AmountType string

// The values of AmountType.
const (
	// A fixed amount (priceAmount).
	AmountTypeFixed AmountType = "fixed"
	// An amount the customer chooses (pay what you want), within minimumAmount and maximumAmount.
	AmountTypeCustom AmountType = "custom"
	// Free.
	AmountTypeFree AmountType = "free"
	// A price per seat, by tiers of seat counts (seatTiers).
	AmountTypeSeatBased AmountType = "seat_based"
	// A price per unit of a meter's quantity (unitAmount, meterId), billed at the end of each meter
	// period.
	AmountTypeMeteredUnit AmountType = "metered_unit"
)

// OrderStatus is the GraphQL enum of that name. Where an order is in its life.
type OrderStatus string

// The values of OrderStatus.
const (
	// Being prepared: no invoice number yet, not charged.
	OrderStatusDraft OrderStatus = "draft"
	// Waiting for payment.
	OrderStatusPending OrderStatus = "pending"
	// Paid in full.
	OrderStatusPaid OrderStatus = "paid"
	// Refunded in full.
	OrderStatusRefunded OrderStatus = "refunded"
	// Partly refunded.
	OrderStatusPartiallyRefunded OrderStatus = "partially_refunded"
	// Cancelled without payment; it will never be paid.
	OrderStatusVoid OrderStatus = "void"
)

// OrderBillingReason is the GraphQL enum of that name. Why an order was created.
type OrderBillingReason string

// The values of OrderBillingReason.
const (
	// A one-time purchase.
	OrderBillingReasonPurchase OrderBillingReason = "purchase"
	// The first payment of a new subscription.
	OrderBillingReasonSubscriptionCreate OrderBillingReason = "subscription_create"
	// A subscription's renewal.
	OrderBillingReasonSubscriptionCycle OrderBillingReason = "subscription_cycle"
	// A change of a subscription's product or seats.
	OrderBillingReasonSubscriptionUpdate OrderBillingReason = "subscription_update"
	// The end of a meter period of a product whose meter interval differs from its billing
	// interval.
	OrderBillingReasonSubscriptionMeterCycle OrderBillingReason = "subscription_meter_cycle"
)

// SubscriptionStatus is the GraphQL enum of that name. Where a subscription is in its life.
type SubscriptionStatus string

// The values of SubscriptionStatus.
const (
	// Created, waiting for its first payment.
	SubscriptionStatusIncomplete SubscriptionStatus = "incomplete"
	// Its first payment never came; it will not start.
	SubscriptionStatusIncompleteExpired SubscriptionStatus = "incomplete_expired"
	// In its free trial.
	SubscriptionStatusTrialing SubscriptionStatus = "trialing"
	// Running and paid.
	SubscriptionStatusActive SubscriptionStatus = "active"
	// A renewal payment failed and is being retried (after 2, 4 and 7 days); benefits stay.
	SubscriptionStatusPastDue SubscriptionStatus = "past_due"
	// Ended, by cancellation or revocation.
	SubscriptionStatusCanceled SubscriptionStatus = "canceled"
	// Ended because every retry of a renewal payment failed; benefits revoked.
	SubscriptionStatusUnpaid SubscriptionStatus = "unpaid"
	// Paused: not billed, benefits revoked until resumed.
	SubscriptionStatusPaused SubscriptionStatus = "paused"
)

// CustomerCancellationReason is the GraphQL enum of that name. Why a customer canceled, as the
// portal asks.
type CustomerCancellationReason string

// The values of CustomerCancellationReason.
const (
	// Unhappy with customer service.
	CustomerCancellationReasonCustomerService CustomerCancellationReason = "customer_service"
	// Quality was too low.
	CustomerCancellationReasonLowQuality CustomerCancellationReason = "low_quality"
	// Features were missing.
	CustomerCancellationReasonMissingFeatures CustomerCancellationReason = "missing_features"
	// Switched to another service.
	CustomerCancellationReasonSwitchedService CustomerCancellationReason = "switched_service"
	// Too complex to use.
	CustomerCancellationReasonTooComplex CustomerCancellationReason = "too_complex"
	// Too expensive.
	CustomerCancellationReasonTooExpensive CustomerCancellationReason = "too_expensive"
	// Not used enough.
	CustomerCancellationReasonUnused CustomerCancellationReason = "unused"
	// Another reason (see the comment).
	CustomerCancellationReasonOther CustomerCancellationReason = "other"
)

// CheckoutStatus is the GraphQL enum of that name. Where a checkout is in its life.
type CheckoutStatus string

// The values of CheckoutStatus.
const (
	// Waiting for the buyer; it can change and be confirmed.
	CheckoutStatusOpen CheckoutStatus = "open"
	// Open past expiresAt: it can no longer change or be confirmed.
	CheckoutStatusExpired CheckoutStatus = "expired"
	// The buyer confirmed; the payment is under way.
	CheckoutStatusConfirmed CheckoutStatus = "confirmed"
	// Paid (or started free or in trial): the order or subscription exists.
	CheckoutStatusSucceeded CheckoutStatus = "succeeded"
	// The payment was declined.
	CheckoutStatusFailed CheckoutStatus = "failed"
)

// DiscountType is the GraphQL enum of that name. How a discount reduces a price.
type DiscountType string

// The values of DiscountType.
const (
	// Takes off an amount in one currency, never more than the price.
	DiscountTypeFixed DiscountType = "fixed"
	// Takes off a percentage, rounded half up.
	DiscountTypePercentage DiscountType = "percentage"
)

// DiscountDuration is the GraphQL enum of that name. How many payments a discount reduces.
type DiscountDuration string

// The values of DiscountDuration.
const (
	// The first payment only.
	DiscountDurationOnce DiscountDuration = "once"
	// Every payment of the purchase.
	DiscountDurationForever DiscountDuration = "forever"
	// The payments of durationInMonths months; only for recurring products.
	DiscountDurationRepeating DiscountDuration = "repeating"
)

// LicenseKeyStatus is the GraphQL enum of that name. Whether a key is in force.
type LicenseKeyStatus string

// The values of LicenseKeyStatus.
const (
	// In force: the key validates and activates.
	LicenseKeyStatusGranted LicenseKeyStatus = "granted"
	// Taken back with its benefit grant (the subscription ended, or the seller revoked it).
	LicenseKeyStatusRevoked LicenseKeyStatus = "revoked"
	// Turned off by the seller; the grant stays.
	LicenseKeyStatusDisabled LicenseKeyStatus = "disabled"
)

// LicenseKeyValidationCode is the GraphQL enum of that name. Why a validation failed, or valid.
type LicenseKeyValidationCode string

// The values of LicenseKeyValidationCode.
const (
	// The key (and activation, benefit, customer named) is in force.
	LicenseKeyValidationCodeValid LicenseKeyValidationCode = "valid"
	// No live key with this text in the organization (or in one the caller may see).
	LicenseKeyValidationCodeNotFound LicenseKeyValidationCode = "not_found"
	// The key was revoked.
	LicenseKeyValidationCodeRevoked LicenseKeyValidationCode = "revoked"
	// The key was disabled by the seller.
	LicenseKeyValidationCodeDisabled LicenseKeyValidationCode = "disabled"
	// The key's expiresAt has passed.
	LicenseKeyValidationCodeExpired LicenseKeyValidationCode = "expired"
	// The activation does not exist, is another key's, or was deactivated.
	LicenseKeyValidationCodeActivationNotFound LicenseKeyValidationCode = "activation_not_found"
	// The activation has conditions and the request's differ from them.
	LicenseKeyValidationCodeConditionsMismatch LicenseKeyValidationCode = "conditions_mismatch"
	// The key was issued by another benefit than benefitId.
	LicenseKeyValidationCodeBenefitMismatch LicenseKeyValidationCode = "benefit_mismatch"
	// The key belongs to another customer than customerId.
	LicenseKeyValidationCodeCustomerMismatch LicenseKeyValidationCode = "customer_mismatch"
	// increment_usage would take usage past limit_usage.
	LicenseKeyValidationCodeUsageLimitExceeded LicenseKeyValidationCode = "usage_limit_exceeded"
)

// CustomerSeatStatus is the GraphQL enum of that name. Where a seat is in its life.
type CustomerSeatStatus string

// The values of CustomerSeatStatus.
const (
	// Assigned to an email, waiting to be claimed with its token.
	CustomerSeatStatusPending CustomerSeatStatus = "pending"
	// Claimed: its holder is a member of the buying customer with the product's benefits.
	CustomerSeatStatusClaimed CustomerSeatStatus = "claimed"
	// Revoked: its holder lost the benefits; the seat counts as available again.
	CustomerSeatStatusRevoked CustomerSeatStatus = "revoked"
)

// MemberRole is the GraphQL enum of that name. What a member of a customer may do: the owner
// and billing managers use the billing features and manage the team, members use what the
// customer bought.
type MemberRole string

// The values of MemberRole.
const (
	// The customer's one owner: billing features, team management, ownership transfer.
	MemberRoleOwner MemberRole = "owner"
	// Billing features and team management beside the owner.
	MemberRoleBillingManager MemberRole = "billing_manager"
	// Uses the benefits of its seat; no billing features.
	MemberRoleMember MemberRole = "member"
)

// FileService is the GraphQL enum of that name. What a file is for. It decides the rules at
// creation (product media and avatars are images of at most 10 MB and 1 MB) and which variant
// of File it is read as.
type FileService string

// The values of FileService.
const (
	// A file offered by downloadables benefits; any type and size.
	FileServiceDownloadable FileService = "downloadable"
	// An image shown with products: JPEG, PNG, GIF, WebP or SVG, at most 10 MB; public.
	FileServiceProductMedia FileService = "product_media"
	// The organization's avatar: JPEG, PNG, GIF, WebP or SVG, at most 1 MB; public.
	FileServiceOrganizationAvatar FileService = "organization_avatar"
	// A file attached to a support case: images, videos, PDF, text and office documents, at most
	// 250 MB; private.
	FileServiceSupportCaseAttachment FileService = "support_case_attachment"
)

// RefundStatus is the GraphQL enum of that name. Where a refund is at the processor.
type RefundStatus string

// The values of RefundStatus.
const (
	// Accepted by the processor, not settled yet.
	RefundStatusPending RefundStatus = "pending"
	// Given back to the customer.
	RefundStatusSucceeded RefundStatus = "succeeded"
	// Refused by the processor after it was accepted.
	RefundStatusFailed RefundStatus = "failed"
	// Canceled before it settled.
	RefundStatusCanceled RefundStatus = "canceled"
)

// RefundReason is the GraphQL enum of that name. Why a refund was made.
type RefundReason string

// The values of RefundReason.
const (
	// The customer was charged twice.
	RefundReasonDuplicate RefundReason = "duplicate"
	// The payment was fraudulent.
	RefundReasonFraudulent RefundReason = "fraudulent"
	// The customer asked for it.
	RefundReasonCustomerRequest RefundReason = "customer_request"
	// The service was interrupted.
	RefundReasonServiceDisruption RefundReason = "service_disruption"
	// The seller's satisfaction guarantee.
	RefundReasonSatisfactionGuarantee RefundReason = "satisfaction_guarantee"
	// Issued to prevent a dispute; only the system gives this reason, never a caller.
	RefundReasonDisputePrevention RefundReason = "dispute_prevention"
	// Any other reason.
	RefundReasonOther RefundReason = "other"
)

// DisputeStatus is the GraphQL enum of that name. Where a chargeback stands at the card
// network, as upstream names it.
type DisputeStatus string

// The values of DisputeStatus.
const (
	// A refund was issued before the dispute was escalated, avoiding its fees.
	DisputeStatusPrevented DisputeStatus = "prevented"
	// An alert announced a dispute that was not opened yet.
	DisputeStatusEarlyWarning DisputeStatus = "early_warning"
	// The seller may answer with evidence or accept the dispute.
	DisputeStatusNeedsResponse DisputeStatus = "needs_response"
	// The card network is reviewing the evidence.
	DisputeStatusUnderReview DisputeStatus = "under_review"
	// Settled for the customer.
	DisputeStatusLost DisputeStatus = "lost"
	// Settled for the seller.
	DisputeStatusWon DisputeStatus = "won"
)

// AuditActorKind is the GraphQL enum of that name. Who made a change the audit log records:
// the kind of the request's principal, or the system for background work.
type AuditActorKind string

// The values of AuditActorKind.
const (
	// Background work (jobs, renewals, processor events): no request made the change.
	AuditActorKindSystem AuditActorKind = "system"
	// An organization access token.
	AuditActorKindOrganization AuditActorKind = "organization"
	// A user, through a personal access token or an OAuth2 access token.
	AuditActorKindUser AuditActorKind = "user"
	// A customer portal session.
	AuditActorKindCustomerSession AuditActorKind = "customer_session"
	// A member portal session.
	AuditActorKindMemberSession AuditActorKind = "member_session"
	// A request without a token: a public operation (confirming a checkout, claiming a seat).
	AuditActorKindAnonymous AuditActorKind = "anonymous"
)

// AuditAction is the GraphQL enum of that name. What a change did to its object.
type AuditAction string

// The values of AuditAction.
const (
	// The object was created.
	AuditActionCreate AuditAction = "create"
	// Some of the object's fields changed.
	AuditActionUpdate AuditAction = "update"
	// The object was deleted, or soft-deleted (its deletedAt set).
	AuditActionDelete AuditAction = "delete"
)
