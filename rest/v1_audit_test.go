package rest_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

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
