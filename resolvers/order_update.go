package resolvers

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// updateOrder applies billing-detail changes to an order of the caller's organizations.
func (r *Resolver) updateOrder(ctx context.Context, id uuid.UUID, in model.OrderUpdateInput) (*storage.Order, error) {
	return r.patchOrder(ctx, nil, id, in)
}

// portalUpdateOrder applies billing-detail changes to one of the session customer's orders;
// an order of another customer is not found. @billing on the field checks members' role.
func (r *Resolver) portalUpdateOrder(ctx context.Context, id uuid.UUID, in model.OrderUpdateInput) (*storage.Order, error) {
	p := auth.FromContext(ctx)
	return r.patchOrder(ctx, &p.CustomerID, id, in)
}

// patchOrder is upstream's OrderService.update: fields present in the input are written,
// explicit nulls clear them, and once the order has a billing address its country and state
// are fixed. Every successful call records order.updated, even when nothing changed, as
// upstream sends the webhook on every PATCH. The input is validated before the order is
// read, as FastAPI validates a body before the endpoint runs.
func (r *Resolver) patchOrder(ctx context.Context, customerID *uuid.UUID, id uuid.UUID, in model.OrderUpdateInput) (*storage.Order, error) {
	var u storage.OrderUpdate
	if v, ok := in.BillingName.ValueOK(); ok {
		u.BillingName = storage.Set(v)
	}
	address, addressGiven := in.BillingAddress.ValueOK()
	var newAddress *storage.Address
	if addressGiven {
		var err error
		if newAddress, err = orderAddressOf(address, "input", "billingAddress"); err != nil {
			return nil, err
		}
		u.BillingAddress = storage.Set(newAddress)
	}
	var out *storage.Order
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		cur, err := storage.LockOrder(ctx, tx, organizations(ctx), customerID, id)
		if err != nil {
			return notFoundOr(err, "")
		}
		if newAddress != nil && cur.BillingAddress != nil {
			if err := keepCountryAndState(cur.BillingAddress, newAddress); err != nil {
				return err
			}
		}
		out = cur
		if !u.IsZero() {
			if out, err = storage.UpdateOrder(ctx, tx, cur.ID, r.Now(), u); err != nil {
				return err
			}
		}
		return r.emit(ctx, tx, out.OrganizationID, "order.updated", out.ID)
	})
	return out, err
}

// keepCountryAndState enforces that an order's billing country and state never change once
// set: the invoice numbering and tax of the order depend on them.
func keepCountryAndState(cur, next *storage.Address) error {
	var errs []FieldError
	if next.Country != cur.Country {
		errs = append(errs, FieldError{Type: "value_error", Loc: []any{"input", "billingAddress", "country"},
			Msg: "Country cannot be changed", Input: next.Country})
	}
	if !equalStrings(next.State, cur.State) {
		errs = append(errs, FieldError{Type: "value_error", Loc: []any{"input", "billingAddress", "state"},
			Msg: "State cannot be changed", Input: next.State})
	}
	if len(errs) > 0 {
		return &Error{Code: CodeValidation, Errors: errs}
	}
	return nil
}

func equalStrings(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// orderAddressOf validates a billing address as upstream's AddressInput does: empty strings
// become null, the country is upper-cased, and US and CA states are normalised to their
// ISO 3166-2 form (US-NY, CA-QC) and must exist. A bad state is a request validation error
// on the whole address, as pydantic reports a model validator's ValueError.
func orderAddressOf(a *model.AddressInput, loc ...any) (*storage.Address, error) {
	if a == nil {
		return nil, nil
	}
	input := addressInputValue(a)
	out := &storage.Address{Line1: nonEmpty(a.Line1), Line2: nonEmpty(a.Line2), PostalCode: nonEmpty(a.PostalCode),
		City: nonEmpty(a.City), State: nonEmpty(a.State), Country: strings.ToUpper(a.Country)}
	if !countryCode.MatchString(out.Country) {
		return nil, Invalid("literal_error", "Input should be a valid ISO 3166-1 alpha-2 country code", out.Country,
			append(loc, "country")...)
	}
	if out.State == nil {
		return out, nil
	}
	var known []string
	var msg string
	switch out.Country {
	case "US":
		known, msg = usStates, "Value error, Invalid US state"
	case "CA":
		known, msg = caSubdivisions, "Value error, Invalid CA subdivision"
	default:
		return out, nil
	}
	state := strings.TrimPrefix(*out.State, out.Country+"-")
	if !slices.Contains(known, state) {
		return nil, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "value_error", Loc: loc, Msg: msg,
			Input: input, Ctx: map[string]any{"error": map[string]any{}}}}}
	}
	normalised := out.Country + "-" + state
	out.State = &normalised
	return out, nil
}

// usStates and caSubdivisions are the subdivisions upstream accepts (its USState and
// CAProvince enums), without the country prefix.
var (
	usStates = []string{"AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
		"KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC",
		"ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "DC"}
	caSubdivisions = []string{"AB", "BC", "MB", "NB", "NL", "NS", "ON", "PE", "QC", "SK", "NT", "NU", "YT"}
)

// nonEmpty turns an empty string into null, as upstream's EmptyStrToNone does.
func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// addressInputValue is the address as the client sent it, with the wire's key names, for
// the input of a validation error.
func addressInputValue(a *model.AddressInput) map[string]any {
	m := map[string]any{"country": a.Country}
	for k, v := range map[string]*string{"line1": a.Line1, "line2": a.Line2, "postal_code": a.PostalCode,
		"city": a.City, "state": a.State} {
		if v != nil {
			m[k] = *v
		}
	}
	return m
}
