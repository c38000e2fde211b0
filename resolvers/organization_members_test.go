package resolvers_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers/resolverstest"
)

func TestMembersAreManagedByOwnersAndAdminsWithinTheirRoles(t *testing.T) {
	s := resolverstest.New(t)
	tm := newTeam(t, s)
	owner, admin, member, finance := tm.users[auth.RoleOwner], tm.users[auth.RoleAdmin], tm.users[auth.RoleMember], tm.users[auth.RoleFinance]
	other := newTeam(t, s)
	change := func(user resolverstest.User, role string) vars {
		return vars{"input": vars{"userId": user.ID, "role": role}}
	}
	remove := func(user resolverstest.User) vars { return vars{"input": vars{"userId": user.ID}} }
	for _, c := range []struct {
		name, token, doc string
		vars             vars
		code, reason     string // "" for success
	}{
		{"a member may not invite", member.Token, inviteDoc, vars{"input": vars{"email": "m@example.com"}}, "FORBIDDEN", "NotPermitted"},
		{"finance may not list the members", finance.Token, membersDoc, vars{"org": tm.org.ID}, "FORBIDDEN", "NotPermitted"},
		{"finance may not list them naming no organization either", finance.Token, membersDoc, nil, "FORBIDDEN", "NotPermitted"},
		{"a member may not change a role", member.Token, changeRoleDoc, change(finance, "member"), "FORBIDDEN", "NotPermitted"},
		{"an admin may not make an owner", admin.Token, changeRoleDoc, change(member, "owner"), "FORBIDDEN", "NotPermitted"},
		{"an admin may not invite an owner", admin.Token, inviteDoc, vars{"input": vars{"email": "o@example.com", "role": "owner"}}, "FORBIDDEN", "NotPermitted"},
		{"an admin may not demote an owner", admin.Token, changeRoleDoc, change(owner, "admin"), "FORBIDDEN", "NotPermitted"},
		{"an admin may not remove an owner", admin.Token, removeMemberDoc, remove(owner), "FORBIDDEN", "NotPermitted"},
		{"the last owner may not step down", owner.Token, changeRoleDoc, change(owner, "admin"), "CONFLICT", "CannotRemoveOrganizationOwner"},
		{"the last owner may not leave", owner.Token, leaveDoc, nil, "CONFLICT", "CannotRemoveOrganizationOwner"},
		{"the last owner may not be removed", owner.Token, removeMemberDoc, remove(owner), "CONFLICT", "CannotRemoveOrganizationOwner"},
		{"another organization's member is not found", owner.Token, removeMemberDoc, remove(other.users[auth.RoleMember]), "NOT_FOUND", "ResourceNotFound"},
		{"another organization is not one to act in", owner.Token, changeRoleDoc,
			vars{"input": vars{"organizationId": other.org.ID, "userId": other.users[auth.RoleMember].ID, "role": "admin"}},
			"BAD_USER_INPUT", "PolarRequestValidationError"},
		{"an organization token may not change roles", tm.org.Token, changeRoleDoc, change(member, "admin"), "FORBIDDEN", "Unauthorized"},
		{"an admin moves a member to finance", admin.Token, changeRoleDoc, change(member, "finance"), "", ""},
		{"and back", admin.Token, changeRoleDoc, change(member, "member"), "", ""},
		{"an owner makes an admin an owner", owner.Token, changeRoleDoc, change(admin, "owner"), "", ""},
		{"who then lets the first owner step down", admin.Token, changeRoleDoc, change(owner, "admin"), "", ""},
		{"and removes them", admin.Token, removeMemberDoc, remove(owner), "", ""},
		{"finance leaves", finance.Token, leaveDoc, nil, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.code == "" {
				s.Query(t, c.token, c.doc, c.vars, nil)
				return
			}
			wantCode(t, s.QueryError(t, c.token, c.doc, c.vars), c.code, c.reason)
		})
	}
	got := members(t, s, admin.Token, tm.org.ID)
	want := map[uuid.UUID]string{admin.ID: "owner", member.ID: "member"}
	if len(got) != len(want) || got[admin.ID].Role != want[admin.ID] || got[member.ID].Role != want[member.ID] {
		t.Errorf("members %+v, want %v", got, want)
	}
	if got[member.ID].Email != member.Email || got[member.ID].OrganizationID != tm.org.ID {
		t.Errorf("member %+v", got[member.ID])
	}
	wantError(t, s.QueryError(t, owner.Token, `{ organization { id } }`, nil), "NOT_FOUND", "ResourceNotFound")
}

