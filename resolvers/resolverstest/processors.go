package resolverstest

import (
	"testing"

	"till/internal/payment"
	"till/internal/payment/stripemock"
	"till/resolvers"
)

// WithStripeMock builds the application on the Stripe processor, talking to stripe-mock
// through a recording proxy that the test may inspect and steer (stripemock.Proxy), so a
// test runs the real Stripe integration with no network.
func WithStripeMock(tb testing.TB) (Option, *stripemock.Proxy) {
	tb.Helper()
	proxy := stripemock.StartProxy(tb)
	p, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_till", APIURL: proxy.URL})
	if err != nil {
		tb.Fatal(err)
	}
	return func(d *resolvers.Deps) { d.Payments = p }, proxy
}
