package resolvers_test

import (
	"fmt"
	"strings"
	"testing"

	"till/internal/ratelimit"
	"till/resolvers"
)

// TestPublicLicenseOperationsAreRateLimitedPerAlias pins that the public license rule
// counts calls, not requests: one document that guesses hundreds of keys through aliases
// (as many as the document limits let through) gets the client's three calls, and every
// other alias is refused before it reads a key.
func TestPublicLicenseOperationsAreRateLimitedPerAlias(t *testing.T) {
	guard, err := ratelimit.New(ratelimit.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := newKeyWorld(t, vars{"activations": nil}, func(d *resolvers.Deps) { d.LicenseLimits = guard })
	const guesses = 200
	var doc strings.Builder
	doc.WriteString("mutation($org: UUID!) {")
	for i := range guesses {
		fmt.Fprintf(&doc, ` g%d: portalValidateLicenseKey(input: {organizationId: $org, key: "GUESS-%d"}) { valid }`, i, i)
	}
	doc.WriteString(" }")

	// Each refused alias is null beside its error: the errors tell which ran.
	res := w.s.Do(t, "", doc.String(), vars{"org": w.org.ID})
	refused := map[string]bool{}
	for _, e := range res.Errors {
		if e.Extensions.Code != "RATE_LIMITED" || e.Extensions.RetryAfter != 60 || len(e.Path) != 1 {
			t.Fatalf("error %+v, want RATE_LIMITED with retryAfter 60 on one alias", e)
		}
		refused[fmt.Sprint(e.Path[0])] = true
	}
	if len(refused) != guesses-3 || refused["g0"] || refused["g1"] || refused["g2"] {
		t.Fatalf("%d of %d guesses refused (g0 %v, g1 %v, g2 %v); want all but the first three",
			len(refused), guesses, refused["g0"], refused["g1"], refused["g2"])
	}

	t.Run("and the same client is refused on its next request", func(t *testing.T) {
		e := w.s.QueryError(t, "", `mutation($in: LicenseKeyValidateInput!) { portalValidateLicenseKey(input: $in) { valid } }`,
			vars{"in": vars{"organizationId": w.org.ID, "key": w.key.Key}})
		if e.Extensions.Code != "RATE_LIMITED" || e.Extensions.RetryAfter != 60 || e.Message != "Rate limit exceeded. Retry in 60 seconds." {
			t.Fatalf("error %+v", e)
		}
	})
}
