package auth_test

import (
	"testing"

	"till/internal/auth"
)

func TestEveryScopeHasAConsentScreenName(t *testing.T) {
	for _, s := range auth.AllScopes() {
		if s.DisplayName() == string(s) || s.DisplayName() == "" {
			t.Errorf("scope %s has no display name", s)
		}
	}
}

func TestScopeDisplayNames(t *testing.T) {
	for _, tt := range []struct {
		name  string
		scope auth.Scope
		want  string
	}{
		{"openid reads as OpenID", auth.ScopeOpenID, "OpenID"},
		{"email names the address", auth.ScopeEmail, "Read your email address"},
		{"a write scope says what it changes", auth.ScopeOrganizationsWrite, "Create or modify organizations"},
		{"events:write only creates", auth.ScopeEventsWrite, "Create events"},
		{"a reserved scope is its own name", auth.ScopeWebRead, "web:read"},
		{"an unknown name is itself", auth.Scope("nope"), "nope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.scope.DisplayName(); got != tt.want {
				t.Errorf("DisplayName(%s) = %q, want %q", tt.scope, got, tt.want)
			}
		})
	}
}
