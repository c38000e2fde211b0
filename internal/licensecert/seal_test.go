package licensecert_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"till/internal/licensecert"
)

func TestSealOpenRoundTrip(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	secret := []byte("server secret")
	sealed, err := licensecert.SealKey(secret, priv)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, priv.Seed()) {
		t.Fatal("the sealed key contains the seed in clear")
	}
	got, err := licensecert.OpenKey(secret, sealed)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.Equal(got) {
		t.Error("opened key differs from the sealed one")
	}
	again, _ := licensecert.SealKey(secret, priv)
	if bytes.Equal(again, sealed) {
		t.Error("sealing twice gave the same bytes: the nonce is not random")
	}
}

func TestOpenKeyFails(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	secret := []byte("server secret")
	sealed, err := licensecert.SealKey(secret, priv)
	if err != nil {
		t.Fatal(err)
	}
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	tests := []struct {
		name   string
		secret []byte
		sealed []byte
	}{
		{"with another secret", []byte("another secret"), sealed},
		{"with an empty secret", nil, sealed},
		{"on altered bytes", secret, altered},
		{"on truncated bytes", secret, sealed[:20]},
		{"on nothing", secret, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if k, err := licensecert.OpenKey(tc.secret, tc.sealed); err == nil {
				t.Errorf("opened a key (%d bytes)", len(k))
			}
		})
	}
}

func TestSealKeyRefusesBadInput(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	if _, err := licensecert.SealKey(nil, priv); err == nil {
		t.Error("sealed with an empty secret")
	}
	if _, err := licensecert.SealKey([]byte("s"), priv[:32]); err == nil {
		t.Error("sealed a truncated private key")
	}
}
