package resolvers

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"

	"till/internal/ratelimit"
)

// limitPublicLicenseCall counts one call of a public license-key operation (validate,
// activate or deactivate by key alone) against r.licenseLimits, before the call reads
// anything. The rule lives here, in the use case, rather than in front of a route, so /v1,
// GraphQL and every alias of one GraphQL document draw on the same budget: anyone who may
// guess keys without a token gets upstream's three guesses per second per address,
// whichever way they ask.
func (r *Resolver) limitPublicLicenseCall(ctx context.Context, org uuid.UUID, key string) error {
	if r.licenseLimits == nil {
		return nil
	}
	if ok, wait := r.licenseLimits.Allow(ctx, org.String(), key); !ok {
		return RateLimited(wait)
	}
	return nil
}

// RateLimited refuses a call that may be retried after wait.
func RateLimited(wait time.Duration) *Error {
	secs := ratelimit.RetryAfterSeconds(wait)
	unit := " seconds."
	if secs == 1 {
		unit = " second."
	}
	return &Error{Code: CodeRateLimited, Detail: "Rate limit exceeded. Retry in " + strconv.Itoa(secs) + unit,
		RetryAfter: wait}
}
