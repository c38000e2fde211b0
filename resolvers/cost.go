package resolvers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/internal/auth"
	"till/internal/ratelimit"
)

// The cost of a GraphQL operation is what it may make the server read and write, estimated
// from the document and its variables before anything runs:
//
//   - a field that returns an object costs 1 for each object it may return; scalar and enum
//     fields cost nothing, and neither does introspection, which reads no data;
//   - a list's size is its page: the `limit` (or `first`) argument of the field that takes
//     it, given or defaulted as the schema says, multiplies the list inside (`items`); a list
//     without such an argument counts the size its definition declares with
//     `@listSize(assumedSize:)`, an upper bound kept true where the list is written, and
//     defaultListSize only if it declares none (a test makes every list declare one);
//   - meterQuantities and meterCosts count the buckets their window and interval produce
//     (meterBuckets), and a list answering one object per id of its ids argument counts the
//     ids given, at most its @listSize (idsSize);
//   - an object's fields are paid for once per object, so nesting multiplies, and every alias
//     and every fragment spread is paid for on its own.
//
// So `customers(limit: 100) { items { id email } pagination { totalCount } }` costs
// 1 + 100 + 1 = 102. One operation may cost at most maxCost, a subscription at most
// maxLiveEventCost (its price is that of each event it delivers); each principal has a budget
// of points per minute on top (Resolver.CostBudget), which a subscription spends once, when
// it starts. The refusals come before any resolver runs, so a refused subscription holds no
// slot, and every response reports the charge in extensions.cost.
//
// The schema's argument defaults are read from the schema itself rather than from gqlgen's
// generated complexity functions: those see only their own field's arguments, while a page
// size is an argument of the page field and sizes the list one level down.
const (
	// maxCost caps one operation: /v1's own checkout list, a hundred checkouts with their
	// capped products and benefits, fits under it.
	maxCost = 25_000
	// maxLiveEventCost caps a subscription's document, whose selection runs again for every
	// event it delivers, so a credential's subscriptions (maxLivePerCredential) multiply each
	// write by at most 100 × maxLiveEventCost reads. It holds an event with its typed object
	// and a few capped lists: a checkout with its products, their prices and benefits costs
	// 412, an order with its lines, customer and product under 100.
	maxLiveEventCost = 1_000
	// defaultListSize is the count assumed for a list without a page-size argument nor a
	// declared @listSize; the schema test leaves no such list.
	defaultListSize = 10
	// costCap saturates the arithmetic, far above maxCost and far below overflow.
	costCap = 1 << 40
)

// costReport is extensions.cost of a response: the points the operation requested and, with
// a budget, what the principal has left and when its window resets (RFC 3339, UTC).
type costReport struct {
	Requested int     `json:"requested"`
	Remaining *int    `json:"remaining,omitempty"`
	Reset     *string `json:"reset,omitempty"`
}

// costLimit is the handler extension that prices operations, refuses those over the
// ceiling or the budget, and reports the price. It reads the budget from the resolver at
// each request, so the budget a test sets after building the handler applies.
type costLimit struct{ r *Resolver }

// ExtensionName implements graphql.HandlerExtension.
func (costLimit) ExtensionName() string { return "Cost" }

// Validate implements graphql.HandlerExtension.
func (costLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator.
func (c costLimit) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	calc := &costCalc{vars: op.Variables, frags: op.Doc.Fragments}
	cost := calc.selection(op.Operation.SelectionSet, 0, nil)
	if calc.refusal != nil {
		return calc.refusal
	}
	report := &costReport{Requested: cost}
	op.Stats.SetExtension("cost", report)
	if cost > maxCost {
		return errorOf(&Error{Code: CodeCostLimitExceeded,
			Detail: fmt.Sprintf("The operation costs %d points; one operation may cost at most %d.", cost, maxCost)})
	}
	if op.Operation.Operation == ast.Subscription && cost > maxLiveEventCost {
		return errorOf(&Error{Code: CodeCostLimitExceeded, Detail: fmt.Sprintf("The subscription costs %d points "+
			"for every event it delivers; a subscription may cost at most %d per event.", cost, maxLiveEventCost)})
	}
	if c.r.costBudget == nil {
		return nil
	}
	now := time.Now()
	ok, remaining, reset := c.r.costBudget.Spend(budgetKey(ctx), cost, now)
	resetAt := now.Add(reset).UTC().Format(time.RFC3339)
	report.Remaining, report.Reset = &remaining, &resetAt
	if !ok {
		e := RateLimited(reset)
		e.Detail = fmt.Sprintf("The operation costs %d points and %d are left until %s. %s", cost, remaining, resetAt, e.Detail)
		return errorOf(e)
	}
	return nil
}

// InterceptResponse implements graphql.ResponseInterceptor: it reports the price in
// extensions.cost, of a refused operation too.
func (costLimit) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if graphql.HasOperationContext(ctx) {
		if report, ok := graphql.GetOperationContext(ctx).Stats.GetExtension("cost").(*costReport); ok {
			graphql.RegisterExtension(ctx, "cost", report)
		}
	}
	return next(ctx)
}

