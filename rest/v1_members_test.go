package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// memberBody is a Member body.
type memberBody struct {
	ID         uuid.UUID  `json:"id"`
	CreatedAt  time.Time  `json:"created_at"`
	ModifiedAt *time.Time `json:"modified_at"`
	CustomerID uuid.UUID  `json:"customer_id"`
	Email      string     `json:"email"`
	Name       *string    `json:"name"`
	ExternalID *string    `json:"external_id"`
	Role       string     `json:"role"`
}

// memberWorld is an organization with a team customer (owner ann) and an individual one,
// and another organization with a customer of its own.
type memberWorld struct {
	s            *v1
	org, other   org
	team, solo   uuid.UUID
	owner        memberBody // the team's owner, made with it
	soloOwner    uuid.UUID
	foreignOwner uuid.UUID
}

func newMemberWorld(t *testing.T) *memberWorld {
	t.Helper()
	s := newV1(t)
	w := &memberWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes), other: s.NewOrg(t, resolverstest.AllScopes)}
	w.team = w.newTeam(t, w.org.ID, "team-1", "ann@team.example")
	solo := s.NewCustomer(t, w.org.ID, "solo-1")
	w.solo = solo.ID
	w.soloOwner = w.ownerOf(t, w.solo)
	w.foreignOwner = w.ownerOf(t, w.newTeam(t, w.other.ID, "team-1", "zed@other.example"))
	rec := s.do(t, call{target: "/v1/customers/" + w.team.String() + "/members/" + w.ownerOf(t, w.team).String(), token: w.org.Token})
	decodeJSON(t, rec.Body.Bytes(), &w.owner)
	return w
}

// newTeam creates a team customer without an email, with the given owner.
func (w *memberWorld) newTeam(t *testing.T, orgID uuid.UUID, externalID, owner string) uuid.UUID {
	t.Helper()
	var out struct{ CreateCustomer struct{ ID uuid.UUID } }
	w.s.Run(t, orgID, `mutation($in: CustomerCreateInput!) { createCustomer(input: $in) { id } }`, resolverstest.Vars{
		"in": resolverstest.Vars{"type": "team", "name": "Team", "externalId": externalID, "owner": resolverstest.Vars{"email": owner, "name": "Owner"}}}, &out)
	return out.CreateCustomer.ID
}

// ownerOf is the customer's owner member.
func (w *memberWorld) ownerOf(t *testing.T, customer uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	w.s.Get(t, &id, `SELECT id FROM members WHERE customer_id = $1 AND role = 'owner' AND deleted_at IS NULL`, customer)
	return id
}

// events counts the organization's domain events of a type about an object.
func (w *memberWorld) events(t *testing.T, typ string, object uuid.UUID) int {
	t.Helper()
	var n int
	w.s.Get(t, &n, `SELECT count(*) FROM domain_events WHERE type = $1 AND object_id = $2`, typ, object)
	return n
}

// member sends a call that answers a Member and decodes it.
func (w *memberWorld) member(t *testing.T, c call, status int) memberBody {
	t.Helper()
	return answer[memberBody](t, w, c, status)
}

// answer sends a call, as the organization when it names no token, checks its status and
// decodes its body.
func answer[T any](t *testing.T, w *memberWorld, c call, status int) T {
	t.Helper()
	if c.token == "" {
		c.token = w.org.Token
	}
	rec := w.s.do(t, c)
	want{status: status}.check(t, rec)
	var out T
	decodeJSON(t, rec.Body.Bytes(), &out)
	return out
}

