package resolvers_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// The audit kinds and actions the cases name.
const (
	byOrg      = storage.AuditActorKindOrganization
	byUser     = storage.AuditActorKindUser
	byCustomer = storage.AuditActorKindCustomerSession
	byMember   = storage.AuditActorKindMemberSession
	byAnyone   = storage.AuditActorKindAnonymous
	created    = storage.AuditActionCreate
	updated    = storage.AuditActionUpdate
	deleted    = storage.AuditActionDelete
)

// auditCase is one mutation whose audit records a test checks: every record the call
// leaves names the actor kind and the root field, and among them is each wanted one. A
// case without wants must leave no record at all.
type auditCase struct {
	name  string
	token string // "" calls without a token
	doc   string
	vars  vars
	actor storage.AuditActorKind
	want  []auditWant
}

// auditWant is a record a call must leave: of an object type (and id, unless uuid.Nil),
// with an action and a changed field (any, when empty).
type auditWant struct {
	objectType string
	action     storage.AuditAction
	field      string
	id         uuid.UUID
}

// auditRecord is a row of audit_log as the tests read it.
type auditRecord struct {
	ActorKind  string     `db:"actor_kind"`
	TokenID    *uuid.UUID `db:"token_id"`
	UserID     *uuid.UUID `db:"user_id"`
	CustomerID *uuid.UUID `db:"customer_id"`
	Operation  *string    `db:"operation"`
	API        *string    `db:"api"`
	ObjectType string     `db:"object_type"`
	ObjectID   uuid.UUID  `db:"object_id"`
	Action     string     `db:"action"`
	Changes    []byte     `db:"changes"`
	IP         *string    `db:"ip"`
}

// auditSince reads the records made after mark, oldest first.
func auditSince(tb testing.TB, s *resolverstest.App, mark time.Time) []auditRecord {
	tb.Helper()
	var rows []auditRecord
	if err := s.DB.Select(&rows, `SELECT actor_kind, token_id, user_id, customer_id, operation, api, object_type,
		object_id, action, changes, ip FROM audit_log WHERE created_at > $1 ORDER BY created_at, id`, mark); err != nil {
		tb.Fatal(err)
	}
	return rows
}

// auditMark is the database's time now, after which a call's records are made.
func auditMark(tb testing.TB, s *resolverstest.App) time.Time {
	tb.Helper()
	var at time.Time
	s.Get(tb, &at, `SELECT clock_timestamp()`)
	return at
}

// runAuditCases runs the cases in order over GraphQL.
func runAuditCases(t *testing.T, s *resolverstest.Server, cases []auditCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			coverAudit(c.doc)
			mark := auditMark(t, s.App)
			res := s.Do(t, c.token, c.doc, c.vars)
			if len(res.Errors) > 0 {
				t.Fatalf("the mutation failed: %+v", res.Errors)
			}
			checkAudit(t, auditSince(t, s.App, mark), c, rootFieldsOf(c.doc)[0], "graphql")
		})
	}
}

// checkAudit checks a call's records against its case.
func checkAudit(t *testing.T, rows []auditRecord, c auditCase, operation, api string) {
	t.Helper()
	if len(c.want) == 0 {
		if len(rows) > 0 {
			t.Errorf("the call left %d records, want none: %s", len(rows), describeAudit(rows))
		}
		return
	}
	for _, r := range rows {
		if r.ActorKind != string(c.actor) || deref(r.Operation) != operation || deref(r.API) != api {
			t.Errorf("a %s %s record is by %s through %s %s, want %s through %s %s (%s)", r.ObjectType, r.Action,
				r.ActorKind, deref(r.API), deref(r.Operation), c.actor, api, operation, describeAudit([]auditRecord{r}))
		}
		if c.actor != storage.AuditActorKindAnonymous && r.TokenID == nil {
			t.Errorf("a %s record by %s names no token", r.ObjectType, r.ActorKind)
		}
	}
	for _, w := range c.want {
		if !slices.ContainsFunc(rows, w.matches) {
			t.Errorf("no %s %s record changing %q (id %s) among: %s", w.objectType, w.action, w.field, w.id, describeAudit(rows))
		}
	}
}

func (w auditWant) matches(r auditRecord) bool {
	if r.ObjectType != w.objectType || r.Action != string(w.action) || w.id != uuid.Nil && r.ObjectID != w.id {
		return false
	}
	if w.field == "" {
		return true
	}
	var changes map[string]json.RawMessage
	if err := json.Unmarshal(r.Changes, &changes); err != nil {
		return false
	}
	_, ok := changes[w.field]
	return ok
}

// describeAudit lists records in a line each, for failure messages.
func describeAudit(rows []auditRecord) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("\n\t" + r.ActorKind + " " + deref(r.Operation) + ": " + r.Action + " " + r.ObjectType + " " +
			r.ObjectID.String() + " " + string(r.Changes))
	}
	return b.String()
}

// rootFieldsOf names the root fields a document selects.
func rootFieldsOf(doc string) []string {
	q, err := parser.ParseQuery(&ast.Source{Input: doc})
	if err != nil {
		return []string{""}
	}
	var names []string
	for _, op := range q.Operations {
		for _, sel := range op.SelectionSet {
			if f, ok := sel.(*ast.Field); ok {
				names = append(names, f.Name)
			}
		}
	}
	return append(names, "")
}

// auditCoverage records the mutations the audit tests ran, so a whole run can tell which
// mutation none of them checked.
var auditCoverage = struct {
	sync.Mutex
	fields map[string]bool
}{fields: map[string]bool{}}

func coverAudit(doc string) {
	auditCoverage.Lock()
	defer auditCoverage.Unlock()
	for _, f := range rootFieldsOf(doc) {
		auditCoverage.fields[f] = true
	}
}

// uncoveredAuditMutations lists, sorted, the mutations no audit case ran.
func uncoveredAuditMutations() []string {
	schema := resolvers.New(resolvers.Deps{}).Schema().Schema()
	auditCoverage.Lock()
	defer auditCoverage.Unlock()
	var missing []string
	for _, f := range schema.Mutation.Fields {
		if !strings.HasPrefix(f.Name, "__") && !auditCoverage.fields[f.Name] {
			missing = append(missing, f.Name)
		}
	}
	sort.Strings(missing)
	return missing
}
