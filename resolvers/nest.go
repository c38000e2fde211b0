package resolvers

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"till/graph"
	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// nestable is a paginated relation PostgreSQL can write inside its parent's JSON
// (storage.Nested): the record type of its items, the sorting criteria of its list, who may
// follow it without the executor's guard, and how storage reads it, without the filters (a
// relation asked with a filter is resolved as usual).
type nestable struct {
	record reflect.Type
	sorts  map[string]string
	guard  func(context.Context, *ast.FieldDefinition) bool
	nest   func(ctx context.Context, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested
}

// nestedRelation is the relation named Type.field when it can be nested. Each reads what
// its resolver reads: a customer's lists for a token, the portal home's lists for the
// customer of a customer session (renderedMe).
func nestedRelation(name string) (nestable, bool) {
	orgs := organizations
	customer := func(ctx context.Context) *uuid.UUID { id := auth.FromContext(ctx).CustomerID; return &id }
	switch name {
	case "Customer.orders":
		return nestable{reflect.TypeFor[*storage.Order](), orderSorts, mayFollow,
			func(ctx context.Context, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestOrdersOfCustomers(orgs(ctx), orderFilterOf(nil), sorts, w, page)
			}}, true
	case "Customer.subscriptions":
		return nestable{reflect.TypeFor[*storage.Subscription](), subscriptionSorts, mayFollow,
			func(ctx context.Context, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestSubscriptionsOfCustomers(orgs(ctx), subscriptionFilterOf(nil), sorts, w, page)
			}}, true
	case "Customer.benefitGrants":
		return nestable{reflect.TypeFor[*storage.BenefitGrant](), grantSorts, mayFollow,
			func(ctx context.Context, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestGrantsOfCustomers(orgs(ctx), storage.GrantListFilter{}, sorts, w, page)
			}}, true
	case "Customer.licenseKeys":
		return nestable{reflect.TypeFor[*storage.LicenseKey](), licenseKeySorts, mayFollow,
			func(ctx context.Context, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestLicenseKeysOfCustomers(orgs(ctx), storage.LicenseKeyListFilter{}, sorts, w, page)
			}}, true
	case "Me.orders":
		return nestable{reflect.TypeFor[*storage.Order](), portalOrderSorts, customerSessionMayFollow,
			func(ctx context.Context, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestOrdersOfCustomers(orgs(ctx), storage.OrderListFilter{CustomerID: customer(ctx)}, sorts, w, page)
			}}, true
	case "Me.subscriptions":
		return nestable{reflect.TypeFor[*storage.Subscription](), portalSubscriptionSorts, customerSessionMayFollow,
			func(ctx context.Context, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestSubscriptionsOfCustomers(orgs(ctx), storage.SubscriptionListFilter{CustomerID: customer(ctx)}, sorts, w, page)
			}}, true
	case "Me.licenseKeys":
		return nestable{reflect.TypeFor[*storage.LicenseKey](), licenseKeySorts, customerSessionMayFollow,
			func(ctx context.Context, sorts []storage.Sort, w storage.Window, page []storage.RenderField) *storage.Nested {
				return storage.NestLicenseKeysOfCustomers(orgs(ctx), storage.LicenseKeyListFilter{CustomerID: customer(ctx)}, sorts, w, page)
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
	if !ok || p.depth < 0 || p.depth >= maxNestedDepth || f.Definition == nil || !rel.guard(p.ctx, f.Definition) {
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
			child := itemsPlan{ctx: p.ctx, oc: p.oc, record: rel.record, renders: true, depth: p.depth + 1, own: p.own}
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
	return storage.RenderField{Key: f.Alias, Kind: "nested", Nested: rel.nest(p.ctx, sorts, w, fields)}, true
}

// oneField plans f, a to-one relation of an item of type typ, as the related record written
// inside the item: a product its guard lets the caller see, every selected field of which
// PostgreSQL writes. key is the column that names the product.
func (p itemsPlan) oneField(typ string, f graphql.CollectedField) (storage.RenderField, string, bool) {
	switch typ + "." + f.Name {
	case "Order.product", "Subscription.product":
	default:
		return storage.RenderField{}, "", false
	}
	if f.Definition == nil || !(mayFollow(p.ctx, f.Definition) || p.own && customerSessionMayFollow(p.ctx, f.Definition)) {
		return storage.RenderField{}, "", false
	}
	child := itemsPlan{ctx: p.ctx, oc: p.oc, record: reflect.TypeFor[*storage.Product](), renders: true, depth: -1, own: p.own}
	_, fields, writes, ok := child.object(f.Definition.Type.Name(), f.Selections)
	if !ok || !writes || readsRelations(fields) {
		return storage.RenderField{}, "", false
	}
	return storage.RenderField{Key: f.Alias, One: storage.OneProduct(fields)}, "product_id", true
}

// jsonField plans f as an object stored in a JSON column of the record (an address), each
// selected key written from the key encoding/json reads into its field. Only the portal
// home's customer, which the session's lookup decodes from JSON, is planned so: a record
// scanned from its column reads JSON null as an empty address, not as none. Keys names
// every key the stored object may have: one stored otherwise leaves the home to the
// executor (storage.RenderField).
func (p itemsPlan) jsonField(f graphql.CollectedField) (storage.RenderField, string, bool) {
	address := reflect.TypeFor[storage.Address]()
	if !p.own || p.depth != 0 || p.record != reflect.TypeFor[*storage.Customer]() || f.Definition == nil || f.Definition.Type.Name() != "Address" || len(f.Definition.Directives) > 0 {
		return storage.RenderField{}, "", false
	}
	record := p.record
	for record.Kind() == reflect.Pointer {
		record = record.Elem()
	}
	sf, found := record.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, f.Name) })
	col, ok := storage.ColumnOf(record, sf.Name)
	if !found || sf.Type != reflect.PointerTo(address) || !ok || !conditionsOnly(p.oc, f.Selections, "Address") {
		return storage.RenderField{}, "", false
	}
	plain := graph.PlainFields["Address"]
	var fields []storage.RenderField
	for _, af := range graphql.CollectFields(p.oc, f.Selections, []string{"Address"}) {
		if af.Name == "__typename" {
			fields = append(fields, storage.RenderField{Key: af.Alias, Literal: "Address"})
			continue
		}
		goField, ok := address.FieldByName(plain.Fields[af.Name])
		if !ok || plain.Fields[af.Name] == "" {
			return storage.RenderField{}, "", false
		}
		key, _, _ := strings.Cut(goField.Tag.Get("json"), ",")
		kind := map[reflect.Type]string{reflect.TypeFor[*string](): "text", reflect.TypeFor[string](): "text!"}[goField.Type]
		if kind == "" || key == "" {
			return storage.RenderField{}, "", false
		}
		fields = append(fields, storage.RenderField{Key: af.Alias, Column: key, Kind: kind})
	}
	var keys []string
	for i := range address.NumField() {
		key, _, _ := strings.Cut(address.Field(i).Tag.Get("json"), ",")
		keys = append(keys, key)
	}
	return storage.RenderField{Key: f.Alias, Column: col, Kind: "jsonobject", Fields: fields, Keys: keys}, col, true
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
	return len(scopes) > 0 && checkScope(ctx, scopes, false) == nil && rolesAllow(ctx, def.Directives[0])
}

// rolesAllow reports whether a user's role grants the relation's permission in every
// organization the caller reads, so that no parent it renders could need the refusal the
// directive would give.
func rolesAllow(ctx context.Context, rel *ast.Directive) bool {
	arg := rel.Arguments.ForName("permission")
	if arg == nil || arg.Value == nil || !model.Permission(arg.Value.Raw).IsValid() {
		return false
	}
	perm := model.Permission(arg.Value.Raw)
	for _, o := range organizations(ctx) {
		if checkRelationRole(ctx, perm, o) != nil {
			return false
		}
	}
	return true
}

// customerSessionMayFollow reports whether a customer session passes def's guards on its
// own customer's objects: @billing (a customer holds every billing right; members are
// never planned so) and @relation where it admits portal sessions. Any other directive, or
// another principal, is left to the executor.
func customerSessionMayFollow(ctx context.Context, def *ast.FieldDefinition) bool {
	if auth.FromContext(ctx).Kind != auth.KindCustomerSession {
		return false
	}
	for _, d := range def.Directives {
		switch d.Name {
		case "goField", "billing":
		case "relation":
			portal := d.Arguments.ForName("portal")
			if portal == nil || portal.Value == nil || model.PortalAccess(portal.Value.Raw) == model.PortalAccessNone ||
				!model.PortalAccess(portal.Value.Raw).IsValid() {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// renderedMe has PostgreSQL write the whole portal home of a customer session in one
// statement, when each field me selects is the customer's plain fields and address, or
// one of its lists whose items PostgreSQL writes (with their product): nil otherwise, when
// the customer is gone or the statement fails, for the executor to resolve me field by field.
func (r *Resolver) renderedMe(ctx context.Context, c *storage.Customer) ([]byte, error) {
	fc := graphql.GetFieldContext(ctx)
	if auth.FromContext(ctx).Kind != auth.KindCustomerSession || fc == nil || fc.Field.Field == nil ||
		!graphql.HasOperationContext(ctx) {
		return nil, nil
	}
	oc := graphql.GetOperationContext(ctx)
	if !conditionsOnly(oc, fc.Field.Selections, "Me") {
		return nil, nil
	}
	p := itemsPlan{ctx: ctx, oc: oc, record: reflect.TypeFor[*storage.Customer](), renders: true, depth: 0, own: true}
	var fields []storage.RenderField
	for _, f := range graphql.CollectFields(oc, fc.Field.Selections, []string{"Me"}) {
		switch f.Name {
		case "__typename":
			fields = append(fields, storage.RenderField{Key: f.Alias, Literal: "Me"})
		case "customer":
			_, render, writes, ok := p.object("Customer", f.Selections)
			if !ok || !writes || readsRelations(render) {
				return nil, nil
			}
			fields = append(fields, storage.RenderField{Key: f.Alias, Kind: "object", Fields: render})
		default:
			nested, ok := p.nestedField("Me", f)
			if !ok {
				return nil, nil
			}
			fields = append(fields, nested)
		}
	}
	out, _, err := storage.RenderCustomer(ctx, r.db, organizations(ctx), c.ID, fields)
	if err != nil {
		// Resolved field by field, a value that cannot be read fails only its own field. A
		// statement that fails otherwise would slow every home down unseen, so it is logged.
		if ctx.Err() == nil {
			r.logger.WarnContext(ctx, "portal home: the written statement failed; resolving it field by field", "err", err)
		}
		return nil, nil
	}
	return out, nil
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
