package resolvers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/payment"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// auditLogDoc reads the audit log with a filter and a window.
const auditLogDoc = `query($f: AuditLogFilter, $first: Int, $after: String, $limit: Int) {
	auditLog(filter: $f, first: $first, after: $after, limit: $limit) {
		items { id organizationId operation api objectType objectId action ip userAgent
			actor { kind userId tokenId oauthClientId customerId memberId }
			changes { field before after redacted } }
		pagination { totalCount }
		pageInfo { hasNextPage endCursor } } }`

// auditEntry is an AuditEntry as the tests read it.
type auditEntry struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	Operation      *string
	API            *string
	ObjectType     string
	ObjectID       uuid.UUID
	Action         string
	IP             *string
	UserAgent      *string
	Actor          struct {
		Kind    string
		UserID  *uuid.UUID
		TokenID *uuid.UUID
	}
	Changes []struct {
		Field         string
		Before, After any
		Redacted      bool
	}
}

// auditPage is an AuditEntryPage as the tests read it.
type auditPage struct {
	Items      []auditEntry
	Pagination struct{ TotalCount int }
	PageInfo   struct {
		HasNextPage bool
		EndCursor   *string
	}
}

func readAuditLog(tb testing.TB, s *resolverstest.Server, token string, v vars) auditPage {
	tb.Helper()
	var out struct{ AuditLog auditPage }
	s.Query(tb, token, auditLogDoc, v, &out)
	return out.AuditLog
}

func TestAuditLogShowsWhoChangedWhat(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	hook := createWebhook(t, s, org.Token, webhookInput(nil))
	s.Query(t, org.Token, `mutation($id: UUID!) { updateWebhookEndpoint(input: {id: $id, url: "https://hooks.example.com/b"}) { id } }`,
		vars{"id": hook.ID}, nil)
	s.Query(t, org.Token, `mutation($id: UUID!) { rotateWebhookEndpointSecret(id: $id) { id } }`, vars{"id": hook.ID}, nil)

	got := readAuditLog(t, s, org.Token, vars{"f": vars{"objectId": hook.ID}})
	if len(got.Items) != 3 || got.Pagination.TotalCount != 3 {
		t.Fatalf("the endpoint's history has %d entries (total %d), want 3: %+v", len(got.Items), got.Pagination.TotalCount, got.Items)
	}
	var ops []string
	for _, e := range got.Items {
		ops = append(ops, deref(e.Operation)+" "+e.Action)
		if e.Actor.Kind != "organization" || e.Actor.TokenID == nil || deref(e.API) != "graphql" || e.OrganizationID != org.ID {
			t.Errorf("entry %s by %+v through %s of %s, want the organization's token through graphql", deref(e.Operation),
				e.Actor, deref(e.API), e.OrganizationID)
		}
	}
	if diff := cmp.Diff([]string{"rotateWebhookEndpointSecret update", "updateWebhookEndpoint update",
		"createWebhookEndpoint create"}, ops); diff != "" {
		t.Errorf("history, newest first (-want +got):\n%s", diff)
	}
	rename, rotation := got.Items[1].Changes, got.Items[0].Changes
	if len(rename) != 1 || rename[0].Field != "url" || rename[0].Before != "https://hooks.example.com/till" ||
		rename[0].After != "https://hooks.example.com/b" || rename[0].Redacted {
		t.Errorf("the rename's changes = %+v, want the url from the old to the new", rename)
	}
	if len(rotation) != 1 || rotation[0].Field != "secret" || !rotation[0].Redacted || rotation[0].Before != nil || rotation[0].After != nil {
		t.Errorf("the rotation's changes = %+v, want the secret redacted", rotation)
	}
}

