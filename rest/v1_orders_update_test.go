package rest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/storage"
)

func TestUpdateOrderServesTheContract(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	w := newOrderWorld(t, s)
	nyc := &storage.Address{Line1: ptr("1 Main St"), City: ptr("New York"), State: ptr("US-NY"), Country: "US"}
	fresh := func(t *testing.T, address *storage.Address) *storage.Order {
		t.Helper()
		return w.order(t, storage.OrderWrite{CustomerID: w.alice.ID, Status: "paid", BillingReason: "purchase",
			BillingName: ptr("Start"), BillingAddress: address}, 500, 0)
	}
	tests := []struct {
		name  string
		start *storage.Address
		body  string
		want  want
	}{
		{name: "the billing name is set", body: `{"billing_name":"Ada Ltd"}`,
			want: want{status: 200, has: []string{`"billing_name":"Ada Ltd"`, `"billing_address":null`}}},
		{name: "null clears the name", body: `{"billing_name":null}`, want: want{status: 200, has: []string{`"billing_name":null`}}},
		{name: "an empty body changes nothing", start: nyc, body: `{}`, want: want{status: 200, has: []string{`"billing_name":"Start"`,
			`"billing_address":{"line1":"1 Main St","line2":null,"postal_code":null,"city":"New York","state":"US-NY","country":"US"}`}}},
		{name: "unknown fields are ignored", body: `{"status":"void","billing_name":"B"}`,
			want: want{status: 200, has: []string{`"status":"paid"`, `"billing_name":"B"`}}},
		{name: "a lower-case country is upper-cased, the state prefixed and empty lines nulled",
			body: `{"billing_address":{"country":"us","state":"CA","line1":"","city":"SF"}}`,
			want: want{status: 200, has: []string{`"billing_address":{"line1":null,"line2":null,"postal_code":null,"city":"SF","state":"US-CA","country":"US"}`}}},
		{name: "lines may change when country and state stay", start: nyc,
			body: `{"billing_address":{"country":"US","state":"NY","line1":"2 Broadway"}}`,
			want: want{status: 200, has: []string{`"line1":"2 Broadway"`, `"state":"US-NY"`}}},
		{name: "null clears the address", start: nyc, body: `{"billing_address":null}`,
			want: want{status: 200, has: []string{`"billing_address":null`}}},

		{name: "the country cannot change", start: nyc, body: `{"billing_address":{"country":"CA","state":"QC"}}`,
			want: polarValidation(
				item{Type: "value_error", Loc: []any{"body", "billing_address", "country"}, Msg: "Country cannot be changed", Input: "CA"},
				item{Type: "value_error", Loc: []any{"body", "billing_address", "state"}, Msg: "State cannot be changed", Input: "CA-QC"})},
		{name: "the state cannot change", start: nyc, body: `{"billing_address":{"country":"US","state":"NJ"}}`,
			want: polarValidation(item{Type: "value_error", Loc: []any{"body", "billing_address", "state"}, Msg: "State cannot be changed", Input: "US-NJ"})},
		{name: "an unknown US state is a request validation error on the address",
			body: `{"billing_address":{"country":"US","state":"ZZ"}}`,
			want: validation(item{Type: "value_error", Loc: []any{"body", "billing_address"}, Msg: "Value error, Invalid US state",
				Input: map[string]any{"country": "US", "state": "ZZ"}, Ctx: map[string]any{"error": map[string]any{}}})},
		{name: "an unknown CA subdivision is refused", body: `{"billing_address":{"country":"CA","state":"ZZ"}}`,
			want: validation(item{Type: "value_error", Loc: []any{"body", "billing_address"}, Msg: "Value error, Invalid CA subdivision"})},
		{name: "an unknown country is 422 enum", body: `{"billing_address":{"country":"xx"}}`,
			want: validation(item{Type: "enum", Loc: []any{"body", "billing_address", "country"}, Input: "XX"})},
		{name: "an address without country is 422 missing", body: `{"billing_address":{"city":"Paris"}}`,
			want: validation(item{Type: "missing", Loc: []any{"body", "billing_address", "country"}, Msg: "Field required"})},
		{name: "a billing name that is not a string is 422", body: `{"billing_name":5}`,
			want: validation(item{Type: "string_type", Loc: []any{"body", "billing_name"}})},
		{name: "a missing body is 422", body: ``,
			want: validation(item{Type: "missing", Loc: []any{"body"}, Msg: "Field required", Input: jsonNull})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fresh(t, tt.start)
			rec := s.do(t, call{method: http.MethodPatch, target: "/v1/orders/" + o.ID.String(), token: w.org.Token, body: tt.body})
			tt.want.check(t, rec)
			var events int
			if err := s.DB.Get(&events, `SELECT count(*) FROM domain_events WHERE object_id = $1 AND type = 'order.updated'`, o.ID); err != nil {
				t.Fatal(err)
			}
			if wantEvents := map[bool]int{true: 1, false: 0}[rec.Code == 200]; events != wantEvents {
				t.Errorf("%d order.updated events, want %d", events, wantEvents)
			}
			if rec.Code != 200 {
				after, err := storage.GetOrderByID(context.Background(), s.DB, o.ID)
				if err != nil {
					t.Fatal(err)
				}
				if *after.BillingName != "Start" || !cmp.Equal(after.BillingAddress, tt.start) {
					t.Errorf("a refused update changed the order: %v %+v", *after.BillingName, after.BillingAddress)
				}
			}
		})
	}
	for _, tt := range []struct {
		name  string
		token func() string
		want  want
	}{
		{"another organization's order is 404", func() string { return s.NewOrg(t, "orders:write").Token },
			want{status: 404, body: resourceNotFoundBody}},
		{"orders:read is not enough", func() string { return s.NewToken(t, w.org.ID, "orders:read") }, insufficientScope("orders:write")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := s.do(t, call{method: http.MethodPatch, target: "/v1/orders/" + w.a.ID.String(), token: tt.token(),
				body: `{"billing_name":"X"}`})
			tt.want.check(t, rec)
		})
	}
}

// TestOrderEventsRenderTheWebhookPayloads renders order.* events the way the serve loop
// does: data is GET /v1/orders/{id} byte for byte, and each payload matches its webhook schema.
func TestOrderEventsRenderTheWebhookPayloads(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	w := newOrderWorld(t, s)
	rec := s.do(t, call{target: "/v1/orders/" + w.b.ID.String(), token: w.org.Token})
	want{status: 200}.check(t, rec)
	for typ, schema := range map[string]string{"order.created": "WebhookOrderCreatedPayload",
		"order.updated": "WebhookOrderUpdatedPayload", "order.paid": "WebhookOrderPaidPayload"} {
		t.Run(typ+" renders as "+schema, func(t *testing.T) {
			gotType, data := s.webhookPayload(t, w.org.ID, typ, schema, w.b.ID)
			if gotType != typ || string(data) != rec.Body.String() {
				t.Errorf("payload %s %s\nwant data %s", gotType, data, rec.Body)
			}
		})
	}
}
