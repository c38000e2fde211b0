package resolvers_test

import (
	"testing"

	"till/internal/payment"
	"till/internal/payment/stripemock"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// stripeOverMock is the Stripe processor talking to stripe-mock through a recording proxy,
// as an application's processor.
func stripeOverMock(tb testing.TB) (resolverstest.Option, *stripemock.Proxy) {
	tb.Helper()
	proxy := stripemock.StartProxy(tb)
	p, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_till", APIURL: proxy.URL})
	if err != nil {
		tb.Fatal(err)
	}
	return func(d *resolvers.Deps) { d.Payments = p }, proxy
}

// sentTo lists the requests sent on a route ("POST /v1/customers"), oldest first.
func sentTo(proxy *stripemock.Proxy, route string) []stripemock.Request {
	var out []stripemock.Request
	for _, r := range proxy.Requests() {
		if r.Route() == route {
			out = append(out, r)
		}
	}
	return out
}
