package security_test

import (
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"till/internal/auth"
	"till/rest"
)

// outcome is how a guard treats a principal, as a client observes it.
type outcome string

const (
	// admitted: past the guard. The answer may still be a not-found, a validation error or
	// a conflict (the suite's arguments are placeholders), but never a refusal of the
	// principal and never a server error.
	admitted outcome = "admitted"
	// unauthenticated: 401, the principal is not one the field or route serves.
	unauthenticated outcome = "unauthenticated"
	// forbidden: 403, the right kind of principal without the scope or role.
	forbidden outcome = "forbidden"
	// invalidToken: 401 invalid_token from the bearer middleware, before any routing.
	invalidToken outcome = "invalid token"
	// refusedInput: the arguments were refused as input. After the guard that is an
	// admitted caller's answer; before it, the suite's placeholders no longer fit the schema.
	refusedInput outcome = "refused input"
)

// guardDirectives are the directives that declare a root field's guard; every root field
// carries exactly one.
var guardDirectives = []string{"hasScope", "portal", "billing", "public", "firstParty", "teamManager"}

// expectField is what a field's guard directives promise p, written from the directives'
// documented meaning rather than from their implementation.
func expectField(dirs ast.DirectiveList, p principal) outcome {
	if p.invalid {
		return invalidToken
	}
	for _, d := range dirs {
		var o outcome
		switch d.Name {
		case "hasScope":
			kinds := []auth.Kind{auth.KindOrganization, auth.KindUser}
			if arg := d.Arguments.ForName("usersOnly"); arg != nil && arg.Value.Raw == "true" {
				kinds = []auth.Kind{auth.KindUser}
			}
			o = expectScoped(kinds, directiveScopes(d), p)
		case "portal":
			o = expectKinds([]auth.Kind{auth.KindCustomerSession, auth.KindMemberSession}, p)
		case "billing":
			o = expectKinds([]auth.Kind{auth.KindCustomerSession, auth.KindMemberSession}, p)
			if o == admitted && p.kind == auth.KindMemberSession && p.role != "owner" && p.role != "billing_manager" {
				o = forbidden
			}
		case "teamManager":
			o = expectKinds([]auth.Kind{auth.KindMemberSession}, p)
			if o == admitted && p.role != "owner" && p.role != "billing_manager" {
				o = forbidden
			}
		case "firstParty":
			o = expectKinds([]auth.Kind{auth.KindUser}, p)
			if o == admitted && p.delegated {
				o = forbidden
			}
		}
		if o != "" && o != admitted {
			return o
		}
	}
	return admitted
}

// expectRoute is what a hand-written route's declared rest.Guard promises p.
func expectRoute(g rest.Guard, p principal) outcome {
	if p.invalid {
		return invalidToken
	}
	if g.Delegated && !p.delegated && p.kind != auth.KindAnonymous {
		return invalidToken
	}
	if p.kind == auth.KindAnonymous && !g.Admits(p.kind) {
		return unauthenticated
	}
	if !g.Admits(p.kind) || (g.Browser && p.kind == auth.KindUser && p.browserOf == uuid.Nil) {
		if g.Refusal == 403 {
			return forbidden
		}
		return unauthenticated
	}
	if len(g.Scopes) > 0 && !p.holdsAny(g.Scopes) {
		return forbidden
	}
	return admitted
}

func expectKinds(kinds []auth.Kind, p principal) outcome {
	if !slices.Contains(kinds, p.kind) {
		return unauthenticated
	}
	return admitted
}

func expectScoped(kinds []auth.Kind, scopes []auth.Scope, p principal) outcome {
	if o := expectKinds(kinds, p); o != admitted {
		return o
	}
	if !p.holdsAny(scopes) {
		return forbidden
	}
	return admitted
}

// directiveScopes reads @hasScope(any: [...]) as wire scopes: customer_portal_write is
// customer_portal:write.
func directiveScopes(d *ast.Directive) []auth.Scope {
	var out []auth.Scope
	if arg := d.Arguments.ForName("any"); arg != nil {
		for _, c := range arg.Value.Children {
			v := strings.ToLower(c.Value.Raw)
			i := strings.LastIndex(v, "_")
			out = append(out, auth.Scope(v[:i]+":"+v[i+1:]))
		}
	}
	return out
}

// guardsOf returns the guard directives among a field's directives.
func guardsOf(f *ast.FieldDefinition) ast.DirectiveList {
	var out ast.DirectiveList
	for _, d := range f.Directives {
		if slices.Contains(guardDirectives, d.Name) {
			out = append(out, d)
		}
	}
	return out
}
