package auth

// DisplayName is how a consent screen names the scope: upstream's wording, which the
// authorization endpoint sends as scope_display_names so a dashboard shows the user what
// they grant in the words upstream's own screen uses. A scope without one (a reserved
// scope, an unknown name) is its own name.
func (s Scope) DisplayName() string {
	if name, ok := scopeDisplayNames[s]; ok {
		return name
	}
	return string(s)
}

// scopeDisplayNames is the constant table behind [Scope.DisplayName]: one entry for every
// scope of [AllScopes], a test checks.
var scopeDisplayNames = map[Scope]string{
	ScopeOpenID:                        "OpenID",
	ScopeProfile:                       "Read your profile",
	ScopeEmail:                         "Read your email address",
	ScopeUserRead:                      "Read your user account",
	ScopeUserWrite:                     "Manage your user account",
	ScopeOrganizationsRead:             "Read your organizations",
	ScopeOrganizationsWrite:            "Create or modify organizations",
	ScopeCustomFieldsRead:              "Read custom fields",
	ScopeCustomFieldsWrite:             "Create or modify custom fields",
	ScopeDiscountsRead:                 "Read discounts",
	ScopeDiscountsWrite:                "Create or modify discounts",
	ScopeCheckoutLinksRead:             "Read checkout links",
	ScopeCheckoutLinksWrite:            "Create or modify checkout links",
	ScopeCheckoutsRead:                 "Read checkout sessions",
	ScopeCheckoutsWrite:                "Create or modify checkout sessions",
	ScopeTransactionsRead:              "Read transactions",
	ScopeTransactionsWrite:             "Create or modify transactions",
	ScopePayoutsRead:                   "Read payouts",
	ScopePayoutsWrite:                  "Create or modify payouts",
	ScopeProductsRead:                  "Read products",
	ScopeProductsWrite:                 "Create or modify products",
	ScopeBenefitsRead:                  "Read benefits",
	ScopeBenefitsWrite:                 "Create or modify benefits",
	ScopeEventsRead:                    "Read events",
	ScopeEventsWrite:                   "Create events",
	ScopeMetersRead:                    "Read meters",
	ScopeMetersWrite:                   "Create or modify meters",
	ScopeFilesRead:                     "Read file uploads",
	ScopeFilesWrite:                    "Create or modify file uploads",
	ScopeSubscriptionsRead:             "Read subscriptions made on your organizations",
	ScopeSubscriptionsWrite:            "Create or modify subscriptions made on your organizations",
	ScopeCustomersRead:                 "Read customers",
	ScopeCustomersWrite:                "Create or modify customers",
	ScopeMembersRead:                   "Read members",
	ScopeMembersWrite:                  "Create or modify members",
	ScopeWalletsRead:                   "Read wallets",
	ScopeWalletsWrite:                  "Create or modify wallets",
	ScopeDisputesRead:                  "Read disputes",
	ScopeDisputesWrite:                 "Create or modify disputes",
	ScopeCustomerMetersRead:            "Read customer meters",
	ScopeCustomerSessionsWrite:         "Create or modify customer sessions",
	ScopeMemberSessionsWrite:           "Create or modify member sessions",
	ScopeCustomerSeatsRead:             "Read customer seats",
	ScopeCustomerSeatsWrite:            "Create or modify customer seats",
	ScopeOrdersRead:                    "Read orders made on your organizations",
	ScopeOrdersWrite:                   "Modify orders made on your organizations",
	ScopeRefundsRead:                   "Read refunds made on your organizations",
	ScopeRefundsWrite:                  "Create or modify refunds",
	ScopePaymentsRead:                  "Read payments made on your organizations",
	ScopeMetricsRead:                   "Read metrics",
	ScopeMetricsWrite:                  "Create or modify metric definitions",
	ScopeWebhooksRead:                  "Read webhooks",
	ScopeWebhooksWrite:                 "Create or modify webhooks",
	ScopeLicenseKeysRead:               "Read license keys",
	ScopeLicenseKeysWrite:              "Modify license keys",
	ScopeCustomerPortalRead:            "Read your orders, subscriptions and benefits",
	ScopeCustomerPortalWrite:           "Create or modify your orders, subscriptions and benefits",
	ScopeNotificationsRead:             "Read notifications",
	ScopeNotificationsWrite:            "Mark notifications as read",
	ScopeNotificationRecipientsRead:    "Read notification recipients",
	ScopeNotificationRecipientsWrite:   "Create or modify notification recipients",
	ScopeOrganizationAccessTokensRead:  "Read organization access tokens",
	ScopeOrganizationAccessTokensWrite: "Create or modify organization access tokens",
}
