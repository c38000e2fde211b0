package resolvers

import (
	"net/http"
	"strconv"
	"time"

	"till/internal/ratelimit"
	"till/storage"
)

// Failed client authentications allowed per window before the token, introspection and
// revocation endpoints stop checking secrets: per client and address, so one address cannot
// keep guessing one client's secret; and per address, looser, so one address cannot guess
// many clients' secrets while a few misconfigured clients behind one address do not lock each
// other out. Client ids are public, so a count per client alone would let anyone lock a
// confidential client out from wherever it runs; guessing from many addresses instead gains
// nothing against secrets of 256 bits.
const (
	clientAuthFailuresPerClient = 10
	clientAuthFailuresPerAddr   = 30
	clientAuthFailureWindow     = time.Minute
)

// clientAuthThrottle counts failed client authentications in this process. Counting per
// process is enough: every process multiplies an attacker's budget by one more window of a
// few guesses, against secrets of 256 bits.
type clientAuthThrottle struct {
	perClient, perAddr *ratelimit.Failures
}

func newClientAuthThrottle() *clientAuthThrottle {
	perClient, err := ratelimit.NewFailures(clientAuthFailuresPerClient, clientAuthFailureWindow)
	if err != nil {
		panic(err)
	}
	perAddr, err := ratelimit.NewFailures(clientAuthFailuresPerAddr, clientAuthFailureWindow)
	if err != nil {
		panic(err)
	}
	return &clientAuthThrottle{perClient: perClient, perAddr: perAddr}
}

// clientAuth is the resolver's throttle, made on first use.
func (r *Resolver) clientAuth() *clientAuthThrottle {
	r.clientAuthOnce.Do(func() { r.clientAuthThrottle = newClientAuthThrottle() })
	return r.clientAuthThrottle
}

// refuse answers a request whose client id or address has used up its failures, before the
// secret is looked at: 429 with Retry-After, since the client may well hold the right secret
// and should simply wait, and invalid_client, the RFC 6749 code OAuth libraries already treat
// as an authentication failure.
func (t *clientAuthThrottle) refuse(creds ClientCredentials, now time.Time) error {
	wait := time.Duration(0)
	if refused, w := t.perClient.Refused(clientAtAddr(creds), now); refused {
		wait = w
	}
	if creds.Addr != "" {
		if refused, w := t.perAddr.Refused(creds.Addr, now); refused {
			wait = max(wait, w)
		}
	}
	if wait == 0 {
		return nil
	}
	refused := oauthError(http.StatusTooManyRequests, "invalid_client", "Too many failed client authentications; retry later.")
	return refused.withHeader("Retry-After", strconv.Itoa(ratelimit.RetryAfterSeconds(wait)))
}

// fail counts a failed authentication against the address and, when the client exists and
// has a secret to guess, against the client. A public client has none, so failures never
// lock it out: anyone could send its public id with a made-up secret.
func (t *clientAuthThrottle) fail(creds ClientCredentials, client *storage.OAuth2Client, now time.Time) {
	if creds.Addr != "" {
		t.perAddr.Fail(creds.Addr, now)
	}
	if client != nil && client.ClientSecretHash != nil {
		t.perClient.Fail(clientAtAddr(creds), now)
	}
}

// clientAtAddr keys the per-client count by client id and address.
func clientAtAddr(creds ClientCredentials) string { return creds.ID + " " + creds.Addr }