func TestAuditLogFiltersAndPages(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	user := s.NewUser(t, resolverstest.UserSpec{Scope: "customers:write organizations:read", Orgs: []uuid.UUID{org.ID}})
	var start time.Time
	s.Get(t, &start, `SELECT clock_timestamp()`)
	for range 4 {
		createCustomer(t, s, org.Token, vars{"email": "c-" + uuid.NewString()[:8] + "@example.com"})
	}
	byUser := createCustomer(t, s, user.Token, vars{"email": "u@example.com"})
	meter := createMeter(t, s, org.Token, apiCallsInput(nil))

	total := func(f vars) int {
		t.Helper()
		return readAuditLog(t, s, org.Token, vars{"f": f}).Pagination.TotalCount
	}
	for _, tc := range []struct {
		name string
		f    vars
		want int
	}{
		{"an object type keeps its entries", vars{"objectType": []string{"customer"}}, 5},
		{"an object id keeps that object's", vars{"objectId": byUser.ID}, 1},
		{"an operation keeps the changes it made", vars{"operation": []string{"createMeter"}}, 1},
		{"an actor kind keeps that kind's: the customer and its owner member", vars{"actorKind": []string{"user"}}, 2},
		{"a user keeps the user's", vars{"userId": user.ID}, 2},
		{"an action keeps those actions", vars{"action": []string{"delete"}}, 0},
		{"since a time keeps what followed it", vars{"since": start, "objectType": []string{"customer", "meter"}}, 6},
		{"until a time keeps what preceded it", vars{"until": start, "objectType": []string{"customer", "meter"}}, 0},
		{"fields are AND-ed", vars{"objectType": []string{"meter"}, "actorKind": []string{"user"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := total(tc.f); got != tc.want {
				t.Errorf("total = %d, want %d", got, tc.want)
			}
		})
	}

	t.Run("cursors walk every entry once, newest first", func(t *testing.T) {
		f := vars{"objectType": []string{"customer", "meter"}}
		var seen []uuid.UUID
		var after *string
		for range 10 {
			p := readAuditLog(t, s, org.Token, vars{"f": f, "first": 2, "after": after})
			for _, e := range p.Items {
				seen = append(seen, e.ObjectID)
			}
			if !p.PageInfo.HasNextPage {
				break
			}
			after = p.PageInfo.EndCursor
		}
		if len(seen) != 6 || seen[0] != meter.ID || seen[1] != byUser.ID {
			t.Errorf("walked %v, want six entries starting with the meter and the user's customer", seen)
		}
		unique := map[uuid.UUID]bool{}
		for _, id := range seen {
			unique[id] = true
		}
		if len(unique) != len(seen) {
			t.Errorf("an entry was read twice: %v", seen)
		}
	})
}

func TestAuditLogStaysWithinTheCallersAuthority(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	mine, theirs := s.NewOrg(t, resolverstest.AllScopes), s.NewOrg(t, resolverstest.AllScopes)
	createCustomer(t, s, mine.Token, vars{"email": "mine@example.com"})
	createCustomer(t, s, theirs.Token, vars{"email": "theirs@example.com"})
	owner := s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:read", Orgs: []uuid.UUID{mine.ID, theirs.ID}})
	admin := s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:read", Orgs: []uuid.UUID{mine.ID}, Role: "admin"})
	member := s.NewUser(t, resolverstest.UserSpec{Scope: "organizations:read", Orgs: []uuid.UUID{mine.ID, theirs.ID}, Role: "member"})
	reader := s.NewToken(t, mine.ID, "organizations:read")
	orgsOf := func(token string, f vars) []uuid.UUID {
		t.Helper()
		seen := map[uuid.UUID]bool{}
		for _, e := range readAuditLog(t, s, token, vars{"f": f, "limit": 100}).Items {
			seen[e.OrganizationID] = true
		}
		out := []uuid.UUID{}
		for _, o := range []uuid.UUID{mine.ID, theirs.ID} {
			if seen[o] {
				out = append(out, o)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		token string
		f     vars
		want  []uuid.UUID
	}{
		{"an organization token reads its own organization's log alone", reader, nil, []uuid.UUID{mine.ID}},
		{"naming another organization reads nothing of it", reader, vars{"organizationId": theirs.ID}, []uuid.UUID{}},
		{"an owner of both reads both", owner.Token, nil, []uuid.UUID{mine.ID, theirs.ID}},
		{"an owner of both may narrow to one", owner.Token, vars{"organizationId": theirs.ID}, []uuid.UUID{theirs.ID}},
		{"an admin reads the organization it administers", admin.Token, nil, []uuid.UUID{mine.ID}},
		{"a plain member reads nothing", member.Token, nil, []uuid.UUID{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, orgsOf(tc.token, tc.f)); diff != "" {
				t.Errorf("organizations read (-want +got):\n%s", diff)
			}
		})
	}

	cust := s.NewCustomer(t, mine.ID, "")
	for _, tc := range []struct{ name, token, reason string }{
		{"a token without organizations scopes is refused", s.NewToken(t, mine.ID, "customers:write"), "insufficient_scope"},
		{"a portal session is refused", s.NewCustomerSession(t, mine.ID, cust.ID), "Unauthorized"},
		{"no token is refused", "", "Unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := s.QueryError(t, tc.token, `{ auditLog { items { id } } }`, nil)
			if e.Extensions.Reason != tc.reason {
				t.Errorf("refusal %+v, want reason %s", e.Extensions, tc.reason)
			}
		})
	}
}

func TestAUsersLogHoldsTheirOwnChangesOutsideOrganizations(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	spec := resolverstest.UserSpec{Scope: "organizations:read", Orgs: []uuid.UUID{org.ID}}
	ada, bob := s.NewUser(t, spec), s.NewUser(t, spec)
	_, token := createPAT(t, s, ada.Token, vars{"comment": "ci", "scopes": []string{"organizations:read"}})
	personal := func(token string, f vars) []string {
		t.Helper()
		var got []string
		for _, e := range readAuditLog(t, s, token, vars{"f": f, "limit": 100}).Items {
			if e.OrganizationID == uuid.Nil {
				got = append(got, e.ObjectType+" "+e.Action+" "+e.ObjectID.String())
			}
		}
		return got
	}
	for _, tc := range []struct {
		name  string
		token string
		f     vars
		want  []string
	}{
		{"the user reads the token they made", ada.Token, nil, []string{"personal_access_token create " + token.ID.String()}},
		{"another member of the organization does not", bob.Token, nil, nil},
		{"naming an organization leaves them out", ada.Token, vars{"organizationId": org.ID}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, personal(tc.token, tc.f)); diff != "" {
				t.Errorf("records outside organizations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAuditedTransactionsSendTheActorWithBegin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	org, err := storage.CreateOrganization(ctx, db, "Counted", "counted-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	write := func(ctx context.Context) resolverstest.Counts {
		t.Helper()
		counter.Reset()
		if err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE organizations SET name = $2 WHERE id = $1`, org.ID, uuid.NewString())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return counter.Snapshot()
	}
	plain := write(ctx)
	audited := write(storage.WithAuditContext(ctx, storage.AuditContext{Kind: storage.AuditActorKindOrganization}))
	if audited != plain {
		t.Errorf("an audited transaction ran %s, want what an unaudited one runs: %s", audited, plain)
	}
	var kind string
	if err := db.Get(&kind, `SELECT actor_kind FROM audit_log WHERE object_id = $1 ORDER BY created_at DESC LIMIT 1`, org.ID); err != nil || kind != "organization" {
		t.Errorf("the last record is by %q (%v), want the organization the setting named", kind, err)
	}
}

func TestPurgeAuditLogKeepsTheRetention(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		retention time.Duration
		wantLeft  int
	}{
		{"a retention of a day deletes the older records", 24 * time.Hour, 1},
		{"no retention keeps every record", 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := resolverstest.New(t, func(d *resolvers.Deps) { d.AuditRetention = tc.retention })
			org := s.NewOrg(t, resolverstest.AllScopes)
			old := createCustomer(t, s, org.Token, vars{"email": "old@example.com"})
			recent := createCustomer(t, s, org.Token, vars{"email": "recent@example.com"})
			s.Exec(t, `UPDATE audit_log SET created_at = now() - interval '2 days' WHERE object_id = $1`, old.ID)
			if _, err := s.Resolver.PurgeAuditLog(context.Background()); err != nil {
				t.Fatal(err)
			}
			var left int
			s.Get(t, &left, `SELECT count(*) FROM audit_log WHERE object_id IN ($1, $2)`, old.ID, recent.ID)
			if left != tc.wantLeft {
				t.Errorf("%d records left, want %d", left, tc.wantLeft)
			}
		})
	}
}

func TestBackgroundWorkIsRecordedAsTheSystems(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	cust := s.NewCustomer(t, org.ID, "")
	plan := createProduct(t, s, org.Token, vars{"name": "Plan", "recurringInterval": "month",
		"prices": []vars{{"amountType": "fixed", "priceAmount": 1000}}})
	_, order := s.NewDunningOrder(t, org.ID, cust.ID, plan.ID, payment.TokenChargeDeclined) // renewed by RenewDue, as the loop does
	got := readAuditLog(t, s, org.Token, vars{"f": vars{"objectId": order, "action": []string{"create"}}})
	if len(got.Items) != 1 {
		t.Fatalf("the renewal's order has %d creation records, want 1", len(got.Items))
	}
	e := got.Items[0]
	if e.Actor.Kind != "system" || e.Actor.TokenID != nil || e.Operation != nil || e.API != nil || e.IP != nil || e.UserAgent != nil {
		t.Errorf("the renewal's order is recorded as %+v through %v %v from %v, want the system's with no request", e.Actor,
			e.API, e.Operation, e.IP)
	}
}
