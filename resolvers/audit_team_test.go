package resolvers_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers/resolverstest"
)

func TestAuditRecordsOrganizationMembership(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	tm := newTeam(t, s)
	owner, admin, member, finance := tm.users[auth.RoleOwner], tm.users[auth.RoleAdmin], tm.users[auth.RoleMember],
		tm.users[auth.RoleFinance]
	gone := invite(t, s, owner.Token, vars{"email": "gone@example.com"})
	joinerID, joinerToken := personWithEmail(t, s, "joiner@example.com")
	joining := invite(t, s, owner.Token, vars{"email": "joiner@example.com", "role": "member"})
	_, tokens := invitationMails(t, s, "joiner@example.com")
	runAuditCases(t, s, []auditCase{
		{"inviting records the invitation without its token", owner.Token, inviteDoc,
			vars{"input": vars{"email": "new@example.com", "role": "admin"}}, byUser,
			[]auditWant{{"organization_invitation", created, "token", uuid.Nil}}},
		{"cancelling an invitation records when", owner.Token, cancelInviteDoc, vars{"id": gone.ID}, byUser,
			[]auditWant{{"organization_invitation", updated, "cancelled_at", gone.ID}}},
		{"accepting records the invitation accepted and the new member, by the invited user", joinerToken, acceptDoc,
			vars{"token": tokens[len(tokens)-1]}, byUser, []auditWant{{"organization_invitation", updated, "accepted_at", joining.ID},
				{"organization_member", created, "role", joinerID}}},
		{"changing a role records the role", owner.Token, changeRoleDoc,
			vars{"input": vars{"userId": member.ID, "role": "admin"}}, byUser,
			[]auditWant{{"organization_member", updated, "role", member.ID}}},
		{"removing a member records a delete", owner.Token, removeMemberDoc, vars{"input": vars{"userId": finance.ID}},
			byUser, []auditWant{{"organization_member", deleted, "", finance.ID}}},
		{"leaving records a delete by the one who left", admin.Token, leaveDoc, nil, byUser,
			[]auditWant{{"organization_member", deleted, "", admin.ID}}},
	})
}

func TestAuditRecordsCustomerMembers(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	team := createCustomer(t, s, org.Token, vars{"type": "team", "name": "Team", "owner": vars{"email": "lead@example.com"}})
	var owner uuid.UUID
	s.Get(t, &owner, `SELECT id FROM members WHERE customer_id = $1 AND role = 'owner'`, team.ID)
	portal := s.NewMemberSession(t, org.ID, team.ID, owner)
	newMember := func(email string) uuid.UUID {
		var out struct{ CreateMember struct{ ID uuid.UUID } }
		s.Query(t, org.Token, createMemberDoc, vars{"in": vars{"customerId": team.ID, "email": email}}, &out)
		return out.CreateMember.ID
	}
	renamed, removed := newMember("renamed@example.com"), newMember("removed@example.com")
	portalRenamed, portalRemoved := newMember("p-renamed@example.com"), newMember("p-removed@example.com")
	ref := func(id uuid.UUID) vars { return vars{"customerId": team.ID, "id": id} }
	runAuditCases(t, s, []auditCase{
		{"adding a member records it", org.Token, createMemberDoc,
			vars{"in": vars{"customerId": team.ID, "email": "added@example.com"}}, byOrg,
			[]auditWant{{"member", created, "email", uuid.Nil}}},
		{"renaming a member records the name", org.Token, updateMemberDoc,
			vars{"in": vars{"member": ref(renamed), "name": "Renamed"}}, byOrg, []auditWant{{"member", updated, "name", renamed}}},
		{"removing a member records a delete", org.Token, deleteMemberDoc, vars{"in": vars{"member": ref(removed)}}, byOrg,
			[]auditWant{{"member", deleted, "", removed}}},
		{"the team's owner adding a member in the portal records it as the member's", portal,
			`mutation { portalAddMember(input: {email: "portal@example.com"}) { id } }`, nil, byMember,
			[]auditWant{{"member", created, "email", uuid.Nil}}},
		{"the team's owner renaming a member in the portal records the name", portal,
			`mutation($id: UUID!) { portalUpdateMember(input: {id: $id, name: "Renamed"}) { id } }`, vars{"id": portalRenamed},
			byMember, []auditWant{{"member", updated, "name", portalRenamed}}},
		{"the team's owner removing a member in the portal records a delete", portal,
			`mutation($id: UUID!) { portalRemoveMember(input: {id: $id}) { id } }`, vars{"id": portalRemoved},
			byMember, []auditWant{{"member", deleted, "", portalRemoved}}},
	})
}

