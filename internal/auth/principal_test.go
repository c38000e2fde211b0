package auth_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/auth"
)

func TestHasAnyScope(t *testing.T) {
	session := auth.Principal{Kind: auth.KindCustomerSession, Scopes: auth.NewScopeSet(auth.ScopeCustomerPortalWrite)}
	oat := auth.Principal{Kind: auth.KindOrganization, Scopes: auth.NewScopeSet(auth.ScopeOrdersRead, auth.ScopeLicenseKeysRead)}
	tests := []struct {
		name      string
		principal auth.Principal
		required  []auth.Scope
		want      bool
	}{
		{"one matching scope of several is enough", oat, []auth.Scope{auth.ScopeLicenseKeysWrite, auth.ScopeLicenseKeysRead}, true},
		{"no matching scope fails", oat, []auth.Scope{auth.ScopeOrdersWrite}, false},
		{"a read scope does not satisfy its write scope", oat, []auth.Scope{auth.ScopeLicenseKeysWrite}, false},
		{"a write scope does not generally satisfy its read scope",
			auth.Principal{Scopes: auth.NewScopeSet(auth.ScopeOrdersWrite)}, []auth.Scope{auth.ScopeOrdersRead}, false},
		{"customer_portal:write satisfies a portal read route", session, []auth.Scope{auth.ScopeCustomerPortalRead}, true},
		{"customer_portal:write satisfies a portal write route", session, []auth.Scope{auth.ScopeCustomerPortalWrite}, true},
		{"a session has no organization scopes", session, []auth.Scope{auth.ScopeOrdersRead}, false},
		{"a route without scopes admits anyone", auth.Principal{}, nil, true},
		{"an anonymous principal has no scopes", auth.Principal{}, []auth.Scope{auth.ScopeOpenID}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.principal.HasAnyScope(tt.required...); got != tt.want {
				t.Fatalf("HasAnyScope(%v) = %v, want %v", tt.required, got, tt.want)
			}
		})
	}
}

func TestContext(t *testing.T) {
	t.Run("a context without a principal yields an anonymous one", func(t *testing.T) {
		p := auth.FromContext(context.Background())
		if !p.Anonymous() || p.Kind != auth.KindAnonymous {
			t.Fatalf("FromContext(empty) = %+v, want anonymous", p)
		}
	})
	t.Run("a stored principal comes back unchanged", func(t *testing.T) {
		want := auth.Principal{
			Kind:          auth.KindUser,
			TokenID:       uuid.New(),
			UserID:        uuid.New(),
			Scopes:        auth.NewScopeSet(auth.ScopeOrdersRead),
			Organizations: []uuid.UUID{uuid.New()},
		}
		got := auth.FromContext(auth.WithPrincipal(context.Background(), want))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("FromContext (-want +got):\n%s", diff)
		}
	})
	t.Run("kinds have readable names", func(t *testing.T) {
		got := []string{auth.KindAnonymous.String(), auth.KindOrganization.String(), auth.KindUser.String(),
			auth.KindCustomerSession.String(), auth.KindMemberSession.String()}
		want := []string{"anonymous", "organization", "user", "customer_session", "member_session"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Kind names (-want +got):\n%s", diff)
		}
	})
}
