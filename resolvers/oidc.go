package resolvers

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/jmoiron/sqlx"

	"till/internal/seal"
	"till/storage"
)

// OpenID Connect signing: id tokens live an hour (as upstream's). A signing key signs for
// the rotation period; once retired it stays published for the longest id-token lifetime
// plus a margin for verifiers whose clocks or leeway run late, so every token it signed
// keeps verifying until it expires.
const (
	IDTokenLifetime           = time.Hour
	defaultOIDCKeyRotation    = 30 * 24 * time.Hour
	oidcKeyRetentionMargin    = 15 * time.Minute
	oidcKeyBits               = 2048
	oidcSealInfo              = "till oidc signing key"
	idTokenLifetimeClockSlack = time.Minute
)

// OIDCSettings tune the OpenID Connect provider; the zero value is the default.
type OIDCSettings struct {
	// KeyRotation is how long a signing key signs id tokens before the next signer replaces
	// it with a new one; zero means 30 days.
	KeyRotation time.Duration
}

// IDTokenClaims are the claims of an OpenID Connect id token that the token endpoint
// decides; the signer adds the issuer and the key id.
type IDTokenClaims struct {
	Subject  string
	Audience string // the client id
	Nonce    string // empty: no nonce claim
	AuthTime time.Time
	IssuedAt time.Time
	Expiry   time.Time
}

// idTokenPayload is the JSON of an id token. aud is a single string, which OpenID Connect
// allows for one audience; nonce and auth_time are left out when unknown.
type idTokenPayload struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	Expiry   int64  `json:"exp"`
	IssuedAt int64  `json:"iat"`
	AuthTime *int64 `json:"auth_time,omitempty"`
	Nonce    string `json:"nonce,omitempty"`
}

// SignIDToken signs an id token (RS256) with the current OpenID signing key. A zero IssuedAt
// means now and a zero Expiry means IssuedAt plus IDTokenLifetime; a longer lifetime is
// refused, because retired keys are published only that long after their last token.
func (r *Resolver) SignIDToken(ctx context.Context, c IDTokenClaims) (string, error) {
	if c.Subject == "" || c.Audience == "" {
		return "", errors.New("oidc: an id token needs a subject and an audience")
	}
	now := r.Now()
	if c.IssuedAt.IsZero() {
		c.IssuedAt = now
	}
	if c.Expiry.IsZero() {
		c.Expiry = c.IssuedAt.Add(IDTokenLifetime)
	}
	if c.Expiry.After(now.Add(IDTokenLifetime + idTokenLifetimeClockSlack)) {
		return "", fmt.Errorf("oidc: id token expiry %s is more than %s away", c.Expiry.Format(time.RFC3339), IDTokenLifetime)
	}
	p := idTokenPayload{Issuer: r.Issuer(), Subject: c.Subject, Audience: c.Audience, Expiry: c.Expiry.Unix(),
		IssuedAt: c.IssuedAt.Unix(), Nonce: c.Nonce}
	if !c.AuthTime.IsZero() {
		at := c.AuthTime.Unix()
		p.AuthTime = &at
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	k, err := r.currentOIDCSigningKey(ctx)
	if err != nil {
		return "", err
	}
	priv, err := openOIDCKey(r.secret, k.KeyID, k.SealedPrivateKey)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: priv, KeyID: k.KeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// Issuer is the OpenID issuer identifier: Till's public URL, without a trailing slash, so
// the discovery document, id tokens and introspection all spell it the same way.
func (r *Resolver) Issuer() string { return r.publicLink("") }

// OIDCKeySet is the JWK Set verifiers check id tokens against: the current key and the
// retired keys whose tokens may still be live. It makes the first key when there is none
// (and rotates a key past its period), so a verifier that fetches the set before the first
// token already knows the key that will sign it. A failure is logged here: it is the
// server's, and its answer shows nothing of it.
func (r *Resolver) OIDCKeySet(ctx context.Context) (jose.JSONWebKeySet, error) {
	set, err := r.oidcKeySet(ctx)
	if err != nil {
		r.logger.ErrorContext(ctx, "oidc: key set", "error", err)
	}
	return set, err
}

func (r *Resolver) oidcKeySet(ctx context.Context) (jose.JSONWebKeySet, error) {
	if _, err := r.currentOIDCSigningKey(ctx); err != nil {
		return jose.JSONWebKeySet{}, err
	}
	keys, err := storage.PublishedOIDCSigningKeys(ctx, r.db, r.Now())
	if err != nil {
		return jose.JSONWebKeySet{}, err
	}
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(keys))}
	for _, k := range keys {
		pub, err := x509.ParsePKIXPublicKey(k.PublicKey)
		if err != nil {
			return jose.JSONWebKeySet{}, fmt.Errorf("oidc: key %s: %w", k.KeyID, err)
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: pub, KeyID: k.KeyID, Algorithm: string(jose.RS256), Use: "sig"})
	}
	return set, nil
}

