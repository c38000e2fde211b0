package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// stripeKeyPrefixes are the kinds of Stripe API key Till accepts: secret keys of either
// mode, and restricted keys (rk_test_…, rk_live_…) for operators who grant Till only
// what it calls. A publishable key (pk_…) or a webhook secret in the wrong variable is
// refused before anything starts, rather than at the first payment.
var stripeKeyPrefixes = []string{"sk_test_", "sk_live_", "rk_"}

// checkPaymentProcessor refuses a processor Till does not have, and Stripe without both
// of its secrets or with something other than an API key. Messages name variables, never
// their values.
func (c config) checkPaymentProcessor() error {
	switch c.PaymentProcessor {
	case "test":
		return nil
	case "stripe":
		var missing []string
		if c.StripeSecretKey == "" {
			missing = append(missing, "STRIPE_SECRET_KEY")
		}
		if c.StripeWebhookSecret == "" {
			missing = append(missing, "STRIPE_WEBHOOK_SECRET")
		}
		if len(missing) > 0 {
			return fmt.Errorf("TILL_PAYMENT_PROCESSOR=stripe needs %s", strings.Join(missing, " and "))
		}
		if u, err := url.Parse(c.StripeAPIURL); c.StripeAPIURL != "" && (err != nil || u.Host == "" ||
			(u.Scheme != "http" && u.Scheme != "https")) {
			return errors.New("STRIPE_API_URL is not an http(s) URL")
		}
		for _, prefix := range stripeKeyPrefixes {
			if strings.HasPrefix(c.StripeSecretKey, prefix) {
				return nil
			}
		}
		return errors.New("STRIPE_SECRET_KEY is not a Stripe secret key: it must start with sk_test_, sk_live_ or rk_")
	default:
		return fmt.Errorf("TILL_PAYMENT_PROCESSOR %q is not a payment processor Till has; use test or stripe", c.PaymentProcessor)
	}
}

// paymentSummary is what the printed configuration says of payments: the processor and,
// for Stripe, whether its key moves real money, read from the key's prefix, and the API it
// talks to when that is not Stripe's own.
func (c config) paymentSummary() string {
	if c.PaymentProcessor != "stripe" {
		return c.PaymentProcessor
	}
	mode := "mode unknown"
	switch {
	case strings.HasPrefix(c.StripeSecretKey, "sk_live_") || strings.HasPrefix(c.StripeSecretKey, "rk_live_"):
		mode = "live mode"
	case strings.HasPrefix(c.StripeSecretKey, "sk_test_") || strings.HasPrefix(c.StripeSecretKey, "rk_test_"):
		mode = "test mode"
	}
	if c.StripeAPIURL != "" {
		mode += ", API at " + c.StripeAPIURL
	}
	return "stripe (" + mode + ")"
}
