package resolvers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// TestIntVariablesBeyond32BitsAreRefused sends numbers GraphQL's Int cannot hold as
// variables (the parser already refuses them as literals) where they used to reach an
// INTEGER column, a timestamp or an OFFSET and come back as a 500: anonymous license
// validation and checkout confirmation, an organization's creates and updates, and the
// page of every kind of list. Each must be the same 422 a literal gets, at the value's path.
func TestIntVariablesBeyond32BitsAreRefused(t *testing.T) {
	t.Parallel()
	w := newKeyWorld(t, vars{})
	s, tok := w.s, w.org.Token
	seats := ckProduct(t, s, tok, "Team", "month", ckSeats("", vars{"minSeats": 1, "pricePerSeat": 500}))
	checkout := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{seats.ID}, "seats": 1})
	discount := ckDiscount(t, s, tok, vars{"name": "Ten", "type": "fixed", "amount": 1000, "duration": "once"})
	createMeter(t, s, tok, apiCallsInput(nil))
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:write", Orgs: []uuid.UUID{w.org.ID}}).Token
	createOAuth2Client(t, s, user, oauth2ClientInput(nil))

	const int32Over = 2147483648
	pageMax := json.Number("9223372036854775807")
	validate := func(field string) string {
		return `mutation($v: Int) { ` + field + `(input: {key: "x", organizationId: "` + w.org.ID.String() +
			`", incrementUsage: $v}) { code } }`
	}
	product := func(in vars) vars {
		out := vars{"name": "Plan", "recurringInterval": "month", "prices": []vars{ckFixed(900)}}
		for k, v := range in {
			out[k] = v
		}
		return vars{"in": out}
	}
	newDiscount := func(in vars) vars {
		out := vars{"name": "D", "type": "fixed", "amount": 100, "duration": "once"}
		for k, v := range in {
			out[k] = v
		}
		return vars{"in": out}
	}
	newCheckout := func(in vars) vars {
		in["products"], in["seats"] = []uuid.UUID{seats.ID}, 2
		return vars{"in": in}
	}
	list := func(field string) string {
		return `query($page: Int) { ` + field + `(page: $page) { items { __typename } } }`
	}
	const (
		createProduct  = `mutation($in: ProductCreateInput!) { createProduct(input: $in) { id } }`
		createDiscount = `mutation($in: DiscountCreateInput!) { createDiscount(input: $in) { id } }`
		updateDiscount = `mutation($in: DiscountUpdateInput!) { updateDiscount(input: $in) { id } }`
	)
	tests := []struct {
		name, token, query string
		variables          vars
		input              any
		loc                []any
	}{
		{"an anonymous license validation's incrementUsage", "", validate("portalValidateLicenseKey"),
			vars{"v": int32Over}, int32Over, []any{"input", "incrementUsage"}},
		{"a license validation's incrementUsage with an organization token", tok, validate("validateLicenseKey"),
			vars{"v": int32Over}, int32Over, []any{"input", "incrementUsage"}},
		{"an anonymous checkout confirmation's seats", "", ckConfirm,
			vars{"in": vars{"clientSecret": checkout.ClientSecret, "seats": int32Over, "customerEmail": "n@x.test",
				"paymentToken": "tok_visa"}}, int32Over, []any{"input", "seats"}},
		{"a product's recurringIntervalCount", tok, createProduct, product(vars{"recurringIntervalCount": int32Over}),
			int32Over, []any{"input", "recurringIntervalCount"}},
		{"a product's trialIntervalCount", tok, createProduct,
			product(vars{"trialInterval": "day", "trialIntervalCount": int32Over}), int32Over, []any{"input", "trialIntervalCount"}},
		{"a new discount's maxRedemptions", tok, createDiscount, newDiscount(vars{"maxRedemptions": int32Over}),
			int32Over, []any{"input", "maxRedemptions"}},
		{"a new discount's maxRedemptionsPerCustomer", tok, createDiscount,
			newDiscount(vars{"maxRedemptionsPerCustomer": int32Over}), int32Over, []any{"input", "maxRedemptionsPerCustomer"}},
		{"an updated discount's maxRedemptions", tok, updateDiscount,
			vars{"in": vars{"id": discount, "maxRedemptions": int32Over}}, int32Over, []any{"input", "maxRedemptions"}},
		{"a checkout's minSeats", tok, ckCreate, newCheckout(vars{"minSeats": int32Over}), int32Over, []any{"input", "minSeats"}},
		{"a checkout's maxSeats", tok, ckCreate, newCheckout(vars{"maxSeats": int32Over}), int32Over, []any{"input", "maxSeats"}},
		{"a checkout's trialIntervalCount", tok, ckCreate,
			newCheckout(vars{"trialInterval": "day", "trialIntervalCount": int32Over}), int32Over, []any{"input", "trialIntervalCount"}},
		{"a meter's customMultiplier", tok, createMeterDoc,
			vars{"input": apiCallsInput(vars{"unit": "custom", "customLabel": "calls", "customMultiplier": int32Over})},
			int32Over, []any{"input", "customMultiplier"}},
		{"a negative number below 32 bits", tok, createMeterDoc,
			vars{"input": apiCallsInput(vars{"unit": "custom", "customLabel": "calls", "customMultiplier": -int32Over - 1})},
			-int32Over - 1, []any{"input", "customMultiplier"}},
		{"the page of events", tok, list("domainEvents"), vars{"page": pageMax}, pageMax, []any{"page"}},
		{"the page of products", tok, list("products"), vars{"page": pageMax}, pageMax, []any{"page"}},
		{"the page of checkouts", tok, list("checkouts"), vars{"page": pageMax}, pageMax, []any{"page"}},
		{"the page of discounts", tok, list("discounts"), vars{"page": pageMax}, pageMax, []any{"page"}},
		{"the page of meters", tok, list("meters"), vars{"page": pageMax}, pageMax, []any{"page"}},
		{"the page of benefits", tok, list("benefits"), vars{"page": pageMax}, pageMax, []any{"page"}},
		{"the page of OAuth2 clients", user, list("oauth2Clients"), vars{"page": pageMax}, pageMax, []any{"page"}},
		{"a page of 2^31", tok, list("products"), vars{"page": int32Over}, int32Over, []any{"page"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" beyond 32 bits is bad input, not an internal error", func(t *testing.T) {
			res := s.Do(t, tt.token, tt.query, tt.variables)
			if len(res.Errors) != 1 {
				t.Fatalf("want one error, got HTTP %d: %s", res.Status, res.Body)
			}
			got := res.Errors[0]
			if got.Extensions.Code != "BAD_USER_INPUT" || got.Extensions.Reason != resolvers.CodeRequestValidation {
				t.Errorf("code %s (%s): %s", got.Extensions.Code, got.Extensions.Reason, res.Body)
			}
			want := []fieldErr{{Type: "value_error", Loc: tt.loc,
				Msg: "Int cannot represent non 32-bit signed integer value: " + jsonText(tt.input)}}
			if diff := cmp.Diff(want, got.Extensions.Fields); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestOutOfRangeFromStorageIsTheClientsMistake is the net under every range check: a number
// PostgreSQL refused as out of range, however it got there, is the client's input (a 422 on
// /v1) and not a server fault.
func TestOutOfRangeFromStorageIsTheClientsMistake(t *testing.T) {
	t.Parallel()
	present := resolvers.ErrorPresenter(slog.New(slog.NewTextHandler(io.Discard, nil)))
	tests := []struct {
		name       string
		err        error
		code       resolvers.GraphQLCode
		reason     string
		wantStatus int // on /v1
	}{
		{"a number out of range", fmt.Errorf("creating meter: %w", storage.ErrOutOfRange), resolvers.GraphQLBadUserInput,
			resolvers.CodeValidation, http.StatusUnprocessableEntity},
		{"any other storage error", fmt.Errorf("creating meter: %w", storage.ErrReference), resolvers.GraphQLInternal,
			resolvers.CodeInternal, http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is answered "+string(tt.code), func(t *testing.T) {
			got := present(context.Background(), tt.err)
			if got.Extensions["code"] != tt.code || got.Extensions["reason"] != tt.reason {
				t.Errorf("extensions = %v, want code %s reason %s", got.Extensions, tt.code, tt.reason)
			}
			var te *resolvers.Error
			if !errors.As(got, &te) || te.Status() != tt.wantStatus {
				t.Errorf("the presented error wraps %v, want a Till error answered %d on /v1", te, tt.wantStatus)
			}
		})
	}
}
