package rest_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// TestV1AppliesTheUsersRoles: /v1 runs the GraphQL guards, so a user's role bounds what the
// user's token does there as in GraphQL, with upstream's bodies: a change in the user's own
// organization that the role does not allow is 403 NotPermitted with upstream's message, an
// object of another organization stays 404, and a list shows only the organizations whose
// role allows reading it.
func TestV1AppliesTheUsersRoles(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	mine, theirs := s.NewOrg(t, "webhooks:write"), s.NewOrg(t, "webhooks:write")
	scopes := "webhooks:write webhooks:read"
	member := s.NewUser(t, resolverstest.UserSpec{Scope: scopes, Orgs: []uuid.UUID{mine.ID}, Role: "member"}).Token
	admin := s.NewUser(t, resolverstest.UserSpec{Scope: scopes, Orgs: []uuid.UUID{mine.ID}, Role: "admin"}).Token
	f := webhooksFixture{s: s, org: mine, other: theirs}
	ours, other := f.create(t, mine.Token, "https://example.com/ours"), f.create(t, theirs.Token, "https://example.com/theirs")
	const manage = "You don't have permission to manage the organization"
	for _, c := range []struct {
		name string
		call call
		want want
	}{
		{"a member creating an endpoint", call{method: http.MethodPost, target: "/v1/webhooks/endpoints", token: member,
			body: webhookBody("https://example.com/m", "")}, want{status: 403, error: "NotPermitted", detail: manage}},
		{"a member deleting the organization's endpoint", call{method: http.MethodDelete,
			target: "/v1/webhooks/endpoints/" + ours.String(), token: member}, want{status: 403, error: "NotPermitted", detail: manage}},
		{"a member deleting another organization's endpoint", call{method: http.MethodDelete,
			target: "/v1/webhooks/endpoints/" + other.String(), token: member}, want{status: 404, error: "ResourceNotFound"}},
		{"a member listing the endpoints sees none", call{target: "/v1/webhooks/endpoints", token: member},
			want{status: 200, has: []string{`"items":[]`, `"total_count":0`}}},
		{"an admin deleting the organization's endpoint", call{method: http.MethodDelete,
			target: "/v1/webhooks/endpoints/" + ours.String(), token: admin}, want{status: 204}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.want.check(t, s.do(t, c.call))
		})
	}
}
