package security_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"till/graph/model"
	"till/internal/auth"
	"till/resolvers/resolverstest"
)

// declaredPermission is the role permission a field's @hasScope declares, as its wire string
// ("" for none), and whether the field is guarded by @hasScope at all.
func declaredPermission(t *testing.T, f *ast.FieldDefinition) (auth.Permission, bool) {
	t.Helper()
	d := f.Directives.ForName("hasScope")
	if d == nil {
		return "", false
	}
	arg := d.Arguments.ForName("permission")
	if arg == nil || arg.Value == nil || !model.Permission(arg.Value.Raw).IsValid() {
		t.Fatalf("%s declares no role permission on @hasScope", f.Name)
	}
	if arg.Value.Raw == string(model.PermissionNone) {
		return "", true
	}
	v := arg.Value.Raw
	i := strings.LastIndex(v, "_")
	return auth.Permission(v[:i] + ":" + v[i+1:]), true
}

// actingIn replaces every placeholder id of a field's variables by orgID, so that the call
// names the organization the user's role is judged in.
func actingIn(v any, orgID uuid.UUID) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = actingIn(e, orgID)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = actingIn(e, orgID)
		}
		return out
	case string:
		if _, err := uuid.Parse(x); err == nil {
			return orgID.String()
		}
	}
	return v
}

// TestEveryMutationFollowsTheRoleTable calls every mutation of the schema as a user of each
// role, with a token holding every scope, naming the user's own organization wherever the
// mutation takes an id. A role whose permissions lack the one the mutation declares is
// refused with that permission's NotPermitted; every other role gets past the role check
// (the placeholder arguments may still be refused, found missing or conflict). A mutation
// added without a declared permission fails here, or before: @hasScope requires one.
func TestEveryMutationFollowsTheRoleTable(t *testing.T) {
	w := newWorld(t)
	schema := w.Resolver.Schema().Schema()
	all := auth.NewScopeSet(auth.AllScopes()...).String()
	org := w.NewOrg(t, all)
	users := map[auth.Role]resolverstest.User{}
	userOf := func(t *testing.T, role auth.Role, fresh bool) resolverstest.User {
		u, ok := users[role]
		if !ok || fresh {
			u = w.NewUser(t, resolverstest.UserSpec{Scope: all, Orgs: []uuid.UUID{org.ID}, Role: string(role)})
		}
		if !ok {
			users[role] = u
		}
		return u
	}
	for _, f := range schema.Mutation.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		perm, guarded := declaredPermission(t, f)
		doc, vars := operationFor(schema, f)
		vars = actingIn(vars, org.ID).(map[string]any)
		t.Run(f.Name, func(t *testing.T) {
			for _, role := range auth.Roles() {
				want := guarded && perm != "" && !role.Grants(perm)
				// Both ways a user acts in person: a personal access token and a browser
				// session. One who may leave does: a user of its own each time.
				fresh := f.Name == "leaveOrganization"
				for _, p := range []principal{{name: "token", token: userOf(t, role, fresh).Token},
					{name: "browser session", browserOf: userOf(t, role, fresh).ID}} {
					a := w.graphql(t, p, doc, vars)
					switch refusal := a.roleRefusal(); {
					case a.faulted():
						t.Errorf("%s as %s (%s): a server error: %s", f.Name, role, p.name, a.body)
					case want && refusal != perm:
						t.Errorf("%s as %s (%s): want the %s refusal, got %s", f.Name, role, p.name, perm, a.body)
					case !want && refusal != "":
						t.Errorf("%s as %s (%s): refused for %s, which the role holds: %s", f.Name, role, p.name, refusal, a.body)
					}
				}
			}
		})
	}
}
