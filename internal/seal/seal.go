// Package seal encrypts the private keys Till keeps in its database (license signing keys,
// OpenID signing keys) under a key derived from the server secret, so that a database dump
// alone cannot sign anything.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// ErrOpen reports sealed bytes that do not open: another server secret, another purpose or
// additional data, or altered bytes. It never says which, as AES-GCM cannot tell.
var ErrOpen = errors.New("seal: cannot open (wrong server secret or altered data)")

// Seal encrypts plaintext with AES-256-GCM under the key HKDF-SHA256 derives from secret
// for purpose, binding additional (which may be nil), and prefixes the random nonce. Each
// purpose gets its own key, so bytes sealed for one use never open for another.
func Seal(secret []byte, purpose string, plaintext, additional []byte) ([]byte, error) {
	aead, err := newAEAD(secret, purpose)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, plaintext, additional), nil
}

// Open decrypts what Seal sealed with the same secret, purpose and additional data, and
// fails with ErrOpen rather than returning wrong bytes.
func Open(secret []byte, purpose string, sealed, additional []byte) ([]byte, error) {
	aead, err := newAEAD(secret, purpose)
	if err != nil {
		return nil, err
	}
	n := aead.NonceSize()
	if len(sealed) < n+aead.Overhead() {
		return nil, ErrOpen
	}
	plaintext, err := aead.Open(nil, sealed[:n], sealed[n:], additional)
	if err != nil {
		return nil, ErrOpen
	}
	return plaintext, nil
}

func newAEAD(secret []byte, purpose string) (cipher.AEAD, error) {
	if len(secret) == 0 {
		return nil, errors.New("seal: the server secret is empty")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, purpose, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
