package webhook_test

import (
	"strings"
	"testing"

	"till/internal/auth"
	"till/internal/webhook"
)

func TestNewSecretHasUpstreamsFormat(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		s := webhook.NewSecret()
		if !strings.HasPrefix(s, "whsec_") || len(s) != len("whsec_")+43 {
			t.Fatalf("secret %q: want whsec_ and 43 characters", s)
		}
		if strings.Trim(s[len("whsec_"):], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
			t.Errorf("secret %q has characters outside [A-Za-z0-9]", s)
		}
		if !auth.ChecksumValid(s) {
			t.Errorf("secret %q: checksum does not verify", s)
		}
		if seen[s] {
			t.Fatalf("secret %q issued twice", s)
		}
		seen[s] = true
	}
}
