// Package stripemock runs stripe-mock, Stripe's official mock of its API, for tests of
// the Stripe processor without a network. stripe-mock validates every request against
// Stripe's OpenAPI specification and answers with fixtures, so a test learns that what
// the processor sends is a request Stripe would accept and that it reads Stripe's
// responses. A Proxy in front of it records what was sent, answers as an account does where
// the fixtures do not (confirmed intents succeed, idempotency keys replay their first
// answer) and gives the declines a test asks for; faults need a fake server.
package stripemock

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"till/internal/testtool"
)

// The stripe-mock release the tests run against, built with the go command running them.
const (
	modulePath = "github.com/stripe/stripe-mock"
	version    = "v0.203.0"
)

// startTimeout bounds how long stripe-mock may take to answer after it starts (it loads
// and indexes the whole specification first, about a second).
const startTimeout = 30 * time.Second

// Start runs stripe-mock on loopback until tb ends and returns its base URL, to be given
// to the processor as its API URL. It skips tb, saying why, when stripe-mock cannot be
// installed (no module proxy), and fails it when stripe-mock is installed but does not
// start.
func Start(tb testing.TB) string {
	tb.Helper()
	bin, err := testtool.Install(modulePath, version)
	if err != nil {
		tb.Skipf("stripe-mock %s cannot be installed: %v", version, err)
	}
	var last error
	for range 3 {
		url, err := run(tb, bin)
		if err == nil {
			return url
		}
		last = err
	}
	tb.Fatalf("stripe-mock did not start: %v", last)
	return ""
}

// run starts stripe-mock on two free loopback ports (it serves HTTPS beside HTTP, and
// would bind every interface for it if not told otherwise) and waits until it answers.
// The server stops when tb ends.
func run(tb testing.TB, bin string) (string, error) {
	httpAddr, err := testtool.FreeLoopbackAddr()
	if err != nil {
		return "", err
	}
	httpsAddr, err := testtool.FreeLoopbackAddr()
	if err != nil {
		return "", err
	}
	srv, err := testtool.Start(bin, "-http-addr", httpAddr, "-https-addr", httpsAddr)
	if err != nil {
		return "", err
	}
	url := "http://" + httpAddr
	if err := waitUntilAnswering(url, srv.Exited()); err != nil {
		srv.Stop()
		return "", fmt.Errorf("%w\n%s", err, srv.Output())
	}
	tb.Cleanup(srv.Stop)
	return url, nil
}

// waitUntilAnswering polls stripe-mock until it answers an API request, it exits, or
// startTimeout passes.
func waitUntilAnswering(url string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		req, err := http.NewRequest(http.MethodGet, url+"/v1/customers", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer sk_test_stripemock")
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("stripe-mock exited")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("stripe-mock did not answer within " + startTimeout.String())
		}
	}
}