// budgetKey is whose budget an operation spends: the organization, the user or the portal
// session it acts as, or the client address of an anonymous caller.
func budgetKey(ctx context.Context) string {
	p := auth.FromContext(ctx)
	switch p.Kind {
	case auth.KindOrganization:
		return "organization:" + p.OrganizationID.String()
	case auth.KindUser:
		return "user:" + p.UserID.String()
	case auth.KindCustomerSession, auth.KindMemberSession:
		return "session:" + p.TokenID.String()
	}
	ip, _ := ratelimit.ClientIPFrom(ctx)
	return "ip:" + ip
}

// costCalc prices a validated operation with its coerced variables.
type costCalc struct {
	vars    map[string]any
	frags   ast.FragmentDefinitionList
	refusal *gqlerror.Error
}

// selection prices a selection set; pageSize sizes the lists in it (0: none given).
func (c *costCalc) selection(set ast.SelectionSet, pageSize int, path ast.Path) int {
	total := 0
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if len(sel.SelectionSet) == 0 { // a leaf costs nothing; most fields are leaves
				continue
			}
			total = addCost(total, c.field(sel, pageSize, append(path[:len(path):len(path)], ast.PathName(sel.Alias))))
		case *ast.InlineFragment:
			total = addCost(total, c.selection(sel.SelectionSet, pageSize, path))
		case *ast.FragmentSpread:
			if f := c.frags.ForName(sel.Name); f != nil {
				total = addCost(total, c.selection(f.SelectionSet, pageSize, path))
			}
		}
	}
	return total
}

// field prices one field: each object it may return costs 1 plus its own fields.
func (c *costCalc) field(f *ast.Field, pageSize int, path ast.Path) int {
	if f.Definition == nil || len(f.SelectionSet) == 0 || strings.HasPrefix(f.Name, "__") {
		return 0
	}
	own := c.pageSize(f, path)
	if n, ok := c.meterBuckets(f); ok {
		own = n
	}
	objects := 1
	if f.Definition.Type.Elem != nil {
		n, byIDs := c.idsSize(f)
		switch {
		case pageSize > 0:
			objects = pageSize
		case byIDs:
			objects = n
		case own > 0:
			objects = own
		default:
			objects = c.listSize(f)
		}
	}
	return mulCost(objects, addCost(1, c.selection(f.SelectionSet, own, path)))
}

// listSize is the size a list without a page argument declares with @listSize, or the
// number of buckets of meterQuantities' window.
func (c *costCalc) listSize(f *ast.Field) int {
	if d := f.Definition.Directives.ForName("listSize"); d != nil {
		if a := d.Arguments.ForName("assumedSize"); a != nil {
			if v, err := a.Value.Value(nil); err == nil {
				if n, ok := v.(int64); ok && n >= 0 {
					return int(min(n, costCap))
				}
			}
		}
	}
	return defaultListSize
}

// pageSize is the page a field asks for, as the resolvers will read it: first or last when
// given, else limit (the argument or the schema's default), else defaultEventPage for a
// cursor-only list; 0 when the field takes none of them. A limit above the maximum is
// refused here, as GraphQL's contract says, where /v1 clamps it; the resolvers refuse first
// and last above it.
func (c *costCalc) pageSize(f *ast.Field, path ast.Path) int {
	size := 0
	if n, ok := c.intArg(f, "limit"); ok {
		if n > maxLimit && c.refusal == nil {
			e := errorOf(&Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "less_than_equal",
				Loc: []any{"limit"}, Msg: fmt.Sprintf("Input should be less than or equal to %d", maxLimit), Input: n}}})
			e.Path = path
			c.refusal = e
		}
		size = max(1, min(n, maxLimit))
	}
	cursor := false
	for _, name := range []string{"first", "last"} {
		if n, ok := c.intArg(f, name); ok {
			if (n < 1 || n > maxLimit) && c.refusal == nil {
				// Refused here, once, before any statement runs, rather than by the
				// resolver once per parent of a nested list.
				e := errorOf(&Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "value_error",
					Loc: []any{"query", name}, Msg: fmt.Sprintf("Input should be between 1 and %d.", maxLimit), Input: n}}})
				e.Path = path
				c.refusal = e
			}
			size, cursor = max(1, min(n, maxLimit)), true
		}
	}
	if size == 0 && !cursor && f.Definition.Arguments.ForName("first") != nil {
		size = defaultEventPage
	}
	return size
}

// intArg reads an Int argument of f; ok is false when the field has no such argument or
// neither the document nor the schema gives it a value.
func (c *costCalc) intArg(f *ast.Field, name string) (int, bool) {
	def := f.Definition.Arguments.ForName(name)
	if def == nil {
		return 0, false
	}
	var v any
	if a := f.Arguments.ForName(name); a != nil {
		v, _ = a.Value.Value(c.vars)
	}
	if v == nil && def.DefaultValue != nil {
		v, _ = def.DefaultValue.Value(nil)
	}
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(min(max(n, -costCap), costCap)), true
	case float64:
		return int(min(max(n, -costCap), costCap)), true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return int(min(max(i, -costCap), costCap)), true
		}
	}
	return 0, false
}

func addCost(a, b int) int { return min(a+b, costCap) }

func mulCost(a, b int) int {
	if a != 0 && b > costCap/a {
		return costCap
	}
	return min(a*b, costCap)
}