// TestOwnersDemotingEachOtherAtOnceKeepOne races two owners demoting each other through the
// API, many organizations at once: in each, one demotion wins and one owner is left.
func TestOwnersDemotingEachOtherAtOnceKeepOne(t *testing.T) {
	s := resolverstest.New(t)
	const rounds = 20
	type pair struct {
		org  uuid.UUID
		a, b resolverstest.User
	}
	pairs := make([]pair, rounds)
	for i := range pairs {
		org := s.NewOrg(t, resolverstest.AllScopes)
		spec := resolverstest.UserSpec{Scope: allScopes, Orgs: []uuid.UUID{org.ID}, Role: "owner"}
		pairs[i] = pair{org: org.ID, a: s.NewUser(t, spec), b: s.NewUser(t, spec)}
	}
	var wg sync.WaitGroup
	for _, p := range pairs {
		for _, by := range [][2]resolverstest.User{{p.a, p.b}, {p.b, p.a}} {
			wg.Go(func() {
				res := s.Do(t, by[0].Token, changeRoleDoc, vars{"input": vars{"userId": by[1].ID, "role": "admin"}})
				for _, e := range res.Errors {
					if e.Extensions.Code != "FORBIDDEN" && e.Extensions.Code != "CONFLICT" {
						t.Errorf("demotion refused with %s (%s) %q", e.Extensions.Code, e.Extensions.Reason, e.Message)
					}
				}
			})
		}
	}
	wg.Wait()
	for i, p := range pairs {
		var owners int
		s.Get(t, &owners, `SELECT count(*) FROM user_organizations WHERE organization_id = $1 AND role = 'owner'
			AND deleted_at IS NULL`, p.org)
		if owners != 1 {
			t.Errorf("round %d: %d owners left, want 1", i, owners)
		}
	}
}

// TestARemovedMemberLosesTheOrganizationAtOnce keeps principals for an hour in a cache that
// hears no notifications: the removal's own request makes this process forget them, so the
// removed member's very next request no longer reaches the organization.
func TestARemovedMemberLosesTheOrganizationAtOnce(t *testing.T) {
	s := resolverstest.New(t)
	tm := newTeam(t, s)
	cache := auth.NewCache(s.Resolver, time.Hour, time.Now, nil)
	srv := httptest.NewServer(auth.Middleware(cache, s.Secret)(s.Resolver.Handler()))
	defer srv.Close()
	post := func(token, doc string, v vars) *resolverstest.Response {
		t.Helper()
		res, err := resolverstest.Post(t.Context(), srv.Client(), srv.URL, token, doc, v)
		if err != nil || res.Status != http.StatusOK {
			t.Fatalf("HTTP %v: %v", res, err)
		}
		return res
	}
	const read = `{ organization { id } }`
	member := tm.users[auth.RoleMember]
	for range 2 {
		if res := post(member.Token, read, nil); len(res.Errors) > 0 {
			t.Fatalf("the member cannot read the organization: %s", res.Body)
		}
	}
	if p, err := cache.ResolveToken(t.Context(), auth.TokenPersonal, auth.Hash(s.Secret, member.Token)); err != nil ||
		p.Roles[tm.org.ID] != auth.RoleMember {
		t.Fatalf("the cache holds %+v, %v", p, err)
	}
	if res := post(tm.users[auth.RoleAdmin].Token, removeMemberDoc, vars{"input": vars{"userId": member.ID}}); len(res.Errors) > 0 {
		t.Fatalf("removing: %s", res.Body)
	}
	if res := post(member.Token, read, nil); len(res.Errors) != 1 || res.Errors[0].Extensions.Code != "NOT_FOUND" {
		t.Errorf("the removed member's next request: %s", res.Body)
	}
}
