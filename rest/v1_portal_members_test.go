package rest_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
)

// portalMemberBody is a CustomerPortalMember body.
type portalMemberBody struct {
	ID    uuid.UUID `json:"id"`
	Email string    `json:"email"`
	Name  *string   `json:"name"`
	Role  string    `json:"role"`
}

func TestPortalMembersServeTheContract(t *testing.T) {
	t.Parallel()
	w := newSeatWorld(t)
	owner := w.s.NewMemberSession(t, w.org.ID, w.team, w.owner.ID)
	soloOwner := w.s.NewMemberSession(t, w.org.ID, w.solo, w.soloOwner)
	portal := func(t *testing.T, c call, status int) portalMemberBody {
		t.Helper()
		return answer[portalMemberBody](t, w.memberWorld, c, status)
	}

	var fay portalMemberBody
	t.Run("a billing manager adds a member; the portal announces nothing", func(t *testing.T) {
		fay = portal(t, call{method: http.MethodPost, target: "/v1/customer-portal/members", body: `{"email":"fay@team.example","name":"Fay"}`,
			token: w.manager}, 201)
		if fay.Role != "member" || fay.Email != "fay@team.example" || w.events(t, "member.created", fay.ID) != 0 {
			t.Errorf("member = %+v", fay)
		}
	})
	t.Run("the team is listed oldest first", func(t *testing.T) {
		rec := w.s.do(t, call{target: "/v1/customer-portal/members", token: w.manager})
		want{status: 200, has: []string{`"total_count":4`}}.check(t, rec)
		var page struct{ Items []portalMemberBody }
		decodeJSON(t, rec.Body.Bytes(), &page)
		if len(page.Items) != 4 || page.Items[0].ID != w.owner.ID || page.Items[3].ID != fay.ID {
			t.Errorf("items = %+v", page.Items)
		}
	})

	for _, tc := range []struct {
		name string
		c    call
		want want
	}{
		{"a customer session is refused as anonymous", call{target: "/v1/customer-portal/members", token: w.customerSession}, unauthorized()},
		{"a plain member is refused", call{target: "/v1/customer-portal/members", token: w.plain},
			want{status: 403, error: "NotPermitted", detail: "Insufficient role for this operation"}},
		{"an individual customer has no team to manage", call{target: "/v1/customer-portal/members", token: soloOwner},
			want{status: 403, error: "NotPermitted", detail: "Member management is only available for team customers. Purchase a seat-based product to enable team features."}},
		{"an owner cannot be added", call{method: http.MethodPost, target: "/v1/customer-portal/members", body: `{"email":"x@team.example","role":"owner"}`, token: w.manager},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "role"}, Msg: "Cannot add a member as owner. There must be exactly one owner."})},
		{"nobody changes their own role", call{method: http.MethodPatch, target: "/v1/customer-portal/members/" + w.managerID.String(),
			body: `{"role":"member"}`, token: w.manager},
			polarValidation(item{Type: "value_error", Loc: []any{"path", "id"}, Msg: "You cannot modify your own role.", Input: w.managerID.String()})},
		{"only the owner hands the ownership over", call{method: http.MethodPatch, target: "/v1/customer-portal/members/" + fay.ID.String(),
			body: `{"role":"owner"}`, token: w.manager},
			polarValidation(item{Type: "value_error", Loc: []any{"body", "role"}, Msg: "Only the owner can transfer ownership."})},
		{"nobody removes themselves", call{method: http.MethodDelete, target: "/v1/customer-portal/members/" + w.managerID.String(), token: w.manager},
			polarValidation(item{Type: "value_error", Loc: []any{"path", "id"}, Msg: "You cannot remove yourself from the team."})},
		{"the owner cannot be removed", call{method: http.MethodDelete, target: "/v1/customer-portal/members/" + w.owner.ID.String(), token: w.manager},
			polarValidation(item{Type: "value_error", Loc: []any{"body"}, Msg: "Cannot delete the only owner. Transfer ownership first."})},
		{"another customer's member is not found", call{method: http.MethodPatch, target: "/v1/customer-portal/members/" + w.soloOwner.String(),
			body: `{"name":"X"}`, token: w.manager}, want{status: 404, error: "ResourceNotFound", detail: "Member not found"}},
		{"another organization's member cannot be removed", call{method: http.MethodDelete, target: "/v1/customer-portal/members/" + w.foreignOwner.String(),
			token: w.manager}, want{status: 404, error: "ResourceNotFound", detail: "Member not found"}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.want.check(t, w.s.do(t, tc.c)) })
	}

	t.Run("a billing manager renames a member and makes it billing manager", func(t *testing.T) {
		got := portal(t, call{method: http.MethodPatch, target: "/v1/customer-portal/members/" + fay.ID.String(),
			body: `{"name":"Fay B","role":"billing_manager"}`, token: w.manager}, 200)
		if *got.Name != "Fay B" || got.Role != "billing_manager" || w.events(t, "member.updated", fay.ID) != 1 {
			t.Errorf("member = %+v", got)
		}
	})
	t.Run("the owner hands the ownership over and becomes billing manager", func(t *testing.T) {
		got := portal(t, call{method: http.MethodPatch, target: "/v1/customer-portal/members/" + fay.ID.String(), body: `{"role":"owner"}`, token: owner}, 200)
		if got.Role != "owner" || w.ownerOf(t, w.team) != fay.ID {
			t.Errorf("member = %+v", got)
		}
	})
	t.Run("the former owner's session carries its new role at once", func(t *testing.T) {
		want{status: 200}.check(t, w.s.do(t, call{target: "/v1/customer-portal/members", token: owner}))
		want{status: 204}.check(t, w.s.do(t, call{method: http.MethodDelete, target: "/v1/customer-portal/members/" + w.managerID.String(), token: owner}))
	})
	t.Run("a removed member's session stops at once", func(t *testing.T) {
		invalidToken().check(t, w.s.do(t, call{target: "/v1/customer-portal/members", token: w.manager}))
	})
	t.Run("a member demoted to member loses team management at once", func(t *testing.T) {
		fayOwner := w.s.NewMemberSession(t, w.org.ID, w.team, fay.ID)
		portal(t, call{method: http.MethodPatch, target: "/v1/customer-portal/members/" + w.owner.ID.String(), body: `{"role":"member"}`, token: fayOwner}, 200)
		want{status: 403, error: "NotPermitted"}.check(t, w.s.do(t, call{target: "/v1/customer-portal/members", token: owner}))
	})
}
