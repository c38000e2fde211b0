package auth_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/auth"
)

// TestRolesGrantUpstreamsPermissions checks the role table against upstream's
// ROLE_PERMISSIONS, written out here as upstream's file lists it.
func TestRolesGrantUpstreamsPermissions(t *testing.T) {
	member := []auth.Permission{"members:read", "products:read", "products:manage", "custom_fields:read",
		"custom_fields:manage", "customers:read", "customers:manage", "sales:read", "sales:manage",
		"analytics:read", "analytics:manage", "events:ingest"}
	admin := append([]auth.Permission{"organization:manage", "members:manage", "finance:read", "finance:manage"}, member...)
	finance := []auth.Permission{"sales:read", "sales:manage", "finance:read", "customers:read", "products:read",
		"custom_fields:read", "analytics:read"}
	want := map[auth.Role][]auth.Permission{"owner": admin, "admin": admin, "member": member, "finance": finance}
	for _, role := range auth.Roles() {
		t.Run(string(role)+" holds exactly upstream's permissions", func(t *testing.T) {
			held := map[auth.Permission]bool{}
			for _, p := range want[role] {
				held[p] = true
			}
			for _, p := range auth.Permissions() {
				if got := role.Grants(p); got != held[p] {
					t.Errorf("%s grants %s: %v, want %v", role, p, got, held[p])
				}
			}
		})
	}
	t.Run("a role the principal was built without grants nothing", func(t *testing.T) {
		for _, p := range auth.Permissions() {
			if auth.Role("").Grants(p) || auth.Role("king").Grants(p) {
				t.Errorf("an unknown role grants %s", p)
			}
		}
	})
	t.Run("every permission has upstream's refusal", func(t *testing.T) {
		if got := auth.PermissionMembersManage.DeniedMessage(); got != "You don't have permission to manage members" {
			t.Errorf("members:manage refusal = %q", got)
		}
		for _, p := range auth.Permissions() {
			if p.DeniedMessage() == auth.Permission("nothing").DeniedMessage() {
				t.Errorf("%s has no refusal of its own", p)
			}
		}
	})
	t.Run("no role but owner and admin exceeds another", func(t *testing.T) {
		for _, a := range auth.Roles() {
			for _, b := range []auth.Role{auth.RoleOwner, auth.RoleAdmin} {
				if a.Exceeds(b) {
					t.Errorf("%s exceeds %s", a, b)
				}
			}
		}
		if !auth.RoleMember.Exceeds(auth.RoleFinance) || !auth.RoleFinance.Exceeds(auth.RoleMember) {
			t.Error("member and finance each hold a permission the other lacks")
		}
	})
}

// TestOrganizationsGrantingSplitsByRole: a user's organizations split by what the role held
// in each allows; other principals are not subject to roles.
func TestOrganizationsGrantingSplitsByRole(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	user := auth.Principal{Kind: auth.KindUser, Organizations: []uuid.UUID{a, b, c},
		Roles: map[uuid.UUID]auth.Role{a: auth.RoleOwner, b: auth.RoleMember}}
	tests := []struct {
		name            string
		p               auth.Principal
		perm            auth.Permission
		granted, denied []uuid.UUID
	}{
		{"an owner's organization grants managing it, a member's and one without a role do not", user,
			auth.PermissionOrganizationManage, []uuid.UUID{a}, []uuid.UUID{b, c}},
		{"products are managed where the user is owner or member", user,
			auth.PermissionProductsManage, []uuid.UUID{a, b}, []uuid.UUID{c}},
		{"an organization token is the organization", auth.Principal{Kind: auth.KindOrganization, OrganizationID: a},
			auth.PermissionMembersManage, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			granted, denied := tt.p.OrganizationsGranting(tt.perm)
			if !cmp.Equal(granted, tt.granted) || !cmp.Equal(denied, tt.denied) {
				t.Errorf("granted %v denied %v, want %v and %v", granted, denied, tt.granted, tt.denied)
			}
		})
	}
}
