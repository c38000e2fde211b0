package main

import (
	"strings"
	"testing"
)

// TestPaymentProcessorIsChosenByConfiguration: the built-in test processor runs unless
// configured otherwise, the choice is printed with the configuration, and a processor Till
// does not have is refused before anything starts.
func TestPaymentProcessorIsChosenByConfiguration(t *testing.T) {
	tests := []struct {
		name, value, want, refusal string
	}{
		{name: "the test processor runs by default", want: "test"},
		{name: "the test processor may be named", value: "test", want: "test"},
		{name: "an unknown processor is refused", value: "paypal", refusal: `TILL_PAYMENT_PROCESSOR "paypal"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{}
			if tt.value != "" {
				vars["TILL_PAYMENT_PROCESSOR"] = tt.value
			}
			cfg, err := loadConfig(getenvOf(vars))
			if tt.refusal != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refusal) {
					t.Fatalf("err = %v, want a refusal naming %s", err, tt.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var printed strings.Builder
			cfg.print(&printed)
			if cfg.PaymentProcessor != tt.want || !strings.Contains(printed.String(), "TILL_PAYMENT_PROCESSOR="+tt.want+"\n") {
				t.Errorf("processor %q, printed:\n%s", cfg.PaymentProcessor, printed.String())
			}
		})
	}
}
