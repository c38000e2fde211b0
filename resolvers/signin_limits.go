package resolvers

import (
	"context"

	"till/internal/ratelimit"
)

// SignInLimits are the rate limits of signing in by email, each per client address and
// per email: Request counts asking for codes (each mails someone), Redeem counts offering
// codes and following links. The rules belong to the use cases, so the JSON endpoints and
// the sign-in page draw on one budget; a refusal costs a map lookup, before any query.
type SignInLimits struct {
	Request, Redeem *ratelimit.Guard
}

// allowRequest counts one request for a code for the email emailKey.
func (l *SignInLimits) allowRequest(ctx context.Context, emailKey string) error {
	if l == nil {
		return nil
	}
	return allowSignIn(ctx, l.Request, emailKey)
}

// allowRedeem counts one redemption offered for key: an email, or a magic link's token.
func (l *SignInLimits) allowRedeem(ctx context.Context, key string) error {
	if l == nil {
		return nil
	}
	return allowSignIn(ctx, l.Redeem, key)
}

func allowSignIn(ctx context.Context, g *ratelimit.Guard, key string) error {
	if g == nil {
		return nil
	}
	if ok, wait := g.Allow(ctx, "sign-in", key); !ok {
		return RateLimited(wait)
	}
	return nil
}
