package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"till/rest/fastapi/fastapitest"

	"github.com/google/go-cmp/cmp"
)

const uuidTags = "json-or-python[json=list[uuid],python=chain[is-instance[Sequence],function-wrap[sequence_validator()]]]"

func TestParametersAnswer422LikeFastAPI(t *testing.T) {
	badChar := "invalid character: found `n` at 1"
	tests := []struct {
		name, target, want string
	}{
		{"page zero is not greater than zero", "/v1/orders/?page=0",
			`[{"type":"greater_than","loc":["query","page"],"msg":"Input should be greater than 0","input":"0","ctx":{"gt":0}}]`},
		{"a page that is not a number does not parse", "/v1/orders/?page=abc",
			`[{"type":"int_parsing","loc":["query","page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}]`},
		{"a negative limit is reported after page", "/v1/orders/?limit=-1&page=x",
			`[{"type":"int_parsing","loc":["query","page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"},` +
				`{"type":"greater_than","loc":["query","limit"],"msg":"Input should be greater than 0","input":"-1","ctx":{"gt":0}}]`},
		{"a path id that is not a UUID", "/v1/customers/not-a-uuid/payment-methods",
			`[{"type":"uuid_parsing","loc":["path","id"],"msg":"Input should be a valid UUID, ` + badChar + `","input":"not-a-uuid","ctx":{"error":"` + badChar + `"}}]`},
		{"a path id of another UUID version", "/v1/customers/" + fastapitest.UUIDV1 + "/payment-methods",
			`[{"type":"uuid_version","loc":["path","id"],"msg":"UUID version 4 expected","input":"` + fastapitest.UUIDV1 + `","ctx":{"expected_version":4}}]`},
		{"pagination dependencies are reported before the path", "/v1/customers/" + fastapitest.UUIDV1 + "/payment-methods?page=0",
			`[{"type":"greater_than","loc":["query","page"],"msg":"Input should be greater than 0","input":"0","ctx":{"gt":0}},` +
				`{"type":"uuid_version","loc":["path","id"],"msg":"UUID version 4 expected","input":"` + fastapitest.UUIDV1 + `","ctx":{"expected_version":4}}]`},
		{"an unknown sorting value names every allowed one", "/v1/orders/?sorting=-created_at&sorting=amount",
			`[{"type":"enum","loc":["query","sorting",1],"msg":"Input should be 'created_at', '-created_at', 'status' or '-status'","input":"amount","ctx":{"expected":"'created_at', '-created_at', 'status' or '-status'"}}]`},
		{"a bad UUID filter fails both members of MultipleQueryFilter", "/v1/orders/?organization_id=" + fastapitest.OrgUUID + "&organization_id=nope",
			`[{"type":"uuid_type","loc":["query","organization_id","uuid"],"msg":"UUID input should be a string, bytes or UUID object","input":["` + fastapitest.OrgUUID + `","nope"]},` +
				`{"type":"uuid_parsing","loc":["query","organization_id","` + uuidTags + `",1],"msg":"Input should be a valid UUID, ` + badChar + `","input":"nope","ctx":{"error":"` + badChar + `"}}]`},
		{"a bad enum filter names the enum class", "/v1/orders/?status=lost",
			`[{"type":"enum","loc":["query","status","str-enum[OrderStatus]"],"msg":"Input should be 'draft', 'pending' or 'paid'","input":["lost"],"ctx":{"expected":"'draft', 'pending' or 'paid'"}},` +
				`{"type":"enum","loc":["query","status","json-or-python[json=list[str-enum[OrderStatus]],python=chain[is-instance[Sequence],function-wrap[sequence_validator()]]]",0],"msg":"Input should be 'draft', 'pending' or 'paid'","input":"lost","ctx":{"expected":"'draft', 'pending' or 'paid'"}}]`},
		{"a boolean outside the lax set", "/v1/orders/?active=maybe",
			`[{"type":"bool_parsing","loc":["query","active"],"msg":"Input should be a valid boolean, unable to interpret input","input":"maybe"}]`},
		{"a date-time filter that is too short", "/v1/orders/?created_after=foo",
			`[{"type":"datetime_from_date_parsing","loc":["query","created_after"],"msg":"Input should be a valid datetime or date, input is too short","input":"foo","ctx":{"error":"input is too short"}}]`},
		{"a date-time filter with a bad year", "/v1/orders/?created_after=yesterday!",
			`[{"type":"datetime_from_date_parsing","loc":["query","created_after"],"msg":"Input should be a valid datetime or date, invalid character in year","input":"yesterday!","ctx":{"error":"invalid character in year"}}]`},
		{"a date-time filter with a bad time", "/v1/orders/?created_after=2026-04-01T25:00:00Z",
			`[{"type":"datetime_from_date_parsing","loc":["query","created_after"],"msg":"Input should be a valid datetime or date, unexpected extra characters at the end of the input","input":"2026-04-01T25:00:00Z","ctx":{"error":"unexpected extra characters at the end of the input"}}]`},
	}
	exec := &fakeExecutor{}
	h := newTestRouter(t, exec, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, request(http.MethodGet, tt.target, ""))
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
			}
			want := `{"error":"RequestValidationError","detail":` + fastapitest.CompactJSON(t, tt.want) + `}`
			if got := rec.Body.String(); got != want {
				t.Errorf("body:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestParametersBecomeVariables(t *testing.T) {
	tests := []struct {
		name, target string
		want         map[string]any
	}{
		{"absent parameters are left to GraphQL defaults", "/v1/orders/", map[string]any{}},
		{"a limit above 100 is clamped", "/v1/orders/?limit=500&page=2", map[string]any{"limit": int64(100), "page": int64(2)}},
		{"integers parse leniently like pydantic", "/v1/orders/?page=+3&limit=1_0", map[string]any{"page": int64(3), "limit": int64(10)}},
		{"a single filter value is a list of one", "/v1/orders/?organization_id=" + strings.ToUpper(fastapitest.OrgUUID),
			map[string]any{"organizationId": []any{fastapitest.OrgUUID}}},
		{"repeated filter values are kept in order", "/v1/orders/?status=paid&status=draft",
			map[string]any{"status": []any{"paid", "draft"}}},
		{"a comma is not a separator", "/v1/orders/?external_customer_id=a,b",
			map[string]any{"externalCustomerId": []any{"a,b"}}},
		{"query strings decode plus and percent escapes", "/v1/orders/?external_customer_id=a+b%20c%zz",
			map[string]any{"externalCustomerId": []any{"a b c%zz"}}},
		{"the last scalar occurrence wins", "/v1/orders/?active=true&active=NO", map[string]any{"active": false}},
		{"sorting keeps its order", "/v1/orders/?sorting=-status&sorting=created_at", map[string]any{"sorting": []any{"-status", "created_at"}}},
		{"metadata pairs are collected per key", "/v1/orders/?metadata[a]=1&metadata[b]=x&metadata[a]=2&metadata[]=y&metadata=z",
			map[string]any{"metadata": []any{map[string]any{"key": "a", "values": []any{"1", "2"}},
				map[string]any{"key": "b", "values": []any{"x"}}}}},
		{"date-times are normalised to UTC", "/v1/orders/?created_after=2026-04-01T12:30:00.5%2B02:00",
			map[string]any{"createdAfter": "2026-04-01T10:30:00.5Z"}},
		{"a plain date means midnight", "/v1/orders/?created_after=2026-04-01", map[string]any{"createdAfter": "2026-04-01T00:00:00Z"}},
		{"a path UUID is canonicalised", "/v1/customers/{" + strings.ToUpper(fastapitest.UUID4) + "}/payment-methods",
			map[string]any{"customerId": fastapitest.UUID4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exec := &fakeExecutor{}
			rec := serve(newTestRouter(t, exec, nil), request(http.MethodGet, tt.target, ""))
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
			}
			if diff := cmp.Diff(tt.want, exec.variables); diff != "" {
				t.Errorf("variables (-want +got):\n%s", diff)
			}
		})
	}
}
