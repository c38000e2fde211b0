package resolvers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/auth"
	"till/resolvers/resolverstest"
)

const invalidTokenBody = `{"error":"invalid_token","error_description":"The access token provided is expired, revoked, malformed, or invalid for other reasons."}`

func TestAuthorization(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	readOnly := s.NewToken(t, org.ID, "customers:read")
	productsOnly := s.NewToken(t, org.ID, "products:read products:write")
	c := newCustomer(t, s, org.Token, "")
	session := newCustomerSession(t, s, org.Token, c.ID)

	const (
		listDoc   = `{ customers { items { id } } }`
		createDoc = `mutation { createCustomer(input: {email: "new@example.com"}) { id } }`
		meDoc     = `{ me { customer { id } } }`
	)

	for _, tc := range []struct {
		name, token, doc string
		code             string
		status           int
		scopes           []string
	}{
		{"no token on an organization field is Unauthorized", "", listDoc, "Unauthorized", 401, nil},
		{"no token on a portal field is Unauthorized", "", meDoc, "Unauthorized", 401, nil},
		{"a token without the read scopes is insufficient_scope naming them", productsOnly, listDoc,
			"insufficient_scope", 403, []string{"customers:read", "customers:write"}},
		{"a read-only token on a write field is insufficient_scope naming the write scope", readOnly, createDoc,
			"insufficient_scope", 403, []string{"customers:write"}},
		{"a customer session on an organization field is Unauthorized", session, listDoc, "Unauthorized", 401, nil},
		{"a customer session on an organization mutation is Unauthorized", session, createDoc, "Unauthorized", 401, nil},
		{"an organization token on me is Unauthorized", org.Token, meDoc, "Unauthorized", 401, nil},
		{"an organization token on a portal mutation is Unauthorized", org.Token,
			`mutation { portalUpdateCustomer(input: {billingName: "x"}) { id } }`, "Unauthorized", 401, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.QueryError(t, tc.token, tc.doc, nil)
			wantError(t, got, tc.code, tc.status)
			if diff := cmp.Diff(tc.scopes, got.Extensions.Scopes); diff != "" {
				t.Errorf("extensions.scopes (-want +got):\n%s", diff)
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
	goneCustomer := newCustomer(t, s, gone.Token, "")
	goneSession := newCustomerSession(t, s, gone.Token, goneCustomer.ID)
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
		t.Run(name+" is HTTP 401 invalid_token from the middleware", func(t *testing.T) {
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
		if len(body.Errors) != 1 || body.Errors[0].Extensions.Code != "Unauthorized" {
			t.Errorf("errors = %+v", body.Errors)
		}
	})
}
