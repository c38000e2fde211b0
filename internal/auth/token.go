package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"strings"
)

// Token prefixes. They say what a credential is before any lookup, which lets
// the middleware pick the right table, lets secret scanners recognise a leaked
// Till credential, and mirrors upstream's polar_* prefixes one for one.
const (
	// PrefixOrganizationAccessToken marks an organization access token (OAT).
	PrefixOrganizationAccessToken = "till_oat_"
	// PrefixPersonalAccessToken marks a personal access token (PAT).
	PrefixPersonalAccessToken = "till_pat_"
	// PrefixCustomerSession marks a customer-portal session for a customer.
	PrefixCustomerSession = "till_cst_"
	// PrefixMemberSession marks a customer-portal session for a member.
	PrefixMemberSession = "till_mst_"
	// PrefixOAuthUserAccessToken marks an OAuth2 access token issued to a user.
	PrefixOAuthUserAccessToken = "till_at_u_"
	// PrefixOAuthOrganizationAccessToken marks a legacy OAuth2 access token
	// issued to an organization; upstream still accepts them.
	PrefixOAuthOrganizationAccessToken = "till_at_o_"
	// PrefixOAuthUserRefreshToken marks an OAuth2 refresh token of a user.
	PrefixOAuthUserRefreshToken = "till_rt_u_"
	// PrefixOAuthOrganizationRefreshToken marks a legacy OAuth2 refresh token
	// of an organization.
	PrefixOAuthOrganizationRefreshToken = "till_rt_o_"
	// PrefixAuthorizationCode marks a single-use OAuth2 authorization code.
	PrefixAuthorizationCode = "till_ac_"
	// PrefixClientID marks an OAuth2 client id.
	PrefixClientID = "till_ci_"
	// PrefixClientSecret marks an OAuth2 client secret.
	PrefixClientSecret = "till_cs_"
	// PrefixClientRegistrationToken marks an OAuth2 client registration token
	// (RFC 7592); the bearer middleware lets it through as anonymous because
	// only the registration endpoints read it.
	PrefixClientRegistrationToken = "till_crt_"
	// PrefixWebhookSecret marks a webhook endpoint signing secret, the prefix
	// Standard Webhooks verifiers expect.
	PrefixWebhookSecret = "whsec_"
	// PrefixUserSession marks a user's browser session. It travels only in the
	// session cookie: as a bearer token it is invalid_token, so a page's
	// cross-site request can never carry it except under the cookie's CSRF rules.
	PrefixUserSession = "till_us_"
	// PrefixSignInLink marks the one-time token of a magic sign-in link.
	PrefixSignInLink = "till_sl_"
)

const (
	// randomLength is the number of random characters after the prefix.
	randomLength = 37
	// checksumLength is the number of base62 checksum characters at the end.
	checksumLength = 6
	// tokenAlphabet is what the random part is drawn from (upstream uses
	// string.ascii_letters + string.digits).
	tokenAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	// checksumAlphabet is the base62 digit order of the checksum.
	checksumAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	// maxUnbiasedByte is the largest multiple of 62 that fits in a byte; random
	// bytes at or above it are discarded so every character is equally likely.
	maxUnbiasedByte = 256 - 256%len(tokenAlphabet)
)

// knownPrefixes is the constant table [ChecksumValid] uses to find where the
// random part of a token starts. No entry is a prefix of another.
var knownPrefixes = [...]string{
	PrefixOrganizationAccessToken,
	PrefixPersonalAccessToken,
	PrefixCustomerSession,
	PrefixMemberSession,
	PrefixOAuthUserAccessToken,
	PrefixOAuthOrganizationAccessToken,
	PrefixOAuthUserRefreshToken,
	PrefixOAuthOrganizationRefreshToken,
	PrefixAuthorizationCode,
	PrefixClientID,
	PrefixClientSecret,
	PrefixClientRegistrationToken,
	PrefixWebhookSecret,
	PrefixUserSession,
	PrefixSignInLink,
}

// KnownPrefixes lists every prefix Till issues credentials under, so callers
// such as secret scanners or tests need not repeat the table.
func KnownPrefixes() []string {
	return append([]string(nil), knownPrefixes[:]...)
}

// Generate returns a fresh credential: prefix, 37 characters drawn uniformly
// from [A-Za-z0-9] with crypto/rand, then a 6-character checksum. The format is
// upstream's, so a token is len(prefix)+43 characters and its checksum lets a
// typo be rejected without a database lookup. Show the result once and store
// only [Hash] of it.
func Generate(prefix string) string {
	var b strings.Builder
	b.Grow(len(prefix) + randomLength + checksumLength)
	b.WriteString(prefix)
	random := make([]byte, 0, randomLength)
	buf := make([]byte, randomLength*2)
	for len(random) < randomLength {
		rand.Read(buf) // never fails since Go 1.24; it crashes the program instead
		for _, c := range buf {
			if int(c) >= maxUnbiasedByte || len(random) == randomLength {
				continue
			}
			random = append(random, tokenAlphabet[int(c)%len(tokenAlphabet)])
		}
	}
	b.Write(random)
	b.WriteString(checksum(random))
	return b.String()
}

// ChecksumValid reports whether token has a known Till prefix, the right
// length, an alphanumeric random part and a matching checksum. It lets the
// middleware reject mistyped or truncated tokens before touching storage.
func ChecksumValid(token string) bool {
	for _, prefix := range knownPrefixes {
		if !strings.HasPrefix(token, prefix) {
			continue
		}
		rest := token[len(prefix):]
		if len(rest) != randomLength+checksumLength {
			return false
		}
		random := rest[:randomLength]
		for i := range len(random) {
			if !isAlphanumeric(random[i]) {
				return false
			}
		}
		return rest[randomLength:] == checksum([]byte(random))
	}
	return false
}

// Hash is the only form in which a token is stored: lowercase hex
// HMAC-SHA256 of the token, keyed with the server secret (64 characters, for a
// CHAR(64) column). Lookups recompute it, so a database leak reveals no usable
// credential.
func Hash(secret []byte, token string) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(token))
	return hex.EncodeToString(mac.Sum(nil))
}

// checksum is CRC-32 (IEEE) of the random part in base62, left-padded with
// '0' to six characters, as upstream's generate_token computes it.
func checksum(random []byte) string {
	n := crc32.ChecksumIEEE(random)
	var out [checksumLength]byte
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = checksumAlphabet[n%uint32(len(checksumAlphabet))]
		n /= uint32(len(checksumAlphabet))
	}
	return string(out[:])
}

// isAlphanumeric reports whether c is an ASCII letter or digit.
func isAlphanumeric(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
