package resolvers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers/resolverstest"
)

const (
	createSessionDoc = `mutation($input: CustomerSessionCreateInput!) { createCustomerSession(input: $input) {
		id token expiresAt returnUrl customerPortalUrl customerId customer { id email } } }`
	meDoc = `{ me { customer { id email } member { id customerId email role externalId } } }`
)

type session struct {
	ID                uuid.UUID
	Token             string
	ExpiresAt         time.Time
	ReturnURL         *string
	CustomerPortalURL string
	CustomerID        uuid.UUID
	Customer          struct {
		ID    uuid.UUID
		Email *string
	}
}

type me struct {
	Me struct {
		Customer struct {
			ID    uuid.UUID
			Email *string
		}
		Member *struct {
			ID         uuid.UUID
			CustomerID uuid.UUID
			Email      string
			Role       string
			ExternalID *string
		}
	}
}

func createSession(tb testing.TB, s *resolverstest.Server, token string, input vars) session {
	tb.Helper()
	var out struct{ CreateCustomerSession session }
	s.Query(tb, token, createSessionDoc, vars{"input": input}, &out)
	return out.CreateCustomerSession
}

// wantInvalidToken checks that the token is turned away before GraphQL runs.
func wantInvalidToken(tb testing.TB, s *resolverstest.Server, token string) {
	tb.Helper()
	res := s.Do(tb, token, meDoc, nil)
	if res.Status != http.StatusUnauthorized || string(res.Body) != invalidTokenBody {
		tb.Errorf("HTTP %d %s, want 401 %s", res.Status, res.Body, invalidTokenBody)
	}
}

