package auth_test

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/auth"
)

// publishedContract is the upstream OpenAPI subset, relative to this package
// in the Till workspace; tests that need it skip when it is not checked out.
const publishedContract = "../../../shared/contract/openapi-2026-04-subset.json"

func TestParseScopes(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    []auth.Scope
		wantErr string
	}{
		{"a space-separated list parses", "orders:read license_keys:write",
			[]auth.Scope{auth.ScopeOrdersRead, auth.ScopeLicenseKeysWrite}, ""},
		{"a comma-separated list parses", "orders:read,license_keys:write",
			[]auth.Scope{auth.ScopeOrdersRead, auth.ScopeLicenseKeysWrite}, ""},
		{"commas and spaces mix and repeat freely", " orders:read , ,license_keys:write  orders:read ",
			[]auth.Scope{auth.ScopeOrdersRead, auth.ScopeLicenseKeysWrite}, ""},
		{"an empty list is an empty set", "", []auth.Scope{}, ""},
		{"all expands to every scope", "all", auth.AllScopes(), ""},
		{"all absorbs other names", "openid all", auth.AllScopes(), ""},
		{"an unknown scope is an error naming it", "orders:read orders:delete", nil, `auth: unknown scope "orders:delete"`},
		{"a reserved web scope is not grantable", "web:write", nil, `auth: unknown scope "web:write"`},
		{"a scope name is case-sensitive", "Orders:Read", nil, `auth: unknown scope "Orders:Read"`},
		{"a scope removed upstream is unknown", "repositories:read", nil, `auth: unknown scope "repositories:read"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := auth.ParseScopes(tt.input)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseScopes(%q) error = %v, want %s", tt.input, err, tt.wantErr)
				}
				var unknown *auth.UnknownScopeError
				if !errors.As(err, &unknown) {
					t.Fatalf("ParseScopes(%q) error %T is not *UnknownScopeError", tt.input, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseScopes(%q) error = %v", tt.input, err)
			}
			if diff := cmp.Diff(tt.want, got.List()); diff != "" {
				t.Fatalf("ParseScopes(%q) (-want +got):\n%s", tt.input, diff)
			}
		})
	}
}

func TestAllScopes(t *testing.T) {
	t.Run("the list matches the published Scope enum in order", func(t *testing.T) {
		doc := readContract(t)
		var want []auth.Scope
		for _, s := range doc.Components.Schemas.Scope.Enum {
			want = append(want, auth.Scope(s))
		}
		if diff := cmp.Diff(want, auth.AllScopes()); diff != "" {
			t.Fatalf("AllScopes() (-published +got):\n%s", diff)
		}
	})

	t.Run("every scope a published operation requires is known", func(t *testing.T) {
		doc := readContract(t)
		for path, ops := range doc.Paths {
			for method, op := range ops {
				for _, req := range op.Security {
					for _, scopes := range req {
						for _, s := range scopes {
							if !auth.Scope(s).Known() {
								t.Errorf("%s %s requires unknown scope %q", method, path, s)
							}
						}
					}
				}
			}
		}
	})

	t.Run("callers cannot change the table through the returned slice", func(t *testing.T) {
		all := auth.AllScopes()
		all[0] = "tampered"
		if auth.AllScopes()[0] != auth.ScopeOpenID {
			t.Fatal("AllScopes shares its backing array")
		}
	})

	t.Run("reserved web scopes are not grantable", func(t *testing.T) {
		for _, s := range []auth.Scope{auth.ScopeWebRead, auth.ScopeWebWrite} {
			if s.Known() || slices.Contains(auth.AllScopes(), s) {
				t.Errorf("%s is listed as grantable", s)
			}
		}
	})
}

func TestScopeSet(t *testing.T) {
	t.Run("String lists scopes in canonical order then unknown ones sorted", func(t *testing.T) {
		set := auth.NewScopeSet("zz:custom", auth.ScopeWebhooksWrite, auth.ScopeOpenID, "aa:custom")
		const want = "openid webhooks:write aa:custom zz:custom"
		if got := set.String(); got != want {
			t.Fatalf("String() = %q, want %q", got, want)
		}
	})
	t.Run("a nil set is empty and readable", func(t *testing.T) {
		var set auth.ScopeSet
		if set.Has(auth.ScopeOpenID) || set.String() != "" || len(set.List()) != 0 {
			t.Fatal("nil ScopeSet is not empty")
		}
	})
}

// contract is the part of the OpenAPI document the scope tests read.
type contract struct {
	Paths map[string]map[string]struct {
		Security []map[string][]string `json:"security"`
	} `json:"paths"`
	Components struct {
		Schemas struct {
			Scope struct {
				Enum []string `json:"enum"`
			} `json:"Scope"`
		} `json:"schemas"`
	} `json:"components"`
}

func readContract(tb testing.TB) contract {
	tb.Helper()
	data, err := os.ReadFile(publishedContract)
	if errors.Is(err, os.ErrNotExist) {
		tb.Skipf("%s is not checked out", publishedContract)
	}
	if err != nil {
		tb.Fatal(err)
	}
	var doc contract
	if err := json.Unmarshal(data, &doc); err != nil {
		tb.Fatalf("decoding %s: %v", publishedContract, err)
	}
	if len(doc.Components.Schemas.Scope.Enum) == 0 {
		tb.Fatalf("%s has no Scope enum", publishedContract)
	}
	return doc
}
