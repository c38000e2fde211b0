package resolverstest

// OrderPage is the dashboard's order page: an order with every field of it and of its
// customer, product, discount, subscription and lines, what GET /v1/orders/{id} renders. The
// bench measures it against its ceiling and resolvers' statement tests pin its cost, so both
// speak of the same document.
const OrderPage = `query Order($id: UUID!) {
  order(id: $id) {
    id createdAt modifiedAt status paid subtotalAmount discountAmount netAmount taxAmount totalAmount
    appliedBalanceAmount dueAmount refundedAmount refundedTaxAmount currency billingReason billingName
    billingAddress { line1 line2 postalCode city state country } invoiceNumber isInvoiceGenerated
    receiptNumber seats customerId productId discountId subscriptionId checkoutId nextPaymentAttemptAt
    metadata customFieldData platformFeeAmount platformFeeCurrency description refundableAmount refundableTaxAmount
    customer { id createdAt modifiedAt metadata externalId email emailVerified type name billingName
      billingAddress { line1 line2 postalCode city state country } taxId locale organizationId
      defaultPaymentMethodId deletedAt firstUserEventAt avatarUrl }
    product { id createdAt modifiedAt trialInterval trialIntervalCount name description visibility
      recurringInterval recurringIntervalCount meterInterval meterIntervalCount isRecurring isArchived
      organizationId metadata }
    discount { __typename
      ... on DiscountPercentageOnceForeverDurationBase { id duration type basisPoints createdAt modifiedAt
        metadata name code startsAt endsAt maxRedemptions maxRedemptionsPerCustomer redemptionsCount organizationId } }
    subscription { id createdAt modifiedAt amount currency recurringInterval recurringIntervalCount status
      currentPeriodStart currentPeriodEnd currentMeterPeriodStart currentMeterPeriodEnd trialStart trialEnd
      cancelAtPeriodEnd canceledAt startedAt endsAt endedAt pastDueAt pauseAtPeriodEnd pausedAt resumesAt
      customerId productId discountId checkoutId seats customerCancellationReason customerCancellationComment metadata }
    items { id createdAt modifiedAt label amount taxAmount proration productPriceId }
  }
}`
