package resolvers_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/internal/mail"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

const (
	memberFields     = `userId organizationId email role joinedAt`
	invitationFields = `id organizationId email role invitedBy expiresAt acceptedAt cancelledAt`
	inviteDoc        = `mutation($input: OrganizationMemberInviteInput!) { inviteOrganizationMember(input: $input) { ` + invitationFields + ` } }`
	cancelInviteDoc  = `mutation($id: UUID!) { cancelOrganizationInvitation(id: $id) { ` + invitationFields + ` } }`
	acceptDoc        = `mutation($token: String!) { acceptOrganizationInvitation(input: {token: $token}) { ` + memberFields + ` } }`
	changeRoleDoc    = `mutation($input: OrganizationMemberRoleInput!) { changeOrganizationMemberRole(input: $input) { ` + memberFields + ` } }`
	removeMemberDoc  = `mutation($input: OrganizationMemberRemoveInput!) { removeOrganizationMember(input: $input) { ` + memberFields + ` } }`
	leaveDoc         = `mutation($org: UUID) { leaveOrganization(organizationId: $org) { ` + memberFields + ` } }`
	membersDoc       = `query($org: UUID) { organizationMembers(organizationId: $org, limit: 100) { items { ` + memberFields + ` } pagination { totalCount } } }`
	invitationsDoc   = `query($org: UUID) { organizationInvitations(organizationId: $org) { items { ` + invitationFields + ` } } }`
)

// orgMember is a membership as the tests read it.
type orgMember struct {
	UserID         uuid.UUID
	OrganizationID uuid.UUID
	Email, Role    string
}

// invitation is an invitation as the tests read it.
type invitation struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	Email, Role    string
	InvitedBy      *uuid.UUID
	ExpiresAt      string
}

// team is an organization with one user of each role, each holding a token with every scope.
type team struct {
	s     *resolverstest.Server
	org   resolverstest.Org
	users map[auth.Role]resolverstest.User
}

// allScopes is the scope string of a personal token holding every scope.
var allScopes = auth.NewScopeSet(auth.AllScopes()...).String()

func newTeam(t *testing.T, s *resolverstest.Server) *team {
	t.Helper()
	tm := &team{s: s, org: s.NewOrg(t, resolverstest.AllScopes), users: map[auth.Role]resolverstest.User{}}
	for _, role := range auth.Roles() {
		tm.users[role] = s.NewUser(t, resolverstest.UserSpec{Scope: allScopes, Orgs: []uuid.UUID{tm.org.ID},
			Role: string(role), EmailVerified: true})
	}
	return tm
}

// personWithEmail makes a verified user with this email and a personal token with every
// scope, as the operator's command does.
func personWithEmail(t *testing.T, s *resolverstest.Server, email string) (uuid.UUID, string) {
	t.Helper()
	ctx := context.Background()
	u, err := s.Resolver.EnsureUser(ctx, email, "", "")
	if err != nil {
		t.Fatal(err)
	}
	set, _ := auth.ParseScopes("all")
	created, err := s.Resolver.CreatePersonalToken(ctx, u.User.ID, resolvers.PersonalTokenRequest{Comment: "t", Scopes: set})
	if err != nil {
		t.Fatal(err)
	}
	return u.User.ID, created.Token
}

func invite(t *testing.T, s *resolverstest.Server, token string, input vars) invitation {
	t.Helper()
	var out struct{ InviteOrganizationMember invitation }
	s.Query(t, token, inviteDoc, vars{"input": input}, &out)
	return out.InviteOrganizationMember
}

func members(t *testing.T, s *resolverstest.Server, token string, org uuid.UUID) map[uuid.UUID]orgMember {
	t.Helper()
	var out struct {
		OrganizationMembers struct{ Items []orgMember }
	}
	s.Query(t, token, membersDoc, vars{"org": org}, &out)
	m := map[uuid.UUID]orgMember{}
	for _, it := range out.OrganizationMembers.Items {
		m[it.UserID] = it
	}
	return m
}

// invitationMails returns the invitation mails queued for an address, oldest first, and the
// token of each one's link.
func invitationMails(t *testing.T, s *resolverstest.Server, to string) ([]mail.Message, []string) {
	t.Helper()
	var args []string
	if err := s.DB.Select(&args, `SELECT args::text FROM jobs WHERE kind = $1 AND args->>'to' = $2 ORDER BY created_at, id`,
		resolvers.JobMailSend, to); err != nil {
		t.Fatal(err)
	}
	var msgs []mail.Message
	var tokens []string
	for _, a := range args {
		var m mail.Message
		if err := json.Unmarshal([]byte(a), &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
		_, after, ok := strings.Cut(m.Text, resolverstest.PortalURL+"/invitations/accept?token=")
		if !ok {
			t.Fatalf("the mail has no accept link:\n%s", m.Text)
		}
		tok, _, _ := strings.Cut(after, "\n")
		if tok, err := url.QueryUnescape(tok); err == nil {
			tokens = append(tokens, tok)
		}
	}
	return msgs, tokens
}

// wantCode checks an error's GraphQL code and reason, whatever fields it names.
func wantCode(t *testing.T, got gqlError, code, reason string) {
	t.Helper()
	if got.Extensions.Code != code || got.Extensions.Reason != reason {
		t.Errorf("error %s (%s) %q, want %s (%s)", got.Extensions.Code, got.Extensions.Reason, got.Message, code, reason)
	}
}