// RotateOIDCSigningKey replaces the current signing key now, whatever its age: the way out
// after a suspected key leak, or to test a verifier's key handling. The old key stays
// published until its last id token expires.
func (r *Resolver) RotateOIDCSigningKey(ctx context.Context) (*storage.OIDCSigningKey, error) {
	for range 3 {
		k, err := storage.CurrentOIDCSigningKey(ctx, r.db)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			k, err = r.replaceOIDCSigningKey(ctx, nil)
		case err == nil:
			k, err = r.replaceOIDCSigningKey(ctx, k)
		}
		if !errors.Is(err, storage.ErrConflict) {
			return k, err
		}
	}
	return nil, errors.New("oidc: the signing key kept changing during rotation")
}

// currentOIDCSigningKey returns the key that signs now: the current key while it is younger
// than the rotation period, otherwise a new one that replaces it. Processes that race to
// create the first key or to replace the same old one converge on one key: the losers read
// the winner's.
func (r *Resolver) currentOIDCSigningKey(ctx context.Context) (*storage.OIDCSigningKey, error) {
	for range 3 {
		k, err := storage.CurrentOIDCSigningKey(ctx, r.db)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			k, err = r.replaceOIDCSigningKey(ctx, nil)
		case err == nil && !r.Now().Before(k.CreatedAt.Add(r.oidcKeyRotation())):
			k, err = r.replaceOIDCSigningKey(ctx, k)
		}
		if !errors.Is(err, storage.ErrConflict) {
			return k, err
		}
	}
	return nil, errors.New("oidc: no current signing key after repeated conflicts")
}

func (r *Resolver) oidcKeyRotation() time.Duration {
	if r.oidc.KeyRotation > 0 {
		return r.oidc.KeyRotation
	}
	return defaultOIDCKeyRotation
}

// replaceOIDCSigningKey retires old (nil: there is no current key) and creates a new current
// key in one transaction. It returns ErrConflict when another process retired old or created
// a key first. The key is generated before the transaction: RSA generation takes long enough
// that holding the old key's row lock meanwhile would stall other signers.
func (r *Resolver) replaceOIDCSigningKey(ctx context.Context, old *storage.OIDCSigningKey) (*storage.OIDCSigningKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, oidcKeyBits)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	kid, err := oidcKeyID(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	sealed, err := sealOIDCKey(r.secret, kid, priv)
	if err != nil {
		return nil, err
	}
	var k *storage.OIDCSigningKey
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		now := r.Now()
		if old != nil {
			retired, err := storage.RetireOIDCSigningKey(ctx, tx, old.ID, now, now.Add(IDTokenLifetime+oidcKeyRetentionMargin))
			if err != nil {
				return err
			}
			if !retired {
				return storage.ErrConflict
			}
		}
		k, err = storage.CreateOIDCSigningKey(ctx, tx, kid, pub, sealed, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	if r.logger != nil {
		r.logger.InfoContext(ctx, "oidc: new id-token signing key", "kid", k.KeyID)
	}
	return k, nil
}

// oidcKeyID is the key's RFC 7638 JWK thumbprint, base64url: derived from the key, so a kid
// can never name two keys.
func oidcKeyID(pub *rsa.PublicKey) (string, error) {
	sum, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

// sealOIDCKey encrypts priv (PKCS #8) for storage (seal.Seal), bound to kid as additional
// data so a sealed key cannot be moved to another row. A database dump alone then cannot
// sign.
func sealOIDCKey(secret []byte, kid string, priv *rsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	return seal.Seal(secret, oidcSealInfo, der, []byte(kid))
}

// openOIDCKey decrypts what sealOIDCKey sealed. It fails, rather than returning a wrong key,
// when the secret differs or the sealed bytes or kid were altered.
func openOIDCKey(secret []byte, kid string, sealed []byte) (*rsa.PrivateKey, error) {
	der, err := seal.Open(secret, oidcSealInfo, sealed, []byte(kid))
	if err != nil {
		return nil, fmt.Errorf("oidc: signing key %s: %w", kid, err)
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("oidc: sealed signing key: %w", err)
	}
	priv, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("oidc: sealed signing key is not an RSA key")
	}
	return priv, nil
}
