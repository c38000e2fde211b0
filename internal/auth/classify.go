package auth

import "strings"

// TokenKind says which store a bearer token belongs to. The middleware derives
// it from the prefix alone, so a [Resolver] only ever searches one table.
type TokenKind int

// Token kinds, in the order upstream tests prefixes (contract §1.6 step 1).
const (
	// TokenInvalid is any bearer value without a recognised prefix; upstream
	// answers it with 401 invalid_token on every route.
	TokenInvalid TokenKind = iota
	// TokenClientRegistration is an OAuth2 client registration token. It
	// authenticates nobody: the request proceeds as anonymous and only the
	// client-registration endpoints read the token themselves.
	TokenClientRegistration
	// TokenMemberSession is a customer-portal session of a member.
	TokenMemberSession
	// TokenCustomerSession is a customer-portal session of a customer.
	TokenCustomerSession
	// TokenOrganization is an organization access token.
	TokenOrganization
	// TokenOAuthAccess is an OAuth2 access token (user, or legacy organization).
	TokenOAuthAccess
	// TokenPersonal is a personal access token of a user.
	TokenPersonal
	// TokenUserSession is a user's browser session. Classify never returns it: the
	// middleware reads it from the session cookie alone.
	TokenUserSession
)

// String names the kind for logs and test failures.
func (k TokenKind) String() string {
	switch k {
	case TokenClientRegistration:
		return "client_registration"
	case TokenMemberSession:
		return "member_session"
	case TokenCustomerSession:
		return "customer_session"
	case TokenOrganization:
		return "organization_access_token"
	case TokenOAuthAccess:
		return "oauth2_access_token"
	case TokenPersonal:
		return "personal_access_token"
	case TokenUserSession:
		return "user_session"
	default:
		return "invalid"
	}
}

// Classify maps a bearer token to its kind by prefix, testing prefixes in
// upstream's order. Anything else, including refresh tokens, codes and client
// secrets sent as bearer tokens, is [TokenInvalid]. It does not check the
// checksum; see [ChecksumValid].
func Classify(token string) TokenKind {
	switch {
	case strings.HasPrefix(token, PrefixClientRegistrationToken):
		return TokenClientRegistration
	case strings.HasPrefix(token, PrefixMemberSession):
		return TokenMemberSession
	case strings.HasPrefix(token, PrefixCustomerSession):
		return TokenCustomerSession
	case strings.HasPrefix(token, PrefixOrganizationAccessToken):
		return TokenOrganization
	case strings.HasPrefix(token, PrefixOAuthUserAccessToken),
		strings.HasPrefix(token, PrefixOAuthOrganizationAccessToken):
		return TokenOAuthAccess
	case strings.HasPrefix(token, PrefixPersonalAccessToken):
		return TokenPersonal
	default:
		return TokenInvalid
	}
}

// BearerToken extracts the token from an Authorization header value the way
// upstream does (FastAPI's get_authorization_scheme_param, then an ASCII
// check): the scheme is everything before the first space and must equal
// "bearer" in any case; the rest, trimmed of whitespace, is the token. It
// reports false — "no token", so the request is anonymous — for an empty
// header, another scheme, an empty token or a token with non-ASCII bytes.
// The client-registration endpoints use it to read their till_crt_ token.
func BearerToken(authorization string) (string, bool) {
	scheme, value, _ := strings.Cut(authorization, " ")
	if scheme == "" || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	value = trimPythonSpace(value)
	if value == "" {
		return "", false
	}
	for i := range len(value) {
		if value[i] >= 0x80 {
			return "", false
		}
	}
	return value, true
}

// trimPythonSpace trims what Python's str.strip removes from a header value
// that Starlette decoded as Latin-1: ASCII whitespace, the separators
// U+001C–U+001F, NEL (0x85) and NO-BREAK SPACE (0xA0).
func trimPythonSpace(s string) string {
	start, end := 0, len(s)
	for start < end && isPythonSpace(s[start]) {
		start++
	}
	for end > start && isPythonSpace(s[end-1]) {
		end--
	}
	return s[start:end]
}

// isPythonSpace reports whether the Latin-1 character c is whitespace for
// Python's str.isspace.
func isPythonSpace(c byte) bool {
	switch {
	case c >= '\t' && c <= '\r', c >= 0x1c && c <= ' ', c == 0x85, c == 0xa0:
		return true
	default:
		return false
	}
}
