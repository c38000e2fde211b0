package resolvers

import (
	"context"
	"reflect"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// Roles are enforced by the guard that checks scopes (@hasScope), from the permission each
// field declares. A user's token acts in an organization with its scopes intersected with
// the permissions of the user's role there; the guard decides per organization:
//
//   - the field sees only the user's organizations whose role grants the permission
//     (organizations narrows to them), so a list shrinks and an object elsewhere is not
//     found, as upstream's get_accessible_org_ids(permission=...) reads do;
//   - a call whose arguments name an organization where the user belongs but the role lacks
//     the permission, or an object of one, is refused with NotPermitted and upstream's
//     message, as upstream asserts a permission on an object it has found;
//   - a call that names no organization or object is refused the same way when no
//     organization of the user's grants the permission and the call is a change, or acts in
//     one organization it must pick (targetOrganization); a list of every organization's
//     objects is then empty instead.
//
// An organization the user does not belong to is never examined: what it holds stays not
// found, as for any other caller. Organization tokens are not subject to roles.

// maxNamedIDs bounds the ids read from one call's arguments for the role check.
const maxNamedIDs = 100

// narrowingKey is the context key of a field's narrowing by role.
type narrowingKey struct{}

// narrowing is what the role check left a field: the user's organizations whose role grants
// the permission it declares, and that permission.
type narrowing struct {
	granted []uuid.UUID
	perm    auth.Permission
}

// narrowed returns the field's narrowing by role, if the role check narrowed it.
func narrowed(ctx context.Context) (narrowing, bool) {
	n, ok := ctx.Value(narrowingKey{}).(narrowing)
	return n, ok
}

// checkRole applies the role rule for perm to the field being resolved, returning the
// context the field runs in.
func (r *Resolver) checkRole(ctx context.Context, perm model.Permission) (context.Context, error) {
	if perm == model.PermissionNone {
		return ctx, nil
	}
	fc := graphql.GetFieldContext(ctx)
	var args any
	if fc != nil {
		args = fc.Args
	}
	return r.narrowByRole(ctx, wirePermission(perm), args, fc != nil && fc.Object == "Mutation")
}

// narrowByRole is the role rule for need over a call whose arguments are args (a map of
// argument values, as GraphQL gives a field): the context of a call the rule admits, where
// organizations lists only those whose role grants need. A change with no such organization,
// or arguments naming an object of an organization whose role does not grant need, is
// refused. Use cases outside GraphQL (exports) apply their list field's rule through it.
func (r *Resolver) narrowByRole(ctx context.Context, need auth.Permission, args any, change bool) (context.Context, error) {
	granted, denied := auth.FromContext(ctx).OrganizationsGranting(need)
	if len(denied) == 0 {
		return ctx, nil
	}
	ctx = context.WithValue(ctx, narrowingKey{}, narrowing{granted: granted, perm: need})
	var ids []uuid.UUID
	if args != nil {
		ids = namedIDs(reflect.ValueOf(args), 0, nil)
	}
	if len(ids) == 0 {
		if len(granted) == 0 && change {
			return nil, permissionDenied(need)
		}
		return ctx, nil
	}
	held, err := storage.OrganizationsHoldAny(ctx, r.db, ids, denied)
	if err != nil {
		return nil, err
	}
	if held {
		return nil, permissionDenied(need)
	}
	return ctx, nil
}

// permissionDenied is the refusal of a user whose role lacks perm. Its cause names the
// permission, for clients that show which one is missing.
func permissionDenied(perm auth.Permission) *Error {
	return &Error{Code: CodeNotPermitted, Detail: perm.DeniedMessage(), Cause: string(perm)}
}

// wirePermission turns organization_manage into organization:manage.
func wirePermission(p model.Permission) auth.Permission {
	v := string(p)
	i := strings.LastIndex(v, "_")
	return auth.Permission(v[:i] + ":" + v[i+1:])
}

// namedIDs collects the UUIDs an argument map names: arguments that are ids, and ids held
// by the fields of input objects one level down (with lists of ids), at most maxNamedIDs.
func namedIDs(v reflect.Value, depth int, out []uuid.UUID) []uuid.UUID {
	if len(out) >= maxNamedIDs || !v.IsValid() {
		return out
	}
	switch x := v.Interface().(type) {
	case uuid.UUID:
		return append(out, x)
	case graphql.Omittable[*uuid.UUID]:
		if id := x.Value(); id != nil {
			return append(out, *id)
		}
		return out
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return out
		}
		return namedIDs(v.Elem(), depth, out)
	case reflect.Map:
		if depth > 0 {
			return out
		}
		for _, k := range v.MapKeys() {
			out = namedIDs(v.MapIndex(k), depth, out)
		}
	case reflect.Struct:
		if depth > 0 {
			return out
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out = namedIDs(v.Field(i), depth+1, out)
			}
		}
	case reflect.Slice:
		if v.Type().Elem() == reflect.TypeFor[uuid.UUID]() {
			for i := range min(v.Len(), maxNamedIDs-len(out)) {
				out = append(out, v.Index(i).Interface().(uuid.UUID))
			}
		}
	}
	return out
}

// checkRelationRole refuses following a relation of obj when the user's role in obj's
// organization lacks perm. The caller reached obj, so its organization is one of the user's
// and the refusal discloses nothing.
func checkRelationRole(ctx context.Context, perm model.Permission, org uuid.UUID) error {
	if perm == model.PermissionNone {
		return nil
	}
	p, need := auth.FromContext(ctx), wirePermission(perm)
	if p.Kind == auth.KindUser && !p.Roles[org].Grants(need) {
		return permissionDenied(need)
	}
	return nil
}

// rolesOf reads storage's roles of a user credential.
func rolesOf(m map[uuid.UUID]string) map[uuid.UUID]auth.Role {
	out := make(map[uuid.UUID]auth.Role, len(m))
	for o, r := range m {
		out[o] = auth.Role(r)
	}
	return out
}
