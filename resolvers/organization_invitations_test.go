package resolvers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers/resolverstest"
)

func TestAnInvitationIsMailedAndAcceptedByItsAddressOnly(t *testing.T) {
	s := resolverstest.New(t)
	tm := newTeam(t, s)
	owner := tm.users[auth.RoleOwner]
	inv := invite(t, s, owner.Token, vars{"email": "New.Hire@Example.com", "role": "admin"})
	if inv.Role != "admin" || inv.OrganizationID != tm.org.ID || inv.InvitedBy == nil || *inv.InvitedBy != owner.ID {
		t.Errorf("invitation %+v", inv)
	}
	if exp := expiry(t, inv); exp.Sub(time.Now()) < 7*24*time.Hour-time.Minute || exp.Sub(time.Now()) > 7*24*time.Hour+time.Minute {
		t.Errorf("expires at %s, want in seven days", inv.ExpiresAt)
	}
	msgs, tokens := invitationMails(t, s, "New.Hire@Example.com")
	if len(tokens) != 1 || !strings.Contains(msgs[0].Text, owner.Email) || !strings.Contains(msgs[0].Subject, "Org ") {
		t.Fatalf("mails %+v", msgs)
	}
	var clear int
	s.Get(t, &clear, `SELECT count(*) FROM organization_invitations WHERE token = $1 OR token = $2`, tokens[0],
		string(auth.Hash(s.Secret, tokens[0])))
	if clear != 1 {
		t.Fatal("the invitation's token is not stored as its hash alone")
	}
	s.Get(t, &clear, `SELECT count(*) FROM organization_invitations WHERE token = $1`, tokens[0])
	if clear != 0 {
		t.Fatal("the invitation's token is stored in clear")
	}

	_, stranger := personWithEmail(t, s, "someone.else@example.com")
	wantError(t, s.QueryError(t, stranger, acceptDoc, vars{"token": tokens[0]}), "FORBIDDEN", "NotPermitted")
	unverified := s.NewUser(t, resolverstest.UserSpec{Scope: allScopes})
	s.Exec(t, `UPDATE users SET email = 'new.hire@example.com' WHERE id = $1`, unverified.ID)
	wantError(t, s.QueryError(t, unverified.Token, acceptDoc, vars{"token": tokens[0]}), "FORBIDDEN", "NotPermitted")

	hire, token := personWithEmail(t, s, "new.hire@EXAMPLE.com")
	var out struct{ AcceptOrganizationInvitation orgMember }
	s.Query(t, token, acceptDoc, vars{"token": tokens[0]}, &out)
	if m := out.AcceptOrganizationInvitation; m.UserID != hire || m.Role != "admin" || m.OrganizationID != tm.org.ID {
		t.Errorf("accepted as %+v", m)
	}
	if got := members(t, s, token, tm.org.ID)[hire]; got.Role != "admin" {
		t.Errorf("the new member lists itself as %+v", got)
	}
	wantError(t, s.QueryError(t, token, acceptDoc, vars{"token": tokens[0]}), "BAD_USER_INPUT", "InvalidInvitationToken")
	var pending struct {
		OrganizationInvitations struct{ Items []invitation }
	}
	s.Query(t, owner.Token, invitationsDoc, vars{"org": tm.org.ID}, &pending)
	if len(pending.OrganizationInvitations.Items) != 0 {
		t.Errorf("an accepted invitation is still pending: %+v", pending.OrganizationInvitations.Items)
	}
	wantError(t, s.QueryError(t, owner.Token, inviteDoc, vars{"input": vars{"email": "NEW.HIRE@example.com"}}),
		"BAD_USER_INPUT", "BadRequest")
}

func TestInvitingAgainRefreshesTheInvitationAndOldLinksStop(t *testing.T) {
	s := resolverstest.New(t)
	tm := newTeam(t, s)
	admin := tm.users[auth.RoleAdmin]
	day := 24 * time.Hour
	base := time.Now()
	s.Clock.Set(base)
	first := invite(t, s, admin.Token, vars{"email": "twice@example.com", "role": "member"})
	s.Clock.Set(base.Add(6 * day))
	second := invite(t, s, admin.Token, vars{"email": "Twice@example.com", "role": "finance"})
	if second.ID != first.ID || second.Role != "finance" || !expiry(t, second).Equal(base.Add(13*day).Truncate(time.Microsecond)) {
		t.Errorf("re-invited %+v after %+v; want the same invitation refreshed to expire in 7 days", second, first)
	}
	_, tokens := invitationMails(t, s, "twice@example.com")
	_, again := invitationMails(t, s, "Twice@example.com")
	tokens = append(tokens, again...)
	if len(tokens) != 2 || tokens[0] == tokens[1] {
		t.Fatalf("tokens %v, want two different links", tokens)
	}
	_, token := personWithEmail(t, s, "twice@example.com")
	wantError(t, s.QueryError(t, token, acceptDoc, vars{"token": tokens[0]}), "BAD_USER_INPUT", "InvalidInvitationToken")
	s.Clock.Set(base.Add(13*day + time.Minute))
	wantError(t, s.QueryError(t, token, acceptDoc, vars{"token": tokens[1]}), "BAD_USER_INPUT", "InvalidInvitationToken")
	s.Clock.Set(base.Add(13*day - time.Minute))
	var out struct{ AcceptOrganizationInvitation orgMember }
	s.Query(t, token, acceptDoc, vars{"token": tokens[1]}, &out)
	if out.AcceptOrganizationInvitation.Role != "finance" {
		t.Errorf("joined as %+v, want the refreshed role", out.AcceptOrganizationInvitation)
	}
}

