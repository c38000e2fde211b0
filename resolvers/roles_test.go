package resolvers_test

import (
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// TestAUsersRoleIsJudgedInTheOrganizationACallActsOn follows a user who owns one
// organization and is a plain member of another through the operations that need
// organization:manage (webhook endpoints), which a member lacks.
func TestAUsersRoleIsJudgedInTheOrganizationACallActsOn(t *testing.T) {
	s := resolverstest.New(t)
	owned, joined, foreign := s.NewOrg(t, resolverstest.AllScopes), s.NewOrg(t, resolverstest.AllScopes), s.NewOrg(t, resolverstest.AllScopes)
	user := s.NewUser(t, resolverstest.UserSpec{Scope: allScopes, Orgs: []uuid.UUID{owned.ID}, Role: "owner"})
	s.Exec(t, `INSERT INTO user_organizations (user_id, organization_id, role) VALUES ($1, $2, 'member')`, user.ID, joined.ID)
	endpoint := func(org resolverstest.Org) uuid.UUID {
		var out struct{ CreateWebhookEndpoint struct{ ID uuid.UUID } }
		s.Query(t, org.Token, createWebhookDoc, vars{"input": vars{"url": "https://example.com/h", "format": "raw",
			"events": []string{"order.paid"}}}, &out)
		return out.CreateWebhookEndpoint.ID
	}
	inOwned, inJoined, inForeign := endpoint(owned), endpoint(joined), endpoint(foreign)
	create := func(org uuid.UUID) vars {
		in := vars{"url": "https://example.com/u", "format": "raw", "events": []string{"order.paid"}}
		if org != uuid.Nil {
			in["organizationId"] = org
		}
		return vars{"input": in}
	}
	const list = `{ webhookEndpoints(limit: 100) { items { id } } }`
	var listed struct {
		WebhookEndpoints struct{ Items []struct{ ID uuid.UUID } }
	}
	s.Query(t, user.Token, list, nil, &listed)
	if items := listed.WebhookEndpoints.Items; len(items) != 1 || items[0].ID != inOwned {
		t.Errorf("the user lists %v, want only the owned organization's %s", items, inOwned)
	}
	for _, c := range []struct {
		name, doc    string
		vars         vars
		code, reason string // "" for success
	}{
		{"deleting the joined organization's endpoint is not permitted", deleteWebhookDoc, vars{"id": inJoined}, "FORBIDDEN", "NotPermitted"},
		{"reading it is not permitted either", `query($id: UUID!) { webhookEndpoint(id: $id) { id } }`, vars{"id": inJoined}, "FORBIDDEN", "NotPermitted"},
		{"another organization's endpoint is not found", deleteWebhookDoc, vars{"id": inForeign}, "NOT_FOUND", "ResourceNotFound"},
		{"creating in the joined organization is not permitted", createWebhookDoc, create(joined.ID), "FORBIDDEN", "NotPermitted"},
		{"creating in another organization names none of the user's", createWebhookDoc, create(foreign.ID), "BAD_USER_INPUT", "PolarRequestValidationError"},
		{"a user of two organizations names the one to create in", createWebhookDoc, create(uuid.Nil), "BAD_USER_INPUT", "PolarRequestValidationError"},
		{"creating in the owned organization works", createWebhookDoc, create(owned.ID), "", ""},
		{"deleting the owned organization's endpoint works", deleteWebhookDoc, vars{"id": inOwned}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.code == "" {
				s.Query(t, user.Token, c.doc, c.vars, nil)
				return
			}
			got := s.QueryError(t, user.Token, c.doc, c.vars)
			wantCode(t, got, c.code, c.reason)
			if c.reason == "NotPermitted" && (got.Message != "You don't have permission to manage the organization" ||
				got.Extensions.Cause != "organization:manage") {
				t.Errorf("refused with %q (cause %q), want upstream's message", got.Message, got.Extensions.Cause)
			}
		})
	}
}
