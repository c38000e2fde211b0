package resolvers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/auth"
	"till/resolvers/resolverstest"
)

// invalidTokenBody is /graphql's whole answer to a bad, expired or revoked token: a GraphQL
// error, where /v1 answers upstream's OAuth2 body.
const invalidTokenBody = `{"errors":[{"message":"The access token provided is expired, revoked, malformed, or invalid for other reasons.",` +
	`"extensions":{"code":"UNAUTHENTICATED","reason":"invalid_token"}}]}`

func TestAuthorization(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	readOnly := s.NewToken(t, org.ID, "customers:read")
	productsOnly := s.NewToken(t, org.ID, "products:read products:write")
	c := s.NewCustomer(t, org.ID, "")
	session := s.NewCustomerSession(t, org.ID, c.ID)

	const (
		listDoc   = `{ customers { items { id } } }`
		createDoc = `mutation { createCustomer(input: {email: "new@example.com"}) { id } }`
		meDoc     = `{ me { customer { id } } }`
	)

	for _, tc := range []struct {
		name, token, doc string
		code, reason     string
		scopes           []string
	}{
		{"no token on an organization field is UNAUTHENTICATED", "", listDoc, "UNAUTHENTICATED", "Unauthorized", nil},
		{"no token on a portal field is UNAUTHENTICATED", "", meDoc, "UNAUTHENTICATED", "Unauthorized", nil},
		{"a token without the read scopes is FORBIDDEN insufficient_scope naming them", productsOnly, listDoc,
			"FORBIDDEN", "insufficient_scope", []string{"customers:read", "customers:write"}},
		{"a read-only token on a write field is FORBIDDEN insufficient_scope naming the write scope", readOnly, createDoc,
			"FORBIDDEN", "insufficient_scope", []string{"customers:write"}},
		{"a customer session on an organization field is FORBIDDEN", session, listDoc, "FORBIDDEN", "Unauthorized", nil},
		{"a customer session on an organization mutation is FORBIDDEN", session, createDoc, "FORBIDDEN", "Unauthorized", nil},
		{"an organization token on me is FORBIDDEN", org.Token, meDoc, "FORBIDDEN", "Unauthorized", nil},
		{"an organization token on a portal mutation is FORBIDDEN", org.Token,
			`mutation { portalUpdateCustomer(input: {billingName: "x"}) { id } }`, "FORBIDDEN", "Unauthorized", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.QueryError(t, tc.token, tc.doc, nil)
			wantError(t, got, tc.code, tc.reason)
			if diff := cmp.Diff(tc.scopes, got.Extensions.Scopes); diff != "" {
				t.Errorf("extensions.scopes (-want +got):\n%s", diff)
			}
			if tc.code == "FORBIDDEN" && strings.Contains(got.Message, "Unauthorized") {
				t.Errorf("a principal without permission reads %q", got.Message)
			}
		})
	}

	t.Run("a read-only token reads", func(t *testing.T) {
		s.Query(t, readOnly, listDoc, nil, nil)
	})
	t.Run("a customer session reads me", func(t *testing.T) {
		var out struct {
			Me struct{ Customer struct{ ID string } }
		}
		s.Query(t, session, meDoc, nil, &out)
		if out.Me.Customer.ID != c.ID.String() {
			t.Errorf("me.customer.id = %s, want %s", out.Me.Customer.ID, c.ID)
		}
	})
	unknown := auth.Generate(auth.PrefixOrganizationAccessToken)
	typo := []byte(s.NewToken(t, org.ID, "all"))
	typo[len(typo)-1] ^= 1
	deleted := s.NewToken(t, org.ID, "all")
	s.Exec(t, `UPDATE organization_access_tokens SET deleted_at = now() WHERE token = $1`, auth.Hash(s.Secret, deleted))
	expired := s.NewToken(t, org.ID, "all")
	s.Exec(t, `UPDATE organization_access_tokens SET expires_at = now() - interval '1 second' WHERE token = $1`, auth.Hash(s.Secret, expired))
	gone := s.NewOrg(t, "all")
	goneCustomer := s.NewCustomer(t, gone.ID, "")
	goneSession := s.NewCustomerSession(t, gone.ID, goneCustomer.ID)
	s.Exec(t, `UPDATE organizations SET deleted_at = now() WHERE id = $1`, gone.ID)

	for name, token := range map[string]string{
		"a token with an unknown prefix":               "sk_live_abcdef",
		"a token that is not a Till token":             "hello",
		"a well-formed token that was never issued":    unknown,
		"a token with a typo":                          string(typo),
		"a deleted token":                              deleted,
		"an expired token":                             expired,
		"a token of a deleted organization":            gone.Token,
		"a customer session of a deleted organization": goneSession,
		"an unknown customer session":                  auth.Generate(auth.PrefixCustomerSession),
		"an unknown member session":                    auth.Generate(auth.PrefixMemberSession),
	} {
		t.Run(name+" is HTTP 401 UNAUTHENTICATED invalid_token with the challenge", func(t *testing.T) {
			res := s.Do(t, token, listDoc, nil)
			if res.Status != http.StatusUnauthorized || string(res.Body) != invalidTokenBody {
				t.Errorf("HTTP %d %s, want 401 %s", res.Status, res.Body, invalidTokenBody)
			}
			if h := res.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="invalid_token"`) {
				t.Errorf("WWW-Authenticate = %q", h)
			}
		})
	}

	t.Run("another authorization scheme is anonymous", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(`{"query":"{ customers { items { id } } }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Basic dXNlcjpwYXNz")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct {
			Errors []gqlError
		}
		decodeBody(t, res, &body)
		if len(body.Errors) != 1 || body.Errors[0].Extensions.Code != "UNAUTHENTICATED" {
			t.Errorf("errors = %+v", body.Errors)
		}
	})
}