func TestCustomerMembersServeTheContract(t *testing.T) {
	t.Parallel()
	w := newMemberWorld(t)
	team := "/v1/customers/" + w.team.String() + "/members"
	ext := "/v1/customers/external/team-1/members"

	t.Run("a team customer's owner is made with it from the owner it was given", func(t *testing.T) {
		if w.owner.Role != "owner" || w.owner.Email != "ann@team.example" || w.owner.Name == nil || *w.owner.Name != "Owner" ||
			w.owner.ExternalID == nil || *w.owner.ExternalID != "team-1" || w.owner.CustomerID != w.team {
			t.Errorf("owner = %+v", w.owner)
		}
	})

	var bea memberBody
	t.Run("adding a member answers 201 and announces it", func(t *testing.T) {
		bea = w.member(t, call{method: http.MethodPost, target: team, body: `{"email":" bea@team.example ","name":"Bea","external_id":"u-bea"}`}, 201)
		if bea.Role != "member" || bea.Email != "bea@team.example" || *bea.ExternalID != "u-bea" || bea.CustomerID != w.team {
			t.Errorf("member = %+v", bea)
		}
		if n := w.events(t, "member.created", bea.ID); n != 1 {
			t.Errorf("%d member.created events, want 1", n)
		}
	})
	t.Run("adding an email the customer has returns that member and announces nothing", func(t *testing.T) {
		again := w.member(t, call{method: http.MethodPost, target: team, body: `{"email":"BEA@team.example","role":"billing_manager"}`}, 201)
		if again.ID != bea.ID || again.Role != "member" || w.events(t, "member.created", bea.ID) != 1 {
			t.Errorf("member = %+v", again)
		}
	})
	var cal memberBody
	t.Run("a member is added by the customer's external id", func(t *testing.T) {
		cal = w.member(t, call{method: http.MethodPost, target: ext, body: `{"email":"cal@team.example","role":"billing_manager"}`}, 201)
		if cal.Role != "billing_manager" || cal.CustomerID != w.team {
			t.Errorf("member = %+v", cal)
		}
	})

	for _, tc := range []struct {
		name string
		c    call
		want want
	}{
		{"an owner cannot be added", call{method: http.MethodPost, target: team, body: `{"email":"x@team.example","role":"owner"}`},
			validation(item{Type: "literal_error", Loc: []any{"body", "role"}, Input: "owner",
				Msg: "Input should be <MemberRole.member: 'member'> or <MemberRole.billing_manager: 'billing_manager'>"})},
		{"an email is required", call{method: http.MethodPost, target: team, body: `{"name":"X"}`},
			validation(item{Type: "missing", Loc: []any{"body", "email"}, Msg: "Field required"})},
		{"a name over 256 characters is refused", call{method: http.MethodPost, target: team,
			body: `{"email":"x@team.example","name":"` + strings.Repeat("n", 257) + `"}`},
			validation(item{Type: "string_too_long", Loc: []any{"body", "name"}, Msg: "String should have at most 256 characters"})},
		{"a malformed email is refused", call{method: http.MethodPost, target: team, body: `{"email":"not an email"}`},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "email"}, Input: "not an email"})},
		{"an external id over 500 characters is refused", call{method: http.MethodPost, target: team,
			body: `{"email":"x@team.example","external_id":"` + strings.Repeat("é", 501) + `"}`},
			polarValidation(item{Type: "string_too_long", Loc: []any{"body", "external_id"}, Msg: "String should have at most 500 characters"})},
		{"an address longer than one can be is refused", call{method: http.MethodPost, target: team,
			body: `{"email":"` + strings.Repeat("a", 65) + `@team.example"}`},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "email"},
				Msg: "value is not a valid email address: The email address is too long before the @-sign (1 character too many)."})},
		{"an external id another member holds is refused", call{method: http.MethodPost, target: team, body: `{"email":"d@team.example","external_id":"u-bea"}`},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "external_id"}, Msg: "A member with this external ID already exists for this customer."})},
		{"an individual customer has its owner only", call{method: http.MethodPost, target: "/v1/customers/" + w.solo.String() + "/members",
			body: `{"email":"x@solo.example"}`},
			want{status: 403, error: "NotPermitted", detail: "Individual customers can only have one member (the owner). Upgrade to a team customer to add more members."}},
		{"another organization's customer is not found", call{method: http.MethodPost, target: "/v1/customers/" + uuid.NewString() + "/members",
			body: `{"email":"x@team.example"}`}, want{status: 404, error: "ResourceNotFound", detail: "Customer not found"}},
		{"an unknown external customer is not found", call{method: http.MethodPost, target: "/v1/customers/external/nobody/members",
			body: `{"email":"x@team.example"}`}, want{status: 404, error: "ResourceNotFound", detail: "Customer not found"}},
		{"a customer id that is not a UUID is 422 on the path", call{method: http.MethodPost, target: "/v1/customers/abc/members",
			body: `{"email":"x@team.example"}`}, validation(item{Type: "uuid_parsing", Loc: []any{"path", "id"}})},
		{"another customer's member is not found", call{target: team + "/" + w.soloOwner.String()},
			want{status: 404, error: "ResourceNotFound", detail: "Member not found"}},
		{"another organization's member is not found", call{target: "/v1/customers/" + w.team.String() + "/members/" + w.foreignOwner.String()},
			want{status: 404, error: "ResourceNotFound", detail: "Member not found"}},
		{"an unknown member external id is not found", call{target: ext + "/nobody"},
			want{status: 404, error: "ResourceNotFound", detail: "Member not found"}},
		{"the owner cannot step down", call{method: http.MethodPatch, target: team + "/" + w.owner.ID.String(), body: `{"role":"member"}`},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "role"}, Msg: "Cannot change role. Customer must have exactly one owner.", Input: "member"})},
		{"an email another member has is refused", call{method: http.MethodPatch, target: team + "/" + cal.ID.String(), body: `{"email":"Bea@team.example"}`},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "email"}, Msg: "A member with this email already exists for this customer."})},
		{"an individual customer's owner keeps the customer's email", call{method: http.MethodPatch,
			target: "/v1/customers/" + w.solo.String() + "/members/" + w.soloOwner.String(), body: `{"email":"new@solo.example"}`},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "email"},
				Msg: "Cannot change the email of an individual customer's owner. Update the customer's email instead."})},
		{"an unknown role is refused", call{method: http.MethodPatch, target: team + "/" + cal.ID.String(), body: `{"role":"admin"}`},
			validation(item{Type: "enum", Loc: []any{"body", "role"}, Msg: "Input should be 'owner', 'billing_manager' or 'member'"})},
		{"the owner cannot be removed", call{method: http.MethodDelete, target: team + "/" + w.owner.ID.String()},
			polarValidation(item{Type: "value_error", Loc: []any{"body"}, Msg: "Cannot delete the only owner. Transfer ownership first.", Input: w.owner.ID.String()})},
		{"another organization's member cannot be removed", call{method: http.MethodDelete, target: team + "/" + w.foreignOwner.String()},
			want{status: 404, error: "ResourceNotFound", detail: "Member not found"}},
		{"a token without members:write cannot add", call{method: http.MethodPost, target: team, body: `{"email":"x@team.example"}`,
			token: w.s.NewToken(t, w.org.ID, "members:read")}, insufficientScope("members:write")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.c.token == "" {
				tc.c.token = w.org.Token
			}
			tc.want.check(t, w.s.do(t, tc.c))
		})
	}

	t.Run("a member is read by id and by external ids", func(t *testing.T) {
		byID := w.member(t, call{target: team + "/" + bea.ID.String()}, 200)
		byExternal := w.member(t, call{target: ext + "/u-bea"}, 200)
		if diff := cmp.Diff([]memberBody{bea, bea}, []memberBody{byID, byExternal}); diff != "" {
			t.Errorf("read by id and external ids (-want +got):\n%s", diff)
		}
	})
	t.Run("a change answers the member and announces it", func(t *testing.T) {
		got := w.member(t, call{method: http.MethodPatch, target: ext + "/u-bea", body: `{"name":"Beatrice","email":"bee@team.example"}`}, 200)
		if *got.Name != "Beatrice" || got.Email != "bee@team.example" || got.Role != "member" || got.ModifiedAt == nil {
			t.Errorf("member = %+v", got)
		}
		if n := w.events(t, "member.updated", bea.ID); n != 1 {
			t.Errorf("%d member.updated events, want 1", n)
		}
	})
	t.Run("a change to nothing announces nothing", func(t *testing.T) {
		w.member(t, call{method: http.MethodPatch, target: team + "/" + bea.ID.String(), body: `{"name":null,"email":null,"role":null}`}, 200)
		if n := w.events(t, "member.updated", bea.ID); n != 1 {
			t.Errorf("%d member.updated events, want still 1", n)
		}
	})
	t.Run("making a member owner transfers the ownership", func(t *testing.T) {
		got := w.member(t, call{method: http.MethodPatch, target: team + "/" + cal.ID.String(), body: `{"role":"owner"}`}, 200)
		former := w.member(t, call{target: team + "/" + w.owner.ID.String()}, 200)
		if got.Role != "owner" || former.Role != "billing_manager" || w.ownerOf(t, w.team) != cal.ID {
			t.Errorf("new owner %+v, former owner %+v", got, former)
		}
	})
	t.Run("removing a member answers 204 and it is gone", func(t *testing.T) {
		rec := w.s.do(t, call{method: http.MethodDelete, target: ext + "/u-bea", token: w.org.Token})
		want{status: 204}.check(t, rec)
		if rec.Body.Len() != 0 {
			t.Errorf("body = %q, want none", rec.Body)
		}
		want{status: 404, error: "ResourceNotFound"}.check(t, w.s.do(t, call{target: team + "/" + bea.ID.String(), token: w.org.Token}))
		if n := w.events(t, "member.deleted", bea.ID); n != 1 {
			t.Errorf("%d member.deleted events, want 1", n)
		}
		want{status: 204}.check(t, w.s.do(t, call{method: http.MethodDelete, target: team + "/" + w.owner.ID.String(), token: w.org.Token}))
	})
}

