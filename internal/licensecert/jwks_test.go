package licensecert_test

import (
	"crypto/ed25519"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/licensecert"
)

// The key of RFC 8037 Appendix A.1, whose thumbprint A.3 gives.
const (
	rfcSeed       = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
	rfcX          = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
	rfcThumbprint = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
)

func TestKeyIDIsTheRFC8037Thumbprint(t *testing.T) {
	x, err := enc.DecodeString(rfcX)
	if err != nil {
		t.Fatal(err)
	}
	if got := licensecert.KeyID(ed25519.PublicKey(x)); got != rfcThumbprint {
		t.Errorf("KeyID = %s, want %s", got, rfcThumbprint)
	}
	seed, _ := enc.DecodeString(rfcSeed)
	jwk := licensecert.NewJWK(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), nil)
	if jwk.X != rfcX || jwk.Kid != rfcThumbprint {
		t.Errorf("NewJWK from the RFC's private key: x %s kid %s", jwk.X, jwk.Kid)
	}
}

func TestKeySetJSON(t *testing.T) {
	x, _ := enc.DecodeString(rfcX)
	until := time.Unix(1800000000, 0)
	b, err := json.Marshal(licensecert.KeySet{Keys: []licensecert.JWK{licensecert.NewJWK(x, &until)}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + rfcX + `","kid":"` + rfcThumbprint +
		`","use":"sig","alg":"EdDSA","till_valid_until":1800000000}]}`
	if string(b) != want {
		t.Errorf("JWK set = %s\nwant       %s", b, want)
	}
	if b, _ := json.Marshal(licensecert.KeySet{}); string(b) != `{"keys":[]}` {
		t.Errorf("empty set = %s, want {\"keys\":[]}", b)
	}
	// Embedded in another document, the set reads back through UnmarshalJSON.
	var doc struct{ Set licensecert.KeySet }
	if err := json.Unmarshal([]byte(`{"Set":`+want+`}`), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Set.Keys) != 1 || *doc.Set.Keys[0].ValidUntil != 1800000000 {
		t.Errorf("decoded set = %+v", doc.Set)
	}
}

func TestParseKeySet(t *testing.T) {
	okp := func(fields string) string {
		return `{"kty":"OKP","crv":"Ed25519","x":"` + rfcX + `"` + fields + `}`
	}
	rsa := `{"kty":"RSA","kid":"r1","n":"AQAB","e":"AQAB"}`
	tests := []struct {
		name    string
		in      string
		wantErr string
		kids    []string
	}{
		{"not JSON", `garbage`, "JWK set", nil},
		{"empty input", ``, "JWK set", nil},
		{"a JSON array", `[]`, "JWK set", nil},
		{"no keys member", `{}`, "no \"keys\"", nil},
		{"null keys", `{"keys":null}`, "no \"keys\"", nil},
		{"keys not an array", `{"keys":{}}`, "JWK set", nil},
		{"an x that is not base64url", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"!!","kid":"a"}]}`, "not a base64url", nil},
		{"an x of the wrong length", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA","kid":"a"}]}`, "not a base64url", nil},
		{"an Ed25519 key for another algorithm", `{"keys":[` + okp(`,"kid":"a","alg":"HS256"`) + `]}`, "not an EdDSA signing key", nil},
		{"an encryption key", `{"keys":[` + okp(`,"kid":"a","use":"enc"`) + `]}`, "not an EdDSA signing key", nil},
		{"a key without kid", `{"keys":[` + okp(``) + `]}`, "kid", nil},
		{"a repeated kid", `{"keys":[` + okp(`,"kid":"a"`) + `,` + okp(`,"kid":"a"`) + `]}`, "repeated kid", nil},
		{"an empty set", `{"keys":[]}`, "", []string{}},
		{"other key types are skipped", `{"keys":[` + rsa + `,` + okp(`,"kid":"a"`) + `]}`, "", []string{"a"}},
		{"RFC 9864's alg name is accepted", `{"keys":[` + okp(`,"kid":"a","alg":"Ed25519"`) + `]}`, "", []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := licensecert.ParseKeySet([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			kids := []string{}
			for _, k := range set.Keys {
				kids = append(kids, k.Kid)
			}
			if !reflect.DeepEqual(kids, tc.kids) {
				t.Errorf("kids = %v, want %v", kids, tc.kids)
			}
		})
	}
}

func TestJWKSURL(t *testing.T) {
	org := uuid.MustParse("7d4c3f0e-9f2a-4c1b-8d6e-0a1b2c3d4e5f")
	want := "https://till.example.com/.well-known/till/organizations/7d4c3f0e-9f2a-4c1b-8d6e-0a1b2c3d4e5f/license-keys.json"
	for _, iss := range []string{"https://till.example.com", "https://till.example.com/"} {
		if got := licensecert.JWKSURL(iss, org); got != want {
			t.Errorf("JWKSURL(%q) = %s, want %s", iss, got, want)
		}
	}
}
