package webhook_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"till/internal/webhook"
)

// Secrets as upstream issues them ("whsec_" + 37 alphanumerics + a
// 6-character checksum) and as the deprecated "secret" field lets users set
// them (anything).
var testSecrets = []string{
	"whsec_Q3kX9mTzA0bLr7VwYc2NdE5fGh8JpKs1uUi4o0000000",
	"whsec_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1BcD2e",
	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	"my-own-secret",
	"whsec_ключ-with-ünïcode",
	"s",
}

var testBodies = map[string][]byte{
	"empty":            {},
	"envelope":         []byte(`{"type":"order.updated","timestamp":"2026-04-01T12:00:00.123456Z","data":{"id":"5b1d2d3e-0000-4000-8000-000000000001"}}`),
	"unusual spacing":  []byte("{ \"a\" :1 ,\n\"b\":[ 1.50, 2 ] }\n"),
	"non-ASCII":        []byte(`{"name":"Café ☕ 日本"}`),
	"dots in the body": []byte("a.b.c."),
	"large":            bytes.Repeat([]byte(`{"k":"v"},`), 8000),
}

func TestSignatureVerifiesWithStandardWebhooksGivenBase64Secret(t *testing.T) {
	const msgID = "7e0b1c2a-3f4d-4e5f-8a9b-0c1d2e3f4a5b"
	for _, secret := range testSecrets {
		for name, body := range testBodies {
			t.Run(secret+"/"+name, func(t *testing.T) {
				at := time.Now()
				h := webhook.Headers(secret, msgID, at, body)
				wh, err := standardwebhooks.NewWebhook(base64.StdEncoding.EncodeToString([]byte(secret)))
				if err != nil {
					t.Fatalf("NewWebhook: %v", err)
				}
				if err := wh.Verify(body, h); err != nil {
					t.Fatalf("Verify rejected our signature: %v", err)
				}
				want, _ := wh.Sign(msgID, at, body)
				if got := webhook.Sign(secret, msgID, at, body); got != want {
					t.Errorf("Sign = %q, library signs %q", got, want)
				}
			})
		}
	}
}

// Upstream keys the HMAC with the whole "whsec_…" string, so a receiver that
// hands the raw secret to a Standard Webhooks library (which strips the
// prefix and base64-decodes the rest) cannot verify. That is upstream's
// behaviour and receivers depend on it; this test pins the quirk.
func TestSignatureIsRejectedGivenRawSecret(t *testing.T) {
	body := testBodies["envelope"]
	for _, secret := range testSecrets {
		t.Run(secret, func(t *testing.T) {
			h := webhook.Headers(secret, "msg", time.Now(), body)
			wh, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				return // not even a valid key for the library
			}
			if err := wh.Verify(body, h); err == nil {
				t.Fatal("raw secret verified; the signature no longer keys the HMAC with the whole secret string")
			}
		})
	}
}

func TestSignatureCoversIDTimestampAndBody(t *testing.T) {
	secret := testSecrets[0]
	body := testBodies["envelope"]
	at := time.Now()
	wh, err := standardwebhooks.NewWebhook(base64.StdEncoding.EncodeToString([]byte(secret)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(h http.Header, body []byte) []byte
	}{
		{"a changed body", func(_ http.Header, b []byte) []byte { return append(bytes.Clone(b), ' ') }},
		{"a changed id", func(h http.Header, b []byte) []byte { h.Set("webhook-id", "other"); return b }},
		{"a changed timestamp", func(h http.Header, b []byte) []byte {
			h.Set("webhook-timestamp", strconv.FormatInt(at.Unix()-1, 10))
			return b
		}},
	}
	for _, tt := range tests {
		t.Run("rejects "+tt.name, func(t *testing.T) {
			h := webhook.Headers(secret, "msg_1", at, body)
			b := tt.mutate(h, body)
			if err := wh.Verify(b, h); err == nil {
				t.Fatal("Verify accepted a tampered delivery")
			}
		})
	}
}

func TestSignKnownAnswer(t *testing.T) {
	// HMAC-SHA256 computed independently (Python hmac) with the UTF-8 bytes
	// of the whole secret as key.
	got := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_2Xy",
		time.Unix(1700000000, 999_000_000), []byte(`{"type":"order.paid"}`))
	if want := "v1,5Oi6ZGGEDk45NuXl6ooBpL9sGAQ6bvJwvPBiEn0Ophc="; got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
}

func TestHeaders(t *testing.T) {
	at := time.Unix(1767225600, 0)
	h := webhook.Headers("whsec_x", "evt_1", at, []byte("{}"))
	want := map[string]string{
		"webhook-id":        "evt_1",
		"webhook-timestamp": "1767225600",
		"webhook-signature": webhook.Sign("whsec_x", "evt_1", at, []byte("{}")),
		"content-type":      "application/json",
		"user-agent":        "polar.sh webhooks",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers = %v, want exactly %d", h, len(want))
	}
}
