package seal_test

import (
	"bytes"
	"errors"
	"testing"

	"till/internal/seal"
)

func TestSealOpensOnlyWithTheSameSecretPurposeAndData(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, 32)
	plain := []byte("a private key")
	sealed, err := seal.Seal(secret, "purpose", plain, []byte("kid-1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("the plaintext shows in the sealed bytes")
	}
	again, _ := seal.Seal(secret, "purpose", plain, []byte("kid-1"))
	if bytes.Equal(again, sealed) {
		t.Error("two seals of the same bytes are equal: the nonce is not random")
	}
	got, err := seal.Open(secret, "purpose", sealed, []byte("kid-1"))
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v; want the plaintext", got, err)
	}
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	for _, tc := range []struct {
		name              string
		secret            []byte
		purpose           string
		sealed, additonal []byte
	}{
		{"another secret", bytes.Repeat([]byte{8}, 32), "purpose", sealed, []byte("kid-1")},
		{"another purpose", secret, "other", sealed, []byte("kid-1")},
		{"other additional data", secret, "purpose", sealed, []byte("kid-2")},
		{"altered bytes", secret, "purpose", altered, []byte("kid-1")},
		{"too short", secret, "purpose", sealed[:10], []byte("kid-1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := seal.Open(tc.secret, tc.purpose, tc.sealed, tc.additonal); !errors.Is(err, seal.ErrOpen) {
				t.Errorf("Open = %v, want ErrOpen", err)
			}
		})
	}
	if _, err := seal.Seal(nil, "purpose", plain, nil); err == nil {
		t.Error("sealing with an empty secret succeeded")
	}
}
