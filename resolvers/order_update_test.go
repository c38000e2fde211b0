package resolvers_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/storage"
)

func TestUpdateOrder(t *testing.T) {
	t.Parallel()
	f := newOrderFixture(t)
	const update = `mutation($id: UUID!, $input: OrderUpdateInput!) { updateOrder(id: $id, input: $input) {
		billingName billingAddress { line1 line2 postalCode city state country } } }`
	type billing struct {
		BillingName    *string  `json:"billingName"`
		BillingAddress *address `json:"billingAddress"`
	}
	nyc := &storage.Address{Line1: ptr("1 Main St"), City: ptr("New York"), State: ptr("US-NY"), Country: "US"}
	tests := []struct {
		name    string
		start   *storage.Address // the order's address before the update
		input   vars
		want    billing
		wantErr *failure
	}{
		{name: "a billing name is set", input: vars{"billingName": "Ada Ltd"},
			want: billing{BillingName: ptr("Ada Ltd")}},
		{name: "an explicit null clears the name", input: vars{"billingName": nil}, want: billing{}},
		{name: "an empty input changes nothing", start: nyc, input: vars{},
			want: billing{BillingName: ptr("Start"), BillingAddress: &address{Line1: ptr("1 Main St"), City: ptr("New York"), State: ptr("US-NY"), Country: "US"}}},
		{name: "a first address is normalised: country upper-cased, state prefixed, empty lines null",
			input: vars{"billingAddress": vars{"country": "us", "state": "CA", "line1": "", "city": "San Francisco"}},
			want:  billing{BillingName: ptr("Start"), BillingAddress: &address{City: ptr("San Francisco"), State: ptr("US-CA"), Country: "US"}}},
		{name: "a Canadian province is prefixed", input: vars{"billingAddress": vars{"country": "CA", "state": "QC"}},
			want: billing{BillingName: ptr("Start"), BillingAddress: &address{State: ptr("CA-QC"), Country: "CA"}}},
		{name: "a prefixed state is kept", input: vars{"billingAddress": vars{"country": "US", "state": "US-NY"}},
			want: billing{BillingName: ptr("Start"), BillingAddress: &address{State: ptr("US-NY"), Country: "US"}}},
		{name: "other countries keep their state as given", input: vars{"billingAddress": vars{"country": "FR", "state": "IDF"}},
			want: billing{BillingName: ptr("Start"), BillingAddress: &address{State: ptr("IDF"), Country: "FR"}}},
		{name: "lines change when country and state stay", start: nyc,
			input: vars{"billingAddress": vars{"country": "US", "state": "NY", "line1": "2 Broadway", "postalCode": "10004"}},
			want: billing{BillingName: ptr("Start"), BillingAddress: &address{Line1: ptr("2 Broadway"), PostalCode: ptr("10004"),
				State: ptr("US-NY"), Country: "US"}}},
		{name: "an explicit null clears the address", start: nyc, input: vars{"billingAddress": nil},
			want: billing{BillingName: ptr("Start")}},

		{name: "an unknown US state is refused", input: vars{"billingAddress": vars{"country": "US", "state": "ZZ"}},
			wantErr: &failure{"RequestValidationError", []fieldErr{{Type: "value_error",
				Loc: []any{"input", "billingAddress"}, Msg: "Value error, Invalid US state",
				Input: map[string]any{"country": "US", "state": "ZZ"}}}}},
		{name: "an unknown CA subdivision is refused", input: vars{"billingAddress": vars{"country": "CA", "state": "XX"}},
			wantErr: &failure{"RequestValidationError", []fieldErr{{Type: "value_error",
				Loc: []any{"input", "billingAddress"}, Msg: "Value error, Invalid CA subdivision",
				Input: map[string]any{"country": "CA", "state": "XX"}}}}},
		{name: "the country cannot change once set", start: nyc,
			input: vars{"billingAddress": vars{"country": "CA", "state": "QC"}},
			wantErr: &failure{"PolarRequestValidationError", []fieldErr{
				{Type: "value_error", Loc: []any{"input", "billingAddress", "country"}, Msg: "Country cannot be changed", Input: "CA"},
				{Type: "value_error", Loc: []any{"input", "billingAddress", "state"}, Msg: "State cannot be changed", Input: "CA-QC"}}}},
		{name: "the state cannot change once set", start: nyc,
			input: vars{"billingName": "Changed", "billingAddress": vars{"country": "US", "state": "NJ"}},
			wantErr: &failure{"PolarRequestValidationError", []fieldErr{
				{Type: "value_error", Loc: []any{"input", "billingAddress", "state"}, Msg: "State cannot be changed", Input: "US-NJ"}}}},
		{name: "dropping the state counts as a change", start: nyc,
			input: vars{"billingAddress": vars{"country": "US"}},
			wantErr: &failure{"PolarRequestValidationError", []fieldErr{
				{Type: "value_error", Loc: []any{"input", "billingAddress", "state"}, Msg: "State cannot be changed", Input: nil}}}},
		{name: "a country that is not two letters is refused", input: vars{"billingAddress": vars{"country": "USA"}},
			wantErr: &failure{"PolarRequestValidationError", []fieldErr{{Type: "literal_error",
				Loc: []any{"input", "billingAddress", "country"}, Msg: "Input should be a valid ISO 3166-1 alpha-2 country code", Input: "USA"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := f.spec()
			spec.BillingName, spec.BillingAddress = ptr("Start"), tt.start
			o := f.create(t, spec)
			if tt.wantErr != nil {
				e := f.s.QueryError(t, f.org.Token, update, vars{"id": o.ID, "input": tt.input})
				wantError(t, e, "BAD_USER_INPUT", tt.wantErr.code, tt.wantErr.errs...)
				after, err := storage.GetOrderByID(context.Background(), f.s.DB, o.ID)
				if err != nil {
					t.Fatal(err)
				}
				if *after.BillingName != "Start" || !cmp.Equal(after.BillingAddress, tt.start) {
					t.Errorf("the order changed: %v %+v", *after.BillingName, after.BillingAddress)
				}
				if diff := cmp.Diff([]string{"order.created"}, f.events(t, o.ID)); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				return
			}
			var out struct{ UpdateOrder billing }
			f.s.Query(t, f.org.Token, update, vars{"id": o.ID, "input": tt.input}, &out)
			if diff := cmp.Diff(tt.want, out.UpdateOrder); diff != "" {
				t.Errorf("billing details (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"order.created", "order.updated"}, f.events(t, o.ID)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("an unknown order is not found", func(t *testing.T) {
		e := f.s.QueryError(t, f.org.Token, update, vars{"id": "0b0c2e9a-6a8e-4d51-8a49-6e1d3c3b9f10", "input": vars{}})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
	})
}

// failure is the error a refused update must carry: a 422 of this code with these items.
type failure struct {
	code string
	errs []fieldErr
}
