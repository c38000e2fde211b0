package rest_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	"till/internal/ratelimit"
)

// postFrom is post from a client at addr (host:port).
func (f *oauthFixture) postFrom(t *testing.T, addr, path string, c oauthClient, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	req := oauthCall(path, c, form).request()
	req.RemoteAddr = addr
	return f.s.serve(t, req)
}

// A refresh with a made-up refresh token answers invalid_grant once the client has
// authenticated and invalid_client (401) when it has not: it tells whether a secret was
// accepted without issuing anything.
var probe = url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"till_rt_u_unknown"}}

func wrongSecret(c oauthClient) oauthClient {
	c.Secret += "x"
	return c
}

// throttled is the answer to a client or address that used up its failures.
func throttled(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	want{status: http.StatusTooManyRequests, error: "invalid_client"}.check(t, rec)
	secs, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	if err != nil || secs < 1 || secs > 60 {
		t.Errorf("Retry-After = %q, want 1..60 seconds", rec.Header().Get("Retry-After"))
	}
}

func TestOAuth2ClientAuthenticationFailuresAreThrottled(t *testing.T) {
	t.Parallel()
	const attacker, other = "198.51.100.7:4000", "203.0.113.9:4000"
	authenticated := want{status: http.StatusBadRequest, error: "invalid_grant"}
	unauthenticated := want{status: http.StatusUnauthorized, error: "invalid_client"}

	t.Run("after ten failures from an address even the right secret is refused there until the window ends", func(t *testing.T) {
		t.Parallel()
		f := newOAuthFixture(t)
		now := time.Now()
		f.s.Clock.Set(now)
		victim, bystander := f.client(t, "client_secret_post", "openid"), f.client(t, "client_secret_basic", "openid")
		for range 10 {
			unauthenticated.check(t, f.postFrom(t, attacker, "/v1/oauth2/token", wrongSecret(victim), probe))
		}
		throttled(t, f.postFrom(t, attacker, "/v1/oauth2/token", victim, probe))
		throttled(t, f.postFrom(t, attacker, "/v1/oauth2/introspect", victim, url.Values{"token": {"x"}}))
		throttled(t, f.postFrom(t, attacker, "/v1/oauth2/revoke", victim, url.Values{"token": {"x"}}))
		authenticated.check(t, f.postFrom(t, attacker, "/v1/oauth2/token", bystander, probe))
		unauthenticated.check(t, f.postFrom(t, attacker, "/v1/oauth2/token", wrongSecret(bystander), probe))

		now = now.Add(time.Minute)
		f.s.Clock.Set(now)
		authenticated.check(t, f.postFrom(t, attacker, "/v1/oauth2/token", victim, probe))
	})
	t.Run("an attacker elsewhere cannot lock a confidential client out", func(t *testing.T) {
		t.Parallel()
		f := newOAuthFixture(t)
		victim := f.client(t, "client_secret_post", "openid")
		for range 12 {
			f.postFrom(t, attacker, "/v1/oauth2/token", wrongSecret(victim), probe)
		}
		throttled(t, f.postFrom(t, attacker, "/v1/oauth2/token", victim, probe))
		authenticated.check(t, f.postFrom(t, other, "/v1/oauth2/token", victim, probe))
	})
	t.Run("after thirty failures an address is refused for every client", func(t *testing.T) {
		t.Parallel()
		f := newOAuthFixture(t)
		c := f.client(t, "client_secret_basic", "openid")
		for i := range 30 {
			unknown := oauthClient{ID: "till_ci_unknown" + strconv.Itoa(i), Secret: "s", Method: "client_secret_post"}
			unauthenticated.check(t, f.postFrom(t, attacker, "/v1/oauth2/token", unknown, probe))
		}
		throttled(t, f.postFrom(t, attacker, "/v1/oauth2/token", c, probe))
		authenticated.check(t, f.postFrom(t, other, "/v1/oauth2/token", c, probe))
	})
	t.Run("behind a trusted proxy the forwarded address is the one counted", func(t *testing.T) {
		t.Parallel()
		f := newOAuthFixture(t)
		f.s.h = ratelimit.WithClientIP(ratelimit.ClientIP([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}))(f.s.h)
		c := f.client(t, "client_secret_basic", "openid")
		from := func(client string, cl oauthClient) *httptest.ResponseRecorder {
			req := oauthCall("/v1/oauth2/token", cl, probe).request()
			req.RemoteAddr, req.Header["X-Forwarded-For"] = "10.0.0.1:443", []string{client}
			return f.s.serve(t, req)
		}
		for i := range 30 {
			unknown := oauthClient{ID: "till_ci_unknown" + strconv.Itoa(i), Secret: "s", Method: "client_secret_post"}
			unauthenticated.check(t, from("198.51.100.7", unknown))
		}
		throttled(t, from("198.51.100.7", c))
		authenticated.check(t, from("203.0.113.9", c))
	})
	t.Run("a public client cannot be locked out by made-up secrets", func(t *testing.T) {
		t.Parallel()
		f := newOAuthFixture(t)
		public := f.client(t, "none", "openid")
		forged := oauthClient{ID: public.ID, Secret: "guess", Method: "client_secret_post"}
		for range 15 {
			unauthenticated.check(t, f.postFrom(t, attacker, "/v1/oauth2/token", forged, probe))
		}
		authenticated.check(t, f.postFrom(t, other, "/v1/oauth2/token", public, probe))
	})
}
