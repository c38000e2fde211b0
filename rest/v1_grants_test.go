package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/storage"
)

// grantsFixture is an organization whose license-key benefit has one grant in each state
// upstream distinguishes, created a minute apart (newest first: granted with a member and a
// key, revoked, pending, failed), plus the benefits the 404 and clamping cases need. Grants
// are arranged with the storage functions the grant use case runs.
type grantsFixture struct {
	s                                 *v1
	org, other                        org
	benefit                           uuid.UUID // license_keys
	granted, revoked, pending, failed uuid.UUID // grants of benefit
	customers                         []uuid.UUID
	member                            uuid.UUID // holds the granted grant
	key                               *storage.LicenseKey
	deleted, foreign, many            uuid.UUID // benefits
}

func newGrantsFixture(t *testing.T) grantsFixture {
	t.Helper()
	ctx := context.Background()
	s := newV1(t)
	f := grantsFixture{s: s, org: s.NewOrg(t, "benefits:read"), other: s.NewOrg(t, "benefits:read")}
	f.benefit = f.newBenefit(t, f.org.ID, "license_keys", `{"prefix": "ab", "expires": null, "activations": null, "limit_usage": null}`)
	product := s.NewProduct(t, f.org.ID, "Granted").ID
	var grants []uuid.UUID
	for i := range 4 {
		c := s.NewCustomer(t, f.org.ID, fmt.Sprintf("ext-%d", i))
		f.customers = append(f.customers, c.ID)
		g := f.grant(t, f.org.ID, f.benefit, c.ID, s.NewPaidOrder(t, f.org.ID, c.ID, product, nil))
		s.Exec(t, `UPDATE benefit_grants SET created_at = now() - $2 * interval '1 minute' WHERE id = $1`, g.ID, i+1)
		grants = append(grants, g.ID)
	}
	f.granted, f.revoked, f.pending, f.failed = grants[0], grants[1], grants[2], grants[3]
	f.member = uuid.New()
	s.Exec(t, `INSERT INTO members (id, organization_id, customer_id, email, name) VALUES ($1, $2, $3, 'm@example.com', 'Mo')`,
		f.member, f.org.ID, f.customers[0])
	s.Exec(t, `UPDATE benefit_grants SET member_id = $2 WHERE id = $1`, f.granted, f.member)
	var err error
	f.key, err = storage.IssueLicenseKey(ctx, s.DB, f.org.ID, f.benefit, f.customers[0], &f.member, "AB-KEY-000001",
		storage.LicenseKeyTerms{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	props := fmt.Sprintf(`{"license_key_id": %q, "display_key": %q}`, f.key.ID, f.key.DisplayKey)
	if _, err := storage.SetGrantProperties(ctx, s.DB, f.granted, storage.RawJSON(props)); err != nil {
		t.Fatal(err)
	}
	s.Exec(t, `UPDATE benefit_grants SET granted_at = NULL, revoked_at = now() WHERE id = $1`, f.revoked)
	s.Exec(t, `UPDATE benefit_grants SET granted_at = NULL WHERE id = $1`, f.pending)
	s.Exec(t, `UPDATE benefit_grants SET granted_at = NULL,
		error = '{"message": "Boom", "type": "BenefitActionRequiredError", "timestamp": "2027-01-01T00:00:00"}' WHERE id = $1`, f.failed)

	f.deleted = f.newBenefit(t, f.org.ID, "custom", `{"note": null}`)
	s.Exec(t, `UPDATE benefits SET deleted_at = now() WHERE id = $1`, f.deleted)
	f.foreign = f.newBenefit(t, f.other.ID, "custom", `{"note": null}`)
	f.many = f.newBenefit(t, f.org.ID, "custom", `{"note": "hi"}`)
	s.Exec(t, `WITH o AS (
			INSERT INTO orders (organization_id, customer_id, product_id, status, billing_reason, currency,
				subtotal_amount, net_amount, total_amount)
			SELECT $1, $2, $3, 'paid', 'purchase', 'usd', 0, 0, 0 FROM generate_series(1, 101) RETURNING id)
		INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, order_id, granted_at)
		SELECT $1, $4, $2, o.id, now() FROM o`, f.org.ID, f.customers[1], product, f.many)
	return f
}

func (f grantsFixture) newBenefit(tb testing.TB, orgID uuid.UUID, typ storage.BenefitType, props string) uuid.UUID {
	tb.Helper()
	b, err := storage.CreateBenefit(context.Background(), f.s.DB, orgID, storage.BenefitWrite{Type: typ,
		Description: "A " + string(typ) + " benefit", Visibility: "public", Properties: storage.RawJSON(props)})
	if err != nil {
		tb.Fatal(err)
	}
	return b.ID
}

func (f grantsFixture) grant(tb testing.TB, orgID, benefitID, customerID, orderID uuid.UUID) *storage.BenefitGrant {
	tb.Helper()
	g, _, err := storage.UpsertGrant(context.Background(), f.s.DB, storage.GrantKey{OrganizationID: orgID, BenefitID: benefitID,
		CustomerID: customerID, OrderID: &orderID}, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// grantPage is a grant list body.
type grantPage struct {
	Items []struct {
		ID         uuid.UUID       `json:"id"`
		IsGranted  bool            `json:"is_granted"`
		IsRevoked  bool            `json:"is_revoked"`
		MemberID   *uuid.UUID      `json:"member_id"`
		Properties json.RawMessage `json:"properties"`
	} `json:"items"`
	Pagination struct {
		TotalCount int `json:"total_count"`
		MaxPage    int `json:"max_page"`
	} `json:"pagination"`
}

func TestListBenefitGrantsServesTheContract(t *testing.T) {
	t.Parallel()
	f := newGrantsFixture(t)
	path := func(id uuid.UUID, query string) string { return "/v1/benefits/" + id.String() + "/grants" + query }
	all := []uuid.UUID{f.granted, f.revoked, f.pending, f.failed}
	c := f.customers
	tests := []struct {
		name       string
		call       call
		want       want
		ids        []uuid.UUID // nil: 100 items
		total, max int
	}{
		{name: "every grant of the benefit comes newest first",
			call: call{target: path(f.benefit, "")}, ids: all, total: 4, max: 1,
			want: want{status: 200, headers: map[string]string{"Content-Type": "application/json", "Polar-Version": "2026-04"}}},
		{name: "is_granted=true is the granted grant",
			call: call{target: path(f.benefit, "?is_granted=true")}, want: want{status: 200}, ids: all[:1], total: 1, max: 1},
		{name: "is_granted=false is every grant without granted_at: revoked, pending and failed",
			call: call{target: path(f.benefit, "?is_granted=false")}, want: want{status: 200}, ids: all[1:], total: 3, max: 1},
		{name: "is_granted takes pydantic's lax booleans",
			call: call{target: path(f.benefit, "?is_granted=OFF")}, want: want{status: 200}, ids: all[1:], total: 3, max: 1},
		{name: "the last is_granted wins",
			call: call{target: path(f.benefit, "?is_granted=false&is_granted=1")}, want: want{status: 200}, ids: all[:1], total: 1, max: 1},
		{name: "repeated customer_id values are OR-ed",
			call: call{target: path(f.benefit, "?customer_id="+c[1].String()+"&customer_id="+c[3].String())},
			want: want{status: 200}, ids: []uuid.UUID{f.revoked, f.failed}, total: 2, max: 1},
		{name: "customer_id and is_granted are AND-ed",
			call: call{target: path(f.benefit, "?is_granted=false&customer_id="+c[0].String()+"&customer_id="+c[2].String())},
			want: want{status: 200}, ids: []uuid.UUID{f.pending}, total: 1, max: 1},
		{name: "member_id selects the member's grants",
			call: call{target: path(f.benefit, "?member_id="+f.member.String())}, want: want{status: 200}, ids: all[:1], total: 1, max: 1},
		{name: "page two of size two holds the two oldest",
			call: call{target: path(f.benefit, "?page=2&limit=2")}, want: want{status: 200}, ids: all[2:], total: 4, max: 2},
		{name: "a page past the last is empty",
			call: call{target: path(f.benefit, "?page=3&limit=2")}, want: want{status: 200}, ids: []uuid.UUID{}, total: 4, max: 2},
		{name: "a limit above 100 is clamped to 100",
			call: call{target: path(f.many, "?limit=1000")}, want: want{status: 200}, total: 101, max: 2},
		{name: "a benefit without grants has an empty page and max_page 0",
			call: call{target: path(f.benefit, "?customer_id="+uuid.NewString())}, want: want{status: 200}, ids: []uuid.UUID{}},
		{name: "a benefits:write token may list",
			call: call{target: path(f.benefit, ""), token: f.s.NewToken(t, f.org.ID, "benefits:write")},
			want: want{status: 200}, ids: all, total: 4, max: 1},

		{name: "page 0 is 422 greater_than",
			call: call{target: path(f.benefit, "?page=0")},
			want: validation(item{Type: "greater_than", Loc: []any{"query", "page"}, Msg: "Input should be greater than 0", Input: "0"})},
		{name: "an id that is not a UUID is 422 uuid_parsing",
			call: call{target: "/v1/benefits/nope/grants"},
			want: validation(item{Type: "uuid_parsing", Loc: []any{"path", "id"}, Input: "nope"})},
		{name: "a version 1 UUID is 422 uuid_version",
			call: call{target: "/v1/benefits/6ba7b810-9dad-11d1-80b4-00c04fd430c8/grants"},
			want: validation(item{Type: "uuid_version", Loc: []any{"path", "id"}, Msg: "UUID version 4 expected"})},
		{name: "an is_granted that is not a boolean is 422 bool_parsing",
			call: call{target: path(f.benefit, "?is_granted=maybe")},
			want: validation(item{Type: "bool_parsing", Loc: []any{"query", "is_granted"},
				Msg: "Input should be a valid boolean, unable to interpret input", Input: "maybe"})},
		{name: "a customer_id that is not a UUID is 422",
			call: call{target: path(f.benefit, "?customer_id=nope")},
			want: want{status: 422, error: "RequestValidationError"}},

		{name: "an unknown benefit is 404 ResourceNotFound",
			call: call{target: path(uuid.New(), "")}, want: want{status: 404, body: resourceNotFoundBody}},
		{name: "a deleted benefit is 404 ResourceNotFound",
			call: call{target: path(f.deleted, "")}, want: want{status: 404, body: resourceNotFoundBody}},
		{name: "another organization's benefit is 404, never 403",
			call: call{target: path(f.foreign, "")}, want: want{status: 404, body: resourceNotFoundBody}},

		{name: "no token is 401 Unauthorized",
			call: call{target: path(f.benefit, ""), token: "-"}, want: unauthorized()},
		{name: "no token beats a bad parameter",
			call: call{target: path(f.benefit, "?is_granted=maybe"), token: "-"}, want: unauthorized()},
		{name: "a token without benefits scopes is 403 insufficient_scope",
			call: call{target: path(f.benefit, ""), token: f.s.NewToken(t, f.org.ID, "license_keys:read")},
			want: insufficientScope("benefits:read benefits:write")},
		{name: "a customer session is downgraded to anonymous: 401",
			call: call{target: path(f.benefit, ""), token: f.s.NewCustomerSession(t, f.org.ID, c[0])},
			want: unauthorized()},
		{name: "a trailing slash redirects with 307",
			call: call{target: path(f.benefit, "/")},
			want: want{status: 307, headers: map[string]string{"Location": portalURL + path(f.benefit, "")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := tt.call
			switch call.token {
			case "":
				call.token = f.org.Token
			case "-":
				call.token = ""
			}
			rec := f.s.do(t, call)
			tt.want.check(t, rec)
			if tt.want.status != http.StatusOK {
				return
			}
			var p grantPage
			decodeJSON(t, rec.Body.Bytes(), &p)
			if p.Pagination.TotalCount != tt.total || p.Pagination.MaxPage != tt.max {
				t.Errorf("pagination = %+v, want total_count %d, max_page %d", p.Pagination, tt.total, tt.max)
			}
			got := []uuid.UUID{}
			for _, it := range p.Items {
				got = append(got, it.ID)
			}
			if tt.ids == nil && len(got) != 100 {
				t.Errorf("got %d items, want the clamped 100", len(got))
			} else if tt.ids != nil {
				if diff := cmp.Diff(tt.ids, got); diff != "" {
					t.Errorf("item order (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestBenefitGrantShape pins every field of a grant item, nested objects included.
func TestBenefitGrantShape(t *testing.T) {
	t.Parallel()
	f := newGrantsFixture(t)
	rec := f.s.do(t, call{target: "/v1/benefits/" + f.benefit.String() + "/grants", token: f.org.Token})
	want{status: 200}.check(t, rec)
	var raw struct{ Items []map[string]json.RawMessage }
	decodeJSON(t, rec.Body.Bytes(), &raw)
	granted, failed := raw.Items[0], raw.Items[3]
	keys := func(m map[string]json.RawMessage) []string { return keysOf(t, grantJSON(t, m)) }
	if diff := cmp.Diff([]string{"benefit", "benefit_id", "created_at", "customer", "customer_id", "error", "granted_at", "id",
		"is_granted", "is_revoked", "member", "member_id", "modified_at", "order_id", "properties", "revoked_at",
		"subscription_id"}, keys(granted)); diff != "" {
		t.Errorf("item keys (-want +got):\n%s", diff)
	}
	member := map[string]any{}
	decodeJSON(t, granted["member"], &member)
	delete(member, "created_at")
	for field, want := range map[string]any{
		"properties":      map[string]any{"display_key": f.key.DisplayKey, "license_key_id": f.key.ID.String()},
		"error":           nil,
		"revoked_at":      nil,
		"is_granted":      true,
		"is_revoked":      false,
		"subscription_id": nil,
		"member_id":       f.member.String(),
	} {
		var got any
		decodeJSON(t, granted[field], &got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", field, diff)
		}
	}
	if diff := cmp.Diff(map[string]any{"id": f.member.String(), "modified_at": nil, "customer_id": f.customers[0].String(),
		"email": "m@example.com", "name": "Mo", "external_id": nil, "role": "member"}, member); diff != "" {
		t.Errorf("member (-want +got):\n%s", diff)
	}
	var benefit map[string]any
	decodeJSON(t, granted["benefit"], &benefit)
	if benefit["type"] != "license_keys" || benefit["id"] != f.benefit.String() || benefit["is_deleted"] != false ||
		cmp.Diff(map[string]any{"prefix": "ab", "expires": nil, "activations": nil, "limit_usage": nil}, benefit["properties"]) != "" {
		t.Errorf("benefit = %s", granted["benefit"])
	}
	var customer map[string]any
	decodeJSON(t, granted["customer"], &customer)
	if customer["id"] != f.customers[0].String() || customer["external_id"] != "ext-0" || customer["type"] != "individual" {
		t.Errorf("customer = %s", granted["customer"])
	}
	var failedView struct {
		Error      map[string]any
		Member     any
		GrantedAt  any `json:"granted_at"`
		Properties map[string]any
	}
	decodeJSON(t, grantJSON(t, failed), &failedView)
	if diff := cmp.Diff(map[string]any{"message": "Boom", "type": "BenefitActionRequiredError", "timestamp": "2027-01-01T00:00:00"},
		failedView.Error); diff != "" || failedView.Member != nil || failedView.GrantedAt != nil || len(failedView.Properties) != 0 {
		t.Errorf("failed grant = %+v; error diff %s", failedView, diff)
	}
}

func grantJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
