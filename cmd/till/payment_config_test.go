package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestPaymentProcessorIsChosenByConfiguration: the built-in test processor runs unless
// configured otherwise; Stripe runs with both its secrets and an API key, and the printed
// configuration says which processor runs and in which mode but never a secret; anything
// else is refused before anything starts, naming the variable at fault.
func TestPaymentProcessorIsChosenByConfiguration(t *testing.T) {
	const (
		testKey = "sk_test_51Hsecret"
		hook    = "whsec_signing"
	)
	tests := []struct {
		name    string
		vars    map[string]string
		printed string // what TILL_PAYMENT_PROCESSOR= prints
		refusal string
	}{
		{name: "the test processor runs by default", printed: "test"},
		{name: "the test processor may be named", vars: map[string]string{"TILL_PAYMENT_PROCESSOR": "test"}, printed: "test"},
		{name: "stripe runs in test mode with a test key",
			vars:    map[string]string{"TILL_PAYMENT_PROCESSOR": "stripe", "STRIPE_SECRET_KEY": testKey, "STRIPE_WEBHOOK_SECRET": hook},
			printed: "stripe (test mode)"},
		{name: "stripe runs in live mode with a live key",
			vars:    map[string]string{"TILL_PAYMENT_PROCESSOR": "stripe", "STRIPE_SECRET_KEY": "sk_live_51Hsecret", "STRIPE_WEBHOOK_SECRET": hook},
			printed: "stripe (live mode)"},
		{name: "stripe runs with a restricted key",
			vars:    map[string]string{"TILL_PAYMENT_PROCESSOR": "stripe", "STRIPE_SECRET_KEY": "rk_live_51Hsecret", "STRIPE_WEBHOOK_SECRET": hook},
			printed: "stripe (live mode)"},
		{name: "stripe may talk to stripe-mock",
			vars: map[string]string{"TILL_PAYMENT_PROCESSOR": "stripe", "STRIPE_SECRET_KEY": testKey, "STRIPE_WEBHOOK_SECRET": hook,
				"STRIPE_API_URL": "http://127.0.0.1:12111"},
			printed: "stripe (test mode, API at http://127.0.0.1:12111)"},
		{name: "an API URL that is no URL is refused",
			vars: map[string]string{"TILL_PAYMENT_PROCESSOR": "stripe", "STRIPE_SECRET_KEY": testKey, "STRIPE_WEBHOOK_SECRET": hook,
				"STRIPE_API_URL": "127.0.0.1:12111"},
			refusal: "STRIPE_API_URL is not an http(s) URL"},
		{name: "stripe without a secret key is refused",
			vars:    map[string]string{"TILL_PAYMENT_PROCESSOR": "stripe", "STRIPE_WEBHOOK_SECRET": hook},
			refusal: "TILL_PAYMENT_PROCESSOR=stripe needs STRIPE_SECRET_KEY"},
		{name: "stripe without a webhook secret is refused",
			vars:    map[string]string{"TILL_PAYMENT_PROCESSOR": "stripe", "STRIPE_SECRET_KEY": testKey},
			refusal: "TILL_PAYMENT_PROCESSOR=stripe needs STRIPE_WEBHOOK_SECRET"},
		{name: "stripe without either secret is refused naming both",
			vars:    map[string]string{"TILL_PAYMENT_PROCESSOR": "stripe"},
			refusal: "needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET"},
		{name: "a publishable key is refused without being repeated",
			vars:    map[string]string{"TILL_PAYMENT_PROCESSOR": "stripe", "STRIPE_SECRET_KEY": "pk_test_51Hpublic", "STRIPE_WEBHOOK_SECRET": hook},
			refusal: "STRIPE_SECRET_KEY is not a Stripe secret key"},
		{name: "an unknown processor is refused", vars: map[string]string{"TILL_PAYMENT_PROCESSOR": "paypal"},
			refusal: `TILL_PAYMENT_PROCESSOR "paypal"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(getenvOf(tt.vars))
			if tt.refusal != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refusal) {
					t.Fatalf("err = %v, want a refusal saying %s", err, tt.refusal)
				}
				if key := tt.vars["STRIPE_SECRET_KEY"]; key != "" && strings.Contains(err.Error(), key) {
					t.Errorf("the refusal repeats the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var printed strings.Builder
			cfg.print(&printed)
			out := printed.String()
			if !strings.Contains(out, "TILL_PAYMENT_PROCESSOR="+tt.printed+"\n") {
				t.Errorf("printed:\n%s\nwant TILL_PAYMENT_PROCESSOR=%s", out, tt.printed)
			}
			for _, secret := range []string{tt.vars["STRIPE_SECRET_KEY"], tt.vars["STRIPE_WEBHOOK_SECRET"]} {
				if secret != "" && strings.Contains(out, secret) {
					t.Errorf("printed a secret:\n%s", out)
				}
			}
			p, err := paymentProcessor(cfg, &database{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"test": "*payment.TestProcessor", "stripe": "*payment.StripeProcessor"}[cfg.PaymentProcessor]
			if got := fmt.Sprintf("%T", p); got != want {
				t.Errorf("processor %s, want %s", got, want)
			}
		})
	}
}