func TestListMembersServesTheContract(t *testing.T) {
	t.Parallel()
	w := newMemberWorld(t)
	for _, email := range []string{"m1@team.example", "m2@team.example"} {
		w.member(t, call{method: http.MethodPost, target: "/v1/customers/" + w.team.String() + "/members", body: `{"email":"` + email + `"}`}, 201)
	}
	type page struct {
		Items      []memberBody
		Pagination struct {
			TotalCount int `json:"total_count"`
			MaxPage    int `json:"max_page"`
		}
	}
	list := func(t *testing.T, query string) page {
		t.Helper()
		rec := w.s.do(t, call{target: "/v1/members/" + query, token: w.org.Token})
		want{status: 200}.check(t, rec)
		var p page
		decodeJSON(t, rec.Body.Bytes(), &p)
		return p
	}
	emails := func(p page) string {
		var out []string
		for _, m := range p.Items {
			out = append(out, m.Email)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct{ name, query, want string }{
		{"every live member of the organization, newest first", "", "m2@team.example m1@team.example " + "c-"},
		{"one customer's members", "?customer_id=" + w.team.String(), "m2@team.example m1@team.example ann@team.example"},
		{"by the customer's external id", "?external_customer_id=team-1", "m2@team.example m1@team.example ann@team.example"},
		{"by role", "?role=owner&external_customer_id=team-1", "ann@team.example"},
		{"oldest first", "?sorting=created_at&customer_id=" + w.team.String(), "ann@team.example m1@team.example m2@team.example"},
		{"a page at a time", "?limit=1&page=2&customer_id=" + w.team.String(), "m1@team.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := emails(list(t, tc.query)); !strings.HasPrefix(got, tc.want) {
				t.Errorf("emails = %q, want them to start %q", got, tc.want)
			}
		})
	}
	t.Run("the total counts every match and no other organization's", func(t *testing.T) {
		if p := list(t, ""); p.Pagination.TotalCount != 4 || len(p.Items) != 4 {
			t.Errorf("total = %d, items %d; want the team's three and the individual's owner", p.Pagination.TotalCount, len(p.Items))
		}
	})
	for _, tc := range []struct {
		name, query string
		want        want
	}{
		{"a customer id that is not a UUID is not found, as upstream", "?customer_id=abc",
			want{status: 404, error: "ResourceNotFound", detail: "Invalid customer ID format"}},
		{"an unknown sort is 422", "?sorting=email", validation(item{Type: "enum", Loc: []any{"query", "sorting", 0}})},
		{"an unknown role is 422", "?role=boss", validation(item{Type: "enum", Loc: []any{"query", "role"}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.check(t, w.s.do(t, call{target: "/v1/members/" + tc.query, token: w.org.Token}))
		})
	}
}

// TestMemberExternalIDsAcrossOrganizations: a user token reaches every organization it
// belongs to, where external ids need not be unique.
func TestMemberExternalIDsAcrossOrganizations(t *testing.T) {
	t.Parallel()
	w := newMemberWorld(t)
	both := w.s.NewUser(t, resolverstest.UserSpec{Scope: "members:read members:write", Orgs: []uuid.UUID{w.org.ID, w.other.ID}})
	only := w.s.NewUser(t, resolverstest.UserSpec{Scope: "members:read members:write", Orgs: []uuid.UUID{w.other.ID}})
	ambiguous := want{status: 409, error: "AmbiguousExternalCustomerID"}
	t.Run("an external customer id of two of its organizations is ambiguous", func(t *testing.T) {
		ambiguous.check(t, w.s.do(t, call{target: "/v1/customers/external/team-1/members/team-1", token: both.Token}))
		ambiguous.check(t, w.s.do(t, call{method: http.MethodPost, target: "/v1/customers/external/team-1/members",
			body: `{"email":"x@team.example"}`, token: both.Token}))
	})
	t.Run("in one of them it names that organization's customer", func(t *testing.T) {
		got := w.member(t, call{target: "/v1/customers/external/team-1/members/team-1", token: only.Token}, 200)
		if got.ID != w.foreignOwner {
			t.Errorf("member = %+v, want the other organization's owner", got)
		}
	})
}

// TestMemberEventsRenderTheWebhookPayloads renders member.* events as the serve loop does and
// checks each against the contract's payload schema, a removed member included.
func TestMemberEventsRenderTheWebhookPayloads(t *testing.T) {
	t.Parallel()
	w := newMemberWorld(t)
	m := w.member(t, call{method: http.MethodPost, target: "/v1/customers/" + w.team.String() + "/members", body: `{"email":"gone@team.example"}`}, 201)
	want{status: 204}.check(t, w.s.do(t, call{method: http.MethodDelete,
		target: "/v1/customers/" + w.team.String() + "/members/" + m.ID.String(), token: w.org.Token}))
	for _, tc := range []struct{ typ, schema string }{
		{"member.created", "WebhookMemberCreatedPayload"},
		{"member.updated", "WebhookMemberUpdatedPayload"},
		{"member.deleted", "WebhookMemberDeletedPayload"},
	} {
		t.Run(tc.typ+" renders as "+tc.schema, func(t *testing.T) {
			_, data := w.s.webhookPayload(t, w.org.ID, tc.typ, tc.schema, m.ID)
			var got memberBody
			if err := json.Unmarshal(data, &got); err != nil || got.ID != m.ID || got.Email != "gone@team.example" {
				t.Errorf("data = %s", data)
			}
		})
	}
}
