package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// A browser sends the session cookie by itself, with every request to Till, whichever page
// made the request: a page on another site can make a signed-in browser post to Till. So a
// request the cookie authenticates that may change something (any method but GET, HEAD and
// OPTIONS, and any upgrade to a socket) must prove it comes from a page Till trusts: it
// carries the session's CSRF token in CSRFHeader, which only such a page can have read, and
// its Origin, when the browser sends one, is Till's own or one the operator lists. Bearer
// tokens need none of this: a browser never adds them to a request on its own.

const (
	// SessionCookie names the cookie that carries a user's browser session.
	SessionCookie = "till_session"
	// CSRFHeader is the header a page sends its session's CSRF token in.
	CSRFHeader = "X-CSRF-Token"
)

// ErrCSRF is a request the session cookie would authenticate that did not prove it comes
// from a page Till trusts. The middleware refuses it whole (403) rather than serving it
// anonymously, so a page that forgot its token learns why at once.
var ErrCSRF = errors.New("auth: cross-site request refused")

// CSRFRefusal is the message a refused cross-site request gets.
const CSRFRefusal = "A request made with the session cookie must send the session's CSRF token in the " +
	CSRFHeader + " header, from a page of Till's own origin or a listed one."

// Browser is how Till treats what browsers send by themselves: the session cookie and the
// page's origin. The middleware, the sign-in endpoints and signing out all read one, so they
// agree on which pages are trusted and how the cookie is set.
type Browser struct {
	secure  bool
	origins map[string]bool
}

// NewBrowser trusts the pages of publicURL (the origin Till is served at, whose https makes
// the cookie Secure) and of origins (further scheme://host[:port] origins the operator lists
// for a dashboard served elsewhere). A request's own host is trusted too.
func NewBrowser(publicURL string, origins []string) Browser {
	b := Browser{secure: strings.HasPrefix(strings.ToLower(publicURL), "https://"), origins: map[string]bool{}}
	for _, o := range append([]string{publicURL}, origins...) {
		if u, err := url.Parse(o); err == nil && u.Scheme != "" && u.Host != "" {
			b.origins[strings.ToLower(u.Scheme+"://"+u.Host)] = true
		}
	}
	return b
}

// Secure reports whether cookies set in answer to r are Secure: when Till's public URL is
// https, or r itself came over TLS.
func (b Browser) Secure(r *http.Request) bool { return b.secure || r.TLS != nil }

// TrustedOrigin reports whether r comes from a page Till trusts. A browser names the page's
// origin in Origin on every POST and cross-origin request; it must be Till's public origin,
// a listed one or the request's own host. A request without Origin passes unless its
// Sec-Fetch-Site says another site sent it: browsers old enough to send neither remain
// bound by the CSRF token, and clients other than browsers carry no cookie of a victim.
func (b Browser) TrustedOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return r.Header.Get("Sec-Fetch-Site") != "cross-site"
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return false // "null" included: a sandboxed or privacy-sensitive context
	}
	return b.origins[strings.ToLower(u.Scheme+"://"+u.Host)] || strings.EqualFold(u.Host, r.Host)
}

// VerifyCSRF checks a request the session sessionID authenticates: one that may change
// something must come from a trusted origin with the session's CSRF token (token, read
// from the header or a form), a websocket's handshake from a trusted origin it names; a
// safe one passes as it is. It answers ErrCSRF or nil.
func (b Browser) VerifyCSRF(r *http.Request, secret []byte, sessionID uuid.UUID, token string) error {
	if r.Method == http.MethodGet && r.Header.Get("Upgrade") != "" {
		// A websocket's handshake cannot carry the token, but every browser that opens one
		// sends the page's Origin, which no page can forge: that origin must be trusted.
		if r.Header.Get("Origin") == "" || !b.TrustedOrigin(r) {
			return ErrCSRF
		}
		return nil
	}
	if !unsafeRequest(r) {
		return nil
	}
	if !b.TrustedOrigin(r) || !CSRFValid(secret, sessionID, token) {
		return ErrCSRF
	}
	return nil
}

// unsafeRequest reports whether r may change something: a method other than GET, HEAD and
// OPTIONS, or an upgrade to another protocol (a socket whose messages the CSRF token
// cannot accompany).
func unsafeRequest(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return r.Header.Get("Upgrade") != ""
	}
	return true
}

// SetSession sets the session cookie: HttpOnly, so no script reads it; SameSite=Lax, so
// other sites' subrequests and posts do not carry it; Secure over https; for the whole
// origin until the session expires.
func (b Browser) SetSession(w http.ResponseWriter, r *http.Request, token string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", Expires: expires.UTC(),
		MaxAge: int(time.Until(expires).Seconds()), HttpOnly: true, Secure: b.Secure(r), SameSite: http.SameSiteLaxMode})
}

// ClearSession tells the browser to drop the session cookie.
func (b Browser) ClearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: b.Secure(r), SameSite: http.SameSiteLaxMode})
}

// SessionToken reads the session cookie of r: a well-formed session token, or false. A
// cookie that is not one (another value, a typo, a bad checksum) is no session at all.
func SessionToken(r *http.Request) (string, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || !strings.HasPrefix(c.Value, PrefixUserSession) || !ChecksumValid(c.Value) {
		return "", false
	}
	return c.Value, true
}

// CSRFToken is the CSRF token of the session sessionID: an HMAC of its id under the server
// secret, so it needs no storage, is the same on every request and in every process, and
// cannot be made without the secret. A page learns it when it signs in, or reads it back
// through GraphQL (viewer.csrfToken), which other sites' pages cannot read.
func CSRFToken(secret []byte, sessionID uuid.UUID) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("till-csrf\x00"))
	mac.Write(sessionID[:])
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// CSRFValid reports, in time independent of where they differ, whether got is the CSRF
// token of the session sessionID.
func CSRFValid(secret []byte, sessionID uuid.UUID, got string) bool {
	want := CSRFToken(secret, sessionID)
	return len(got) == len(want) && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