func TestAuditRecordsSeatsManagedInThePortal(t *testing.T) {
	t.Parallel()
	w := newGrantWorld(t)
	plan := w.s.NewProduct(t, w.org.ID, "Team plan", w.licenseBenefit(t, vars{"prefix": "team"}).ID)
	team := createCustomer(t, w.s, w.org.Token, vars{"type": "team", "name": "Team", "owner": vars{"email": "lead@example.com"}})
	var owner uuid.UUID
	w.s.Get(t, &owner, `SELECT id FROM members WHERE customer_id = $1 AND role = 'owner'`, team.ID)
	portal := w.s.NewMemberSession(t, w.org.ID, team.ID, owner)
	subID := w.s.NewSubscription(t, w.org.ID, team.ID, plan.ID, ptr(4))
	resent, _ := w.assign(t, vars{"subscriptionId": subID, "email": "resent@example.com"})
	portalResent, _ := w.assign(t, vars{"subscriptionId": subID, "email": "p-resent@example.com"})
	portalRevoked, _ := w.assign(t, vars{"subscriptionId": subID, "email": "p-revoked@example.com"})
	runAuditCases(t, w.s, []auditCase{
		{"resending a seat's invitation records its new token", w.org.Token,
			`mutation($id: UUID!) { resendSeatInvitation(input: {id: $id}) { invitationToken } }`, vars{"id": resent.ID}, byOrg,
			[]auditWant{{"customer_seat", updated, "invitation_token", resent.ID}}},
		{"the team's owner assigning a seat in the portal records it", portal,
			`mutation($id: UUID!) { portalAssignSeat(input: {subscriptionId: $id, email: "new@example.com"}) { id } }`,
			vars{"id": subID}, byMember, []auditWant{{"customer_seat", created, "email", uuid.Nil}}},
		{"the team's owner resending an invitation in the portal records its new token", portal,
			`mutation($id: UUID!) { portalResendSeatInvitation(input: {id: $id}) { id } }`, vars{"id": portalResent.ID}, byMember,
			[]auditWant{{"customer_seat", updated, "invitation_token", portalResent.ID}}},
		{"the team's owner revoking a seat in the portal records its status", portal,
			`mutation($id: UUID!) { portalRevokeSeat(input: {id: $id}) { id } }`, vars{"id": portalRevoked.ID}, byMember,
			[]auditWant{{"customer_seat", updated, "status", portalRevoked.ID}}},
	})
}

func TestAuditRecordsTheEndOfUserSessions(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	b, u := signedInBrowser(t, s, resolverstest.UserSpec{Scope: allScopes})
	_, _ = s.NewUserSession(t, u.ID)
	var other uuid.UUID
	s.Get(t, &other, `SELECT id FROM user_sessions WHERE user_id = $1 ORDER BY created_at DESC, id LIMIT 1`, u.ID)
	runAuditCases(t, s, []auditCase{
		{"revoking one of one's sessions records a delete", u.Token,
			`mutation($id: UUID!) { revokeUserSession(id: $id) { id } }`, vars{"id": other}, byUser,
			[]auditWant{{"user_session", deleted, "deleted_at", other}}},
	})

	t.Run("signing out of a browser records the session's end as the user's", func(t *testing.T) {
		const doc = `mutation { signOut }`
		coverAudit(doc)
		var current uuid.UUID
		s.Get(t, &current, `SELECT id FROM user_sessions WHERE user_id = $1 AND deleted_at IS NULL`, u.ID)
		mark := auditMark(t, s.App)
		if reply := b.send(t, http.MethodPost, doc, nil); reply.code() != "OK" {
			t.Fatalf("signOut: %+v", reply)
		}
		checkAudit(t, auditSince(t, s.App, mark), auditCase{actor: byUser,
			want: []auditWant{{"user_session", deleted, "deleted_at", current}}}, "signOut", "graphql")
	})
}
