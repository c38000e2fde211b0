package resolvers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

const (
	// maxPersonalTokens is how many unrevoked personal tokens a user may hold; it bounds the
	// list the schema declares with @listSize.
	maxPersonalTokens = 100
	// maxTokenComment is the longest name a token may have, in characters.
	maxTokenComment = 255
	// minTokenLifetime is the shortest lifetime a token may be given.
	minTokenLifetime = time.Minute
	// tokenUseResolution is how stale a token's recorded last use may get before a request
	// it authenticates records it again.
	tokenUseResolution = time.Minute
)

// PersonalTokenRequest is what a new personal access token may do and for how long.
type PersonalTokenRequest struct {
	// Comment is the name the owner recognises the token by.
	Comment string
	// Scopes is what the token may do; at least one.
	Scopes auth.ScopeSet
	// Lifetime is how long the token works; 0 never expires.
	Lifetime time.Duration
}

// CreatePersonalToken makes a personal access token for the live user userID and returns it
// with the token, which is stored only as its hash. The operator command calls it directly;
// GraphQL first checks the scopes against the calling token.
func (r *Resolver) CreatePersonalToken(ctx context.Context, userID uuid.UUID, req PersonalTokenRequest) (*model.PersonalAccessTokenCreatePayload, error) {
	if utf8.RuneCountInString(req.Comment) > maxTokenComment {
		return nil, Invalid("string_too_long", fmt.Sprintf("String should have at most %d characters", maxTokenComment),
			req.Comment, "input", "comment")
	}
	if len(req.Scopes) == 0 {
		return nil, Invalid("too_short", "List should have at least 1 item after validation, not 0", []string{},
			"input", "scopes")
	}
	if req.Lifetime != 0 && req.Lifetime < minTokenLifetime {
		return nil, Invalid("greater_than_equal", "Input should be greater than or equal to 60",
			int(req.Lifetime/time.Second), "input", "expiresIn")
	}
	var expires *time.Time
	if req.Lifetime > 0 {
		t := r.Now().Add(req.Lifetime)
		expires = &t
	}
	token := auth.Generate(auth.PrefixPersonalAccessToken)
	t, err := storage.CreatePersonalToken(ctx, r.db, userID, auth.Hash(r.secret, token), req.Scopes.String(),
		req.Comment, expires, maxPersonalTokens)
	switch {
	case errors.Is(err, storage.ErrTooManyTokens):
		return nil, BadRequest(fmt.Sprintf("A user may hold at most %d personal access tokens; revoke one first.", maxPersonalTokens))
	case err != nil:
		return nil, notFoundOr(err, "User not found.")
	}
	return &model.PersonalAccessTokenCreatePayload{PersonalAccessToken: t, Token: token}, nil
}

// createPersonalAccessToken makes a token for the calling user that can do no more than the
// calling token: a narrow token must not be able to mint a wider one.
func (r *Resolver) createPersonalAccessToken(ctx context.Context, in model.PersonalAccessTokenCreateInput) (*model.PersonalAccessTokenCreatePayload, error) {
	p := auth.FromContext(ctx)
	scopes, err := auth.ParseScopes(strings.Join(in.Scopes, " "))
	if err != nil {
		return nil, Invalid("enum", err.Error(), in.Scopes, "input", "scopes")
	}
	for _, s := range scopes.List() {
		if !p.Scopes.Has(s) {
			return nil, Invalid("value_error", fmt.Sprintf("The calling token does not hold the scope %s.", s),
				string(s), "input", "scopes")
		}
	}
	req := PersonalTokenRequest{Comment: in.Comment, Scopes: scopes}
	if in.ExpiresIn != nil {
		if *in.ExpiresIn <= 0 {
			return nil, Invalid("greater_than_equal", "Input should be greater than or equal to 60", *in.ExpiresIn,
				"input", "expiresIn")
		}
		req.Lifetime = time.Duration(*in.ExpiresIn) * time.Second
	}
	return r.CreatePersonalToken(ctx, p.UserID, req)
}

// personalAccessTokens lists the calling user's unrevoked tokens.
func (r *Resolver) personalAccessTokens(ctx context.Context) ([]*storage.PersonalAccessToken, error) {
	return storage.ListPersonalTokens(ctx, r.db, auth.FromContext(ctx).UserID)
}

// revokePersonalAccessToken revokes one of the calling user's tokens. Once the revocation
// has committed, this process forgets the tokens it keeps, so the next request with the
// token is refused here at once; the change notification does the same in other processes.
func (r *Resolver) revokePersonalAccessToken(ctx context.Context, id uuid.UUID) (*storage.PersonalAccessToken, error) {
	t, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.PersonalAccessToken, error) {
		return storage.RevokePersonalToken(ctx, q, auth.FromContext(ctx).UserID, id)
	})
	if err != nil {
		return nil, notFoundOr(err, "Personal access token not found.")
	}
	auth.TokensChanged(ctx)
	return t, nil
}

// personalTokenScopes is a token's scope as a list, in canonical order.
func personalTokenScopes(t *storage.PersonalAccessToken) []string {
	return strings.Fields(t.Scope)
}

// recordPersonalTokenUse records that the token t authenticated a request, when its recorded
// last use is older than tokenUseResolution. A failure to record is logged, not returned:
// the token is valid, and bookkeeping must not refuse a request.
func (r *Resolver) recordPersonalTokenUse(ctx context.Context, t *storage.ResolvedToken) {
	if t.LastUsedAt != nil && r.Now().Sub(*t.LastUsedAt) < tokenUseResolution {
		return
	}
	if err := storage.TouchPersonalToken(ctx, r.db, t.ID); err != nil {
		slog.WarnContext(ctx, "recording a personal access token's use failed", "token_id", t.ID, "error", err)
	}
}
