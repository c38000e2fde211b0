package licensecert

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// sealInfo separates the sealing key from every other key derived from the server secret.
const sealInfo = "till license signing key"

// SealKey encrypts priv for storage: AES-256-GCM under a key derived from the server secret
// with HKDF-SHA256, the random nonce prefixed. Only the 32-byte seed is sealed; the rest of
// an Ed25519 private key derives from it. A database dump alone then cannot sign
// certificates.
func SealKey(secret []byte, priv ed25519.PrivateKey) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, errors.New("licensecert: invalid Ed25519 private key")
	}
	aead, err := sealingAEAD(secret)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+ed25519.SeedSize+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, priv.Seed(), nil), nil
}

// OpenKey decrypts what SealKey sealed. It fails, rather than returning a wrong key, when
// the secret differs or the sealed bytes were altered.
func OpenKey(secret, sealed []byte) (ed25519.PrivateKey, error) {
	aead, err := sealingAEAD(secret)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, errors.New("licensecert: sealed key too short")
	}
	n := aead.NonceSize()
	seed, err := aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return nil, errors.New("licensecert: cannot open the sealed key (wrong server secret or altered data)")
	}
	if len(seed) != ed25519.SeedSize {
		return nil, errors.New("licensecert: sealed key has the wrong length")
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

func sealingAEAD(secret []byte) (cipher.AEAD, error) {
	if len(secret) == 0 {
		return nil, errors.New("licensecert: the server secret is empty")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, sealInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