func TestACancelledInvitationIsRefused(t *testing.T) {
	s := resolverstest.New(t)
	tm := newTeam(t, s)
	other := newTeam(t, s)
	owner := tm.users[auth.RoleOwner]
	inv := invite(t, s, owner.Token, vars{"email": "cancelled@example.com"})
	coverTenancy(cancelInviteDoc)
	wantError(t, s.QueryError(t, other.users[auth.RoleOwner].Token, cancelInviteDoc, vars{"id": inv.ID}), "NOT_FOUND", "ResourceNotFound")
	wantError(t, s.QueryError(t, tm.users[auth.RoleMember].Token, cancelInviteDoc, vars{"id": inv.ID}), "FORBIDDEN", "NotPermitted")
	var out struct{ CancelOrganizationInvitation struct{ CancelledAt *string } }
	s.Query(t, tm.users[auth.RoleAdmin].Token, cancelInviteDoc, vars{"id": inv.ID}, &out)
	if out.CancelOrganizationInvitation.CancelledAt == nil {
		t.Error("the cancelled invitation has no cancelledAt")
	}
	_, tokens := invitationMails(t, s, "cancelled@example.com")
	_, token := personWithEmail(t, s, "cancelled@example.com")
	wantError(t, s.QueryError(t, token, acceptDoc, vars{"token": tokens[0]}), "BAD_USER_INPUT", "InvalidInvitationToken")
	wantError(t, s.QueryError(t, owner.Token, cancelInviteDoc, vars{"id": inv.ID}), "NOT_FOUND", "ResourceNotFound")
}

func TestInvitationsRefuseHostileInput(t *testing.T) {
	s := resolverstest.New(t)
	tm := newTeam(t, s)
	owner := tm.users[auth.RoleOwner]
	_, person := personWithEmail(t, s, "hostile@example.com")
	for _, c := range []struct {
		name, token, doc string
		vars             vars
		code, reason     string
	}{
		{"an email with a NUL byte", owner.Token, inviteDoc, vars{"input": vars{"email": "a\x00@example.com"}}, "BAD_USER_INPUT", "RequestValidationError"},
		{"an email of 30 kB", owner.Token, inviteDoc, vars{"input": vars{"email": strings.Repeat("a", 30_000) + "@example.com"}}, "BAD_USER_INPUT", "PolarRequestValidationError"},
		{"an email that is not one", owner.Token, inviteDoc, vars{"input": vars{"email": "not an email"}}, "BAD_USER_INPUT", "PolarRequestValidationError"},
		{"a token of invalid UTF-8", person, acceptDoc, vars{"token": "\xff\xfe"}, "BAD_USER_INPUT", "InvalidInvitationToken"},
		{"an empty token", person, acceptDoc, vars{"token": ""}, "BAD_USER_INPUT", "InvalidInvitationToken"},
		{"a token of 30 kB", person, acceptDoc, vars{"token": strings.Repeat("t", 30_000)}, "BAD_USER_INPUT", "InvalidInvitationToken"},
		{"an organization token accepts", tm.org.Token, acceptDoc, vars{"token": "x"}, "FORBIDDEN", "Unauthorized"},
		{"an organization token invites", tm.org.Token, inviteDoc, vars{"input": vars{"email": "a@example.com"}}, "FORBIDDEN", "Unauthorized"},
		{"another organization's id", owner.Token, inviteDoc, vars{"input": vars{"email": "a@example.com", "organizationId": uuid.New()}},
			"BAD_USER_INPUT", "PolarRequestValidationError"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantCode(t, s.QueryError(t, c.token, c.doc, c.vars), c.code, c.reason)
		})
	}
}

func expiry(t *testing.T, inv invitation) time.Time {
	t.Helper()
	exp, err := time.Parse(time.RFC3339Nano, inv.ExpiresAt)
	if err != nil {
		t.Fatal(err)
	}
	return exp
}
