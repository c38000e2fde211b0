package resolvers

import (
	"context"
	"encoding/json"
	"math"
	"reflect"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// nestable is a paginated relation PostgreSQL can write inside its parent's JSON when a
// root list's items select it (storage.Nested): the record type of its items, the sorting
// criteria of its list, and how storage reads it for the caller's organizations, without
// the filters (a relation asked with a filter is resolved as usual).
type nestable struct {
	record reflect.Type
	sorts  map[string]string
	nest   func(orgs []uuid.UUID, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested
}

// nestedRelation is the relation named Type.field when it can be nested. Each reads what
// its resolver reads for a token (portal sessions are never nested).
func nestedRelation(name string) (nestable, bool) {
	switch name {
	case "Customer.orders":
		return nestable{reflect.TypeFor[*storage.Order](), orderSorts,
			func(orgs []uuid.UUID, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestOrdersOfCustomers(orgs, orderFilterOf(nil), sorts, w, page)
			}}, true
	case "Customer.subscriptions":
		return nestable{reflect.TypeFor[*storage.Subscription](), subscriptionSorts,
			func(orgs []uuid.UUID, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestSubscriptionsOfCustomers(orgs, subscriptionFilterOf(nil), sorts, w, page)
			}}, true
	case "Customer.benefitGrants":
		return nestable{reflect.TypeFor[*storage.BenefitGrant](), grantSorts,
			func(orgs []uuid.UUID, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestGrantsOfCustomers(orgs, storage.GrantListFilter{}, sorts, w, page)
			}}, true
	case "Customer.licenseKeys":
		return nestable{reflect.TypeFor[*storage.LicenseKey](), licenseKeySorts,
			func(orgs []uuid.UUID, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestLicenseKeysOfCustomers(orgs, storage.LicenseKeyListFilter{}, sorts, w, page)
			}}, true
	}
	return nestable{}, false
}

// maxNestedDepth is how many relations deep a root list's items are written by PostgreSQL:
// its items' relations, not theirs.
const maxNestedDepth = 1

// nestedField plans f, a field of an item of type typ, as a relation written inside the
// item: a nestable relation the caller may follow, asked with at most a page, a limit and
// a sorting, whose page shows items PostgreSQL writes whole, their pagination and
// __typename. ok is false for anything else, which the executor then resolves.
func (p itemsPlan) nestedField(typ string, f graphql.CollectedField) (storage.RenderField, bool) {
	rel, ok := nestedRelation(typ + "." + f.Name)
	if !ok || p.depth < 0 || p.depth >= maxNestedDepth || f.Definition == nil || !mayFollow(p.ctx, f.Definition) {
		return storage.RenderField{}, false
	}
	a, ok := nestedArgs(f.ArgumentMap(p.oc.Variables))
	if !ok {
		return storage.RenderField{}, false
	}
	w, sorts, err := a.windowAndSorts(rel.sorts)
	if err != nil {
		return storage.RenderField{}, false
	}
	page := f.Definition.Type.Name()
	if !conditionsOnly(p.oc, f.Selections, page) {
		return storage.RenderField{}, false
	}
	var fields []storage.RenderField
	for _, pf := range graphql.CollectFields(p.oc, f.Selections, []string{page}) {
		switch pf.Name {
		case "__typename":
			fields = append(fields, storage.RenderField{Key: pf.Alias, Literal: page})
		case "items":
			child := itemsPlan{ctx: p.ctx, oc: p.oc, record: rel.record, renders: true, depth: p.depth + 1}
			if w.Columns, w.Render = child.of(f.Selections, page); w.Render == nil {
				return storage.RenderField{}, false
			}
			fields = append(fields, storage.RenderField{Key: pf.Alias, Kind: "items"})
		case "pagination":
			sub, ok := paginationFields(p.oc, pf)
			if !ok {
				return storage.RenderField{}, false
			}
			fields = append(fields, storage.RenderField{Key: pf.Alias, Kind: "object", Fields: sub})
		default:
			return storage.RenderField{}, false
		}
	}
	return storage.RenderField{Key: f.Alias, Kind: "nested", Nested: rel.nest(organizations(p.ctx), sorts, w, fields)}, true
}

// paginationFields are the keys of a nested page's pagination object.
func paginationFields(oc *graphql.OperationContext, f graphql.CollectedField) ([]storage.RenderField, bool) {
	typ := f.Definition.Type.Name()
	if !conditionsOnly(oc, f.Selections, typ) {
		return nil, false
	}
	var out []storage.RenderField
	for _, sf := range graphql.CollectFields(oc, f.Selections, []string{typ}) {
		switch sf.Name {
		case "__typename":
			out = append(out, storage.RenderField{Key: sf.Alias, Literal: typ})
		case "totalCount", "maxPage":
			out = append(out, storage.RenderField{Key: sf.Alias, Kind: sf.Name})
		default:
			return nil, false
		}
	}
	return out, true
}

// mayFollow reports whether the caller passes def's guard as a token: def has @relation and
// no other directive, and the token holds one of its scopes. The guard also wants the
// parent to be of the caller's organizations, which every item of a root list is (lists
// read the caller's organizations only).
func mayFollow(ctx context.Context, def *ast.FieldDefinition) bool {
	if k := auth.FromContext(ctx).Kind; k != auth.KindOrganization && k != auth.KindUser {
		return false
	}
	if len(def.Directives) != 1 || def.Directives[0].Name != "relation" {
		return false
	}
	anyOf := def.Directives[0].Arguments.ForName("any")
	if anyOf == nil || anyOf.Value == nil {
		return false
	}
	var scopes []model.Scope
	for _, c := range anyOf.Value.Children {
		s := model.Scope(c.Value.Raw)
		if !s.IsValid() {
			return false
		}
		scopes = append(scopes, s)
	}
	return len(scopes) > 0 && checkScope(ctx, scopes) == nil
}

// nestedArgs reads a relation's arguments when they are only a page, a limit and a
// sorting; ok is false when any other argument has a value or one is not what the schema
// takes (the executor then reports it).
func nestedArgs(args map[string]any) (listArgs, bool) {
	var a listArgs
	for name, v := range args {
		if v == nil {
			continue
		}
		switch name {
		case "page", "limit":
			n, ok := intArg(v)
			if !ok {
				return a, false
			}
			if name == "page" {
				a.page = &n
			} else {
				a.limit = &n
			}
		case "sorting":
			list, ok := v.([]any)
			if !ok {
				return a, false
			}
			a.sorting = []string{}
			for _, s := range list {
				str, ok := s.(string)
				if !ok {
					return a, false
				}
				a.sorting = append(a.sorting, str)
			}
		default:
			return a, false
		}
	}
	return a, true
}

// intArg is an Int argument's value, from the document (int64) or the variables.
func intArg(v any) (int, bool) {
	var n int64
	switch v := v.(type) {
	case int64:
		n = v
	case int:
		n = int64(v)
	case json.Number:
		i, err := v.Int64()
		if err != nil {
			return 0, false
		}
		n = i
	default:
		return 0, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}
