package rest_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/resolvers/resolverstest"
)

// v1AuditRecord is a row of audit_log as the /v1 tests read it.
type v1AuditRecord struct {
	ActorKind  string  `db:"actor_kind"`
	Operation  *string `db:"operation"`
	API        *string `db:"api"`
	ObjectType string  `db:"object_type"`
	Action     string  `db:"action"`
	Changes    []byte  `db:"changes"`
	IP         *string `db:"ip"`
	UserAgent  *string `db:"user_agent"`
}

func TestV1ChangesAreAuditedWithTheRouteTheyCameThrough(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	o := s.NewOrg(t, resolverstest.AllScopes)
	cust := s.NewCustomer(t, o.ID, "")
	session := s.NewCustomerSession(t, o.ID, cust.ID)
	pat := s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:write", Orgs: []uuid.UUID{o.ID}}).Token
	var hook uuid.UUID
	s.Get(t, &hook, `INSERT INTO webhook_endpoints (organization_id, url, secret, format, events)
		VALUES ($1, 'https://hooks.example.com/old', 'whsec_x', 'raw', '{}') RETURNING id`, o.ID)
	const agent = "polar-sdk-go/0.1"
	tests := []struct {
		name          string
		c             call
		status        int
		actor, op     string
		object, field string // the record the call leaves; none when object is empty
		action        string
	}{
		{"creating a webhook endpoint is recorded as its operation", call{method: http.MethodPost, target: "/v1/webhooks/endpoints",
			token: o.Token, body: `{"url":"https://hooks.example.com/new","format":"raw","events":["order.paid"]}`},
			http.StatusCreated, "organization", "createWebhookEndpoint", "webhook_endpoint", "url", "create"},
		{"deleting a webhook endpoint is recorded as a delete", call{method: http.MethodDelete,
			target: "/v1/webhooks/endpoints/" + hook.String(), token: o.Token},
			http.StatusNoContent, "organization", "deleteWebhookEndpoint", "webhook_endpoint", "deleted_at", "delete"},
		{"opening a portal session is recorded", call{method: http.MethodPost, target: "/v1/customer-sessions/", token: o.Token,
			body: `{"customer_id":"` + cust.ID.String() + `"}`},
			http.StatusCreated, "organization", "createCustomerSession", "customer_session", "token", "create"},
		{"a customer changing its billing name is recorded as its session", call{method: http.MethodPatch,
			target: "/v1/customer-portal/customers/me", token: session, body: `{"billing_name":"Ada Ltd"}`},
			http.StatusOK, "customer_session", "portalUpdateCustomer", "customer", "billing_name", "update"},
		{"registering an OAuth2 client by hand-written route is recorded as that route", call{method: http.MethodPost,
			target: "/v1/oauth2/register", token: pat, body: `{"client_name":"App","redirect_uris":["https://app.example/cb"]}`},
			http.StatusCreated, "user", "POST /v1/oauth2/register", "oauth2_client", "client_name", "create"},
		{"a refused change records nothing", call{method: http.MethodPatch, target: "/v1/customer-portal/customers/me",
			token: session, body: `{"billing_address":{"country":"not a country"}}`}, http.StatusUnprocessableEntity, "", "", "", "", ""},
		{"ingesting events records nothing", call{method: http.MethodPost, target: "/v1/events/ingest", token: o.Token,
			body: `{"events":[{"name":"api_call","external_customer_id":"x"}]}`}, http.StatusOK, "", "", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mark time.Time
			s.Get(t, &mark, `SELECT clock_timestamp()`)
			tc.c.header = map[string]string{"User-Agent": agent}
			if rec := s.do(t, tc.c); rec.Code != tc.status {
				t.Fatalf("answered %d %s, want %d", rec.Code, rec.Body, tc.status)
			}
			var rows []v1AuditRecord
			if err := s.DB.Select(&rows, `SELECT actor_kind, operation, api, object_type, action, changes, ip, user_agent
				FROM audit_log WHERE created_at > $1 ORDER BY created_at`, mark); err != nil {
				t.Fatal(err)
			}
			if tc.object == "" {
				if len(rows) > 0 {
					t.Fatalf("the call left %d records, want none: %+v", len(rows), rows)
				}
				return
			}
			for _, r := range rows {
				got := []string{r.ActorKind, deref(r.Operation), deref(r.API), deref(r.IP), deref(r.UserAgent)}
				if want := []string{tc.actor, tc.op, "v1", "192.0.2.1", agent}; !slices.Equal(got, want) {
					t.Errorf("a %s record says %v, want %v", r.ObjectType, got, want)
				}
			}
			if !slices.ContainsFunc(rows, func(r v1AuditRecord) bool {
				var changes map[string]json.RawMessage
				_ = json.Unmarshal(r.Changes, &changes)
				_, changed := changes[tc.field]
				return r.ObjectType == tc.object && r.Action == tc.action && changed
			}) {
				t.Errorf("no %s %s record changing %s among %+v", tc.object, tc.action, tc.field, rows)
			}
		})
	}
}

// deref is s, or "" when it is nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestSigningInAndOutIsAuditedAsTheUsersOwn(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	const email = "audited@example.com"
	if rec := s.do(t, hit{method: http.MethodPost, path: "/auth/login-code/request", json: map[string]string{"email": email}}); rec.Code != http.StatusAccepted {
		t.Fatalf("request: %d %s", rec.Code, rec.Body)
	}
	code, _ := s.delivered(t, email)
	rec := s.do(t, hit{method: http.MethodPost, path: "/auth/login-code/authenticate", json: map[string]string{"email": email, "code": code}})
	if rec.Code != http.StatusOK {
		t.Fatalf("authenticate: %d %s", rec.Code, rec.Body)
	}
	var body struct {
		User      struct{ ID uuid.UUID }
		CSRFToken string `json:"csrf_token"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	cookie := sessionCookie(t, rec).Value
	if out := s.do(t, hit{method: http.MethodPost, path: "/auth/logout", cookie: cookie,
		header: map[string]string{auth.CSRFHeader: body.CSRFToken}}); out.Code >= 300 {
		t.Fatalf("logout: %d %s", out.Code, out.Body)
	}
	var rows []struct {
		ActorKind  string     `db:"actor_kind"`
		UserID     *uuid.UUID `db:"user_id"`
		Operation  string     `db:"operation"`
		ObjectType string     `db:"object_type"`
		Action     string     `db:"action"`
		UserAgent  *string    `db:"user_agent"`
	}
	if err := s.DB.Select(&rows, `SELECT actor_kind, user_id, coalesce(operation, '') AS operation, object_type, action,
		user_agent FROM audit_log WHERE object_type IN ('user', 'user_session') ORDER BY created_at`); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		who := r.ActorKind
		if r.UserID != nil && *r.UserID == body.User.ID {
			who += " (the user)"
		}
		got = append(got, who+" "+r.Operation+": "+r.Action+" "+r.ObjectType)
		if deref(r.UserAgent) != "Mozilla/5.0 (signin test)" {
			t.Errorf("a %s record names user agent %q", r.ObjectType, deref(r.UserAgent))
		}
	}
	want := []string{
		"anonymous POST /auth/login-code/authenticate: create user",
		"user (the user) POST /auth/login-code/authenticate: create user_session",
		"user (the user) POST /auth/logout: delete user_session",
	}
	if !slices.Equal(got, want) {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