func TestCustomerSession(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "customer_sessions:write customers:write")
	c := s.NewCustomer(t, org.ID, "ext-session")

	t.Run("a session for a customer id opens the portal for that customer", func(t *testing.T) {
		before := time.Now()
		got := createSession(t, s, org.Token, vars{"customerId": c.ID, "returnUrl": "https://shop.example.com/back"})
		if !strings.HasPrefix(got.Token, auth.PrefixCustomerSession) || !auth.ChecksumValid(got.Token) {
			t.Errorf("token = %q, want a %s token", got.Token, auth.PrefixCustomerSession)
		}
		if d := got.ExpiresAt.Sub(before); d < time.Hour-time.Minute || d > time.Hour+time.Minute {
			t.Errorf("expiresAt is %v after the request, want 1h", d)
		}
		if got.CustomerID != c.ID || got.Customer.ID != c.ID || got.ReturnURL == nil || *got.ReturnURL != "https://shop.example.com/back" {
			t.Errorf("session = %+v", got)
		}
		wantURL := resolverstest.PortalURL + "/" + org.Slug + "/portal?" +
			url.Values{"customer_session_token": {got.Token}, "email": {*c.Email}}.Encode()
		if got.CustomerPortalURL != wantURL {
			t.Errorf("customerPortalUrl = %s, want %s", got.CustomerPortalURL, wantURL)
		}
		var who me
		s.Query(t, got.Token, meDoc, nil, &who)
		if who.Me.Customer.ID != c.ID || who.Me.Member != nil {
			t.Errorf("me = %+v", who.Me)
		}
	})

	t.Run("a session for an external customer id works the same", func(t *testing.T) {
		got := createSession(t, s, org.Token, vars{"externalCustomerId": "ext-session"})
		var who me
		s.Query(t, got.Token, meDoc, nil, &who)
		if who.Me.Customer.ID != c.ID {
			t.Errorf("me.customer = %s, want %s", who.Me.Customer.ID, c.ID)
		}
	})

	t.Run("member fields are ignored without the member model", func(t *testing.T) {
		got := createSession(t, s, org.Token, vars{"customerId": c.ID, "memberId": uuid.New(), "externalMemberId": "m"})
		if !strings.HasPrefix(got.Token, auth.PrefixCustomerSession) {
			t.Errorf("token = %q", got.Token)
		}
	})

	deleted := s.NewCustomer(t, org.ID, "ext-deleted")
	s.Query(t, org.Token, deleteCustomerDoc, vars{"id": deleted.ID}, nil)
	unknown := uuid.New()
	for _, tc := range []struct {
		name  string
		input vars
		want  fieldErr
	}{
		{"an unknown customer id", vars{"customerId": unknown},
			fieldErr{Type: "value_error", Loc: []any{"input", "customerId"}, Msg: "Customer does not exist.", Input: unknown.String()}},
		{"an unknown external customer id", vars{"externalCustomerId": "nobody"},
			fieldErr{Type: "value_error", Loc: []any{"input", "externalCustomerId"}, Msg: "Customer does not exist.", Input: "nobody"}},
		{"a deleted customer", vars{"customerId": deleted.ID},
			fieldErr{Type: "value_error", Loc: []any{"input", "customerId"}, Msg: "Customer does not exist.", Input: deleted.ID.String()}},
		{"no customer at all", vars{},
			fieldErr{Type: "missing", Loc: []any{"input", "customerId"}, Msg: "Field required"}},
		{"a return URL that is not http(s)", vars{"customerId": c.ID, "returnUrl": "javascript:alert(1)"},
			fieldErr{Type: "url_parsing", Loc: []any{"input", "returnUrl"}, Msg: "Input should be a valid URL, relative URL without a base", Input: "javascript:alert(1)"}},
		{"a return URL over 2083 characters", vars{"customerId": c.ID, "returnUrl": "https://example.com/" + strings.Repeat("a", 2064)},
			fieldErr{Type: "url_too_long", Loc: []any{"input", "returnUrl"}, Msg: "URL should have at most 2083 characters",
				Input: "https://example.com/" + strings.Repeat("a", 2064)}},
	} {
		t.Run(tc.name+" is a validation error", func(t *testing.T) {
			wantInvalid(t, s.QueryError(t, org.Token, createSessionDoc, vars{"input": tc.input}), tc.want)
		})
	}

	t.Run("a token without customer_sessions:write is insufficient_scope", func(t *testing.T) {
		tok := s.NewToken(t, org.ID, "member_sessions:write customers:read")
		got := s.QueryError(t, tok, createSessionDoc, vars{"input": vars{"customerId": c.ID}})
		wantError(t, got, "FORBIDDEN", "insufficient_scope")
		if diff := cmp.Diff([]string{"customer_sessions:write"}, got.Extensions.Scopes); diff != "" {
			t.Errorf("scopes (-want +got):\n%s", diff)
		}
	})

	t.Run("an expired session is 401 invalid_token", func(t *testing.T) {
		got := createSession(t, s, org.Token, vars{"customerId": c.ID})
		s.Exec(t, `UPDATE customer_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, got.ID)
		wantInvalidToken(t, s, got.Token)
	})

	t.Run("the session of a customer deleted afterwards is 401 invalid_token", func(t *testing.T) {
		victim := s.NewCustomer(t, org.ID, "")
		got := createSession(t, s, org.Token, vars{"customerId": victim.ID})
		s.Query(t, got.Token, meDoc, nil, nil)
		s.Query(t, org.Token, deleteCustomerDoc, vars{"id": victim.ID}, nil)
		wantInvalidToken(t, s, got.Token)
	})

	t.Run("only the hash of the token is stored", func(t *testing.T) {
		got := createSession(t, s, org.Token, vars{"customerId": c.ID})
		var stored string
		if err := s.DB.Get(&stored, `SELECT token FROM customer_sessions WHERE id = $1`, got.ID); err != nil {
			t.Fatal(err)
		}
		if stored != auth.Hash(s.Secret, got.Token) {
			t.Errorf("stored token = %q, want the HMAC of the token", stored)
		}
	})
}

func TestMemberSession(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "customer_sessions:write customers:write")
	s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, org.ID)

	addMember := func(t *testing.T, customerID uuid.UUID, email, role, externalID string) uuid.UUID {
		t.Helper()
		var id uuid.UUID
		if err := s.DB.Get(&id, `INSERT INTO members (organization_id, customer_id, email, role, external_id)
			VALUES ($1, $2, $3, $4, nullif($5, '')) RETURNING id`, org.ID, customerID, email, role, externalID); err != nil {
			t.Fatal(err)
		}
		return id
	}

	t.Run("an individual customer gets an owner member created from its email", func(t *testing.T) {
		c := createCustomer(t, s, org.Token, vars{"email": "solo@example.com", "name": "Solo"})
		first := createSession(t, s, org.Token, vars{"customerId": c.ID})
		if !strings.HasPrefix(first.Token, auth.PrefixMemberSession) || !auth.ChecksumValid(first.Token) {
			t.Fatalf("token = %q, want a %s token", first.Token, auth.PrefixMemberSession)
		}
		var who me
		s.Query(t, first.Token, meDoc, nil, &who)
		if who.Me.Customer.ID != c.ID || who.Me.Member == nil || who.Me.Member.Role != "owner" ||
			who.Me.Member.Email != "solo@example.com" || who.Me.Member.CustomerID != c.ID {
			t.Fatalf("me = %+v member %+v", who.Me, who.Me.Member)
		}
		if !strings.Contains(first.CustomerPortalURL, "customer_session_token="+first.Token) {
			t.Errorf("customerPortalUrl = %s", first.CustomerPortalURL)
		}

		second := createSession(t, s, org.Token, vars{"customerId": c.ID})
		var again me
		s.Query(t, second.Token, meDoc, nil, &again)
		if again.Me.Member.ID != who.Me.Member.ID {
			t.Errorf("second session member = %s, want the same owner %s", again.Me.Member.ID, who.Me.Member.ID)
		}
		var n int
		if err := s.DB.Get(&n, `SELECT count(*) FROM members WHERE customer_id = $1`, c.ID); err != nil || n != 1 {
			t.Errorf("members = %d, %v; want one owner", n, err)
		}
	})

	team := createCustomer(t, s, org.Token, vars{"type": "team", "name": "Team", "owner": vars{"email": "founder@example.com"}})
	manager := addMember(t, team.ID, "boss@example.com", "billing_manager", "ext-boss")
	plain := addMember(t, team.ID, "dev@example.com", "member", "")
	elsewhere := createCustomer(t, s, org.Token, vars{"type": "team", "name": "Other team",
		"owner": vars{"email": "x@example.com", "externalId": "ext-x"}})
	var foreign uuid.UUID
	s.Get(t, &foreign, `SELECT id FROM members WHERE customer_id = $1 AND role = 'owner'`, elsewhere.ID)

	t.Run("a team member is chosen by id", func(t *testing.T) {
		got := createSession(t, s, org.Token, vars{"customerId": team.ID, "memberId": plain})
		var who me
		s.Query(t, got.Token, meDoc, nil, &who)
		if who.Me.Member == nil || who.Me.Member.ID != plain || who.Me.Member.Role != "member" {
			t.Errorf("member = %+v", who.Me.Member)
		}
		if !strings.Contains(got.CustomerPortalURL, "email=dev%40example.com") {
			t.Errorf("customerPortalUrl = %s, want the member's email", got.CustomerPortalURL)
		}
	})

	t.Run("a team member is chosen by external id", func(t *testing.T) {
		got := createSession(t, s, org.Token, vars{"customerId": team.ID, "externalMemberId": "ext-boss"})
		var who me
		s.Query(t, got.Token, meDoc, nil, &who)
		if who.Me.Member == nil || who.Me.Member.ID != manager {
			t.Errorf("member = %+v", who.Me.Member)
		}
	})

	for _, tc := range []struct {
		name  string
		input vars
		want  fieldErr
	}{
		{"a team customer without a member", vars{"customerId": team.ID},
			fieldErr{Type: "value_error", Loc: []any{"input", "memberId"}, Msg: "member_id is required for team customers."}},
		{"a member of another customer", vars{"customerId": team.ID, "memberId": foreign},
			fieldErr{Type: "value_error", Loc: []any{"input", "memberId"}, Msg: "Member does not exist for this customer.", Input: foreign.String()}},
		{"the external id of another customer's member", vars{"customerId": team.ID, "externalMemberId": "ext-x"},
			fieldErr{Type: "value_error", Loc: []any{"input", "externalMemberId"}, Msg: "Member does not exist for this customer.", Input: "ext-x"}},
	} {
		t.Run(tc.name+" is a validation error", func(t *testing.T) {
			wantInvalid(t, s.QueryError(t, org.Token, createSessionDoc, vars{"input": tc.input}), tc.want)
		})
	}

	t.Run("a plain member may not see or change billing", func(t *testing.T) {
		s.AddCard(t, org.ID, team.ID, "7777", time.Minute)
		got := createSession(t, s, org.Token, vars{"customerId": team.ID, "memberId": plain})
		for _, doc := range []string{
			mePaymentsDoc,
			`{ me { customer { paymentMethods { id } } } }`,
			`mutation { portalUpdateCustomer(input: {billingName: "x"}) { id } }`,
		} {
			e := s.QueryError(t, got.Token, doc, nil)
			wantError(t, e, "FORBIDDEN", "NotPermitted")
			if e.Message != "Only owners and billing managers can access billing features." {
				t.Errorf("message = %q", e.Message)
			}
		}
	})

	t.Run("a billing manager may see and change billing", func(t *testing.T) {
		got := createSession(t, s, org.Token, vars{"customerId": team.ID, "memberId": manager})
		s.Query(t, got.Token, mePaymentsDoc, nil, nil)
		var out struct{ PortalUpdateCustomer customer }
		s.Query(t, got.Token, `mutation { portalUpdateCustomer(input: {billingName: "Team GmbH"}) { `+customerFields+` } }`, nil, &out)
		if out.PortalUpdateCustomer.BillingName == nil || *out.PortalUpdateCustomer.BillingName != "Team GmbH" {
			t.Errorf("billingName = %v", out.PortalUpdateCustomer.BillingName)
		}
	})

	t.Run("a role change applies to a session already open", func(t *testing.T) {
		var promoted uuid.UUID
		s.Get(t, &promoted, `INSERT INTO members (organization_id, customer_id, email, role)
			VALUES ($1, $2, 'promoted@example.com', 'member') RETURNING id`, org.ID, team.ID)
		got := createSession(t, s, org.Token, vars{"customerId": team.ID, "memberId": promoted})
		wantError(t, s.QueryError(t, got.Token, mePaymentsDoc, nil), "FORBIDDEN", "NotPermitted")
		s.Exec(t, `UPDATE members SET role = 'billing_manager' WHERE id = $1`, promoted)
		s.Query(t, got.Token, mePaymentsDoc, nil, nil)
		s.Exec(t, `UPDATE members SET role = 'member' WHERE id = $1`, promoted)
		wantError(t, s.QueryError(t, got.Token, mePaymentsDoc, nil), "FORBIDDEN", "NotPermitted")
	})

	t.Run("an expired member session is 401 invalid_token", func(t *testing.T) {
		got := createSession(t, s, org.Token, vars{"customerId": team.ID, "memberId": manager})
		s.Exec(t, `UPDATE member_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, got.ID)
		wantInvalidToken(t, s, got.Token)
	})

	t.Run("the session of a member deleted afterwards is 401 invalid_token", func(t *testing.T) {
		leaver := addMember(t, team.ID, "leaver@example.com", "member", "")
		got := createSession(t, s, org.Token, vars{"customerId": team.ID, "memberId": leaver})
		s.Query(t, got.Token, meDoc, nil, nil)
		s.Exec(t, `UPDATE members SET deleted_at = now() WHERE id = $1`, leaver)
		wantInvalidToken(t, s, got.Token)
	})

	t.Run("the member session of a customer deleted afterwards is 401 invalid_token", func(t *testing.T) {
		c := s.NewCustomer(t, org.ID, "")
		got := createSession(t, s, org.Token, vars{"customerId": c.ID})
		s.Query(t, got.Token, meDoc, nil, nil)
		s.Query(t, org.Token, deleteCustomerDoc, vars{"id": c.ID}, nil)
		wantInvalidToken(t, s, got.Token)
	})
}
