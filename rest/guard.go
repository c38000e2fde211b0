package rest

import (
	"errors"
	"slices"

	"till/internal/auth"
)

// Guard declares who may call a hand-written route (one with Handler set). Routes that run
// a persisted operation have no Guard of their own: their root fields' schema directives
// (@hasScope, @portal, @billing, @public, @firstParty) are the guard, checked before the
// request is validated, so the rule is written once for GraphQL and /v1.
//
// A hand-written route must declare one, or the router refuses to start: the security tests
// read these declarations to know what each principal should get from each route.
type Guard struct {
	// Public, when set, says the route needs no bearer token and names what authenticates
	// the caller instead (the client's credentials in the form, an authorization request
	// that only a registered redirect URI can receive).
	Public string
	// Kinds are the principal kinds the route serves. Anonymous in the list (with Public)
	// means a bearer token is not wanted at all; other kinds get Refusal.
	Kinds []auth.Kind
	// Scopes admit organization and user principals holding any one of them.
	Scopes []auth.Scope
	// Delegated limits the route to OAuth2 access tokens, which the route reads itself; any
	// other bearer token is invalid_token there, as upstream's resource protector answers.
	Delegated bool
	// Browser admits a user principal only when a browser session carries it: the route acts
	// for the user in person, which a token (even the user's own) never does. Other user
	// principals get Refusal.
	Browser bool
	// Refusal is the status given to a principal kind not in Kinds (other than anonymous,
	// which is always 401): 401 unless set.
	Refusal int
}

// declared reports whether the guard says anything; the zero Guard is an undeclared one.
func (g Guard) declared() bool {
	return g.Public != "" || len(g.Kinds) > 0 || g.Delegated
}

// Admits reports whether a principal kind is among those the route serves.
func (g Guard) Admits(k auth.Kind) bool { return slices.Contains(g.Kinds, k) }

// guardProblem reports a hand-written route without a declared guard, or with scopes that
// no admitted kind could hold.
func guardProblem(r Route) error {
	if r.Handler == nil {
		return nil
	}
	if !r.Guard.declared() {
		return errors.New("hand-written route declares no Guard")
	}
	if len(r.Guard.Scopes) > 0 && !r.Guard.Admits(auth.KindOrganization) && !r.Guard.Admits(auth.KindUser) {
		return errors.New("Guard has scopes but admits neither organization nor user principals")
	}
	return nil
}
