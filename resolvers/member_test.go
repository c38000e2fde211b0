package resolvers_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

const memberFields = `id createdAt customerId email name externalId role`

// memberOut is a Member as the tests read it.
type memberOut struct {
	ID         uuid.UUID `json:"id"`
	CreatedAt  string    `json:"createdAt"`
	CustomerID uuid.UUID `json:"customerId"`
	Email      string    `json:"email"`
	Name       *string   `json:"name"`
	ExternalID *string   `json:"externalId"`
	Role       string    `json:"role"`
}

const (
	createMemberDoc = `mutation($in: MemberCreateInput!) { createMember(input: $in) { ` + memberFields + ` } }`
	updateMemberDoc = `mutation($in: MemberUpdateInput!) { updateMember(input: $in) { ` + memberFields + ` } }`
	deleteMemberDoc = `mutation($in: MemberDeleteInput!) { deleteMember(input: $in) { ` + memberFields + ` } }`
)

// members lists a customer's live members, oldest first.
func members(tb testing.TB, s *resolverstest.Server, token string, customer uuid.UUID) []memberOut {
	tb.Helper()
	var out struct {
		Customer struct{ Members struct{ Items []memberOut } }
	}
	s.Query(tb, token, `query($id: UUID!) { customer(id: $id) { members(limit: 100) { items { `+memberFields+` } } } }`,
		vars{"id": customer}, &out)
	return out.Customer.Members.Items
}

func TestEveryCustomerHasAnOwnerMember(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)

	t.Run("an individual customer's owner is made from its email, name and external id", func(t *testing.T) {
		c := createCustomer(t, s, org.Token, vars{"email": "ada@example.com", "name": "Ada", "externalId": "ada-1"})
		got := members(t, s, org.Token, c.ID)
		if len(got) != 1 || got[0].Role != "owner" || got[0].Email != "ada@example.com" || *got[0].Name != "Ada" ||
			*got[0].ExternalID != "ada-1" {
			t.Fatalf("members = %+v", got)
		}
		var created, events int
		s.Get(t, &created, `SELECT count(*) FROM members m JOIN customers c ON c.id = m.customer_id
			WHERE m.id = $1 AND m.created_at = c.created_at`, got[0].ID)
		s.Get(t, &events, `SELECT count(*) FROM domain_events WHERE type = 'member.created' AND object_id = $1`, got[0].ID)
		if created != 1 || events != 1 {
			t.Errorf("owner dated as its customer: %d, member.created events: %d; want 1 each", created, events)
		}
	})
	t.Run("a given owner overrides the customer's details", func(t *testing.T) {
		c := createCustomer(t, s, org.Token, vars{"type": "team", "name": "Acme", "externalId": "acme",
			"owner": vars{"email": " boss@acme.example ", "name": "Boss"}})
		got := members(t, s, org.Token, c.ID)
		if len(got) != 1 || got[0].Email != "boss@acme.example" || *got[0].Name != "Boss" || *got[0].ExternalID != "acme" {
			t.Errorf("members = %+v", got)
		}
	})
	t.Run("a team without an email needs an owner", func(t *testing.T) {
		wantInvalid(t, s.QueryError(t, org.Token, `mutation { createCustomer(input: {type: team, name: "Nobody"}) { id } }`, nil),
			fieldErr{Type: "value_error", Loc: []any{"input", "owner"},
				Msg: "An owner with an email address is required when creating a team customer without an email."})
		var n int
		s.Get(t, &n, `SELECT count(*) FROM customers WHERE organization_id = $1 AND name = 'Nobody'`, org.ID)
		if n != 0 {
			t.Errorf("%d customers stored, want none", n)
		}
	})
	t.Run("an owner's email is checked", func(t *testing.T) {
		wantInvalid(t, s.QueryError(t, org.Token, `mutation { createCustomer(input: {email: "x@example.com", owner: {email: "nope"}}) { id } }`, nil),
			fieldErr{Type: "value_error", Loc: []any{"input", "owner", "email"}, Msg: "value is not a valid email address: The email address is not valid.", Input: "nope"})
	})
	t.Run("an individual customer's owner follows its email; a team's does not", func(t *testing.T) {
		solo := createCustomer(t, s, org.Token, vars{"email": "old@example.com"})
		team := createCustomer(t, s, org.Token, vars{"type": "team", "email": "team@example.com", "owner": vars{"email": "lead@example.com"}})
		for _, c := range []customer{solo, team} {
			s.Query(t, org.Token, `mutation($id: UUID!, $e: String) { updateCustomer(input: {id: $id, email: $e}) { id } }`,
				vars{"id": c.ID, "e": "new-" + c.ID.String()[:8] + "@example.com"}, nil)
		}
		if got := members(t, s, org.Token, solo.ID); got[0].Email != "new-"+solo.ID.String()[:8]+"@example.com" {
			t.Errorf("individual owner = %+v", got)
		}
		if got := members(t, s, org.Token, team.ID); got[0].Email != "lead@example.com" {
			t.Errorf("team owner = %+v", got)
		}
	})
	t.Run("deleting a customer removes its members and ends their sessions", func(t *testing.T) {
		c := createCustomer(t, s, org.Token, vars{"email": "bye@example.com"})
		owner := members(t, s, org.Token, c.ID)[0]
		session := s.NewMemberSession(t, org.ID, c.ID, owner.ID)
		s.Query(t, org.Token, `mutation($id: UUID!) { deleteCustomer(id: $id) { id } }`, vars{"id": c.ID}, nil)
		var live, events int
		s.Get(t, &live, `SELECT count(*) FROM members WHERE customer_id = $1 AND deleted_at IS NULL`, c.ID)
		s.Get(t, &events, `SELECT count(*) FROM domain_events WHERE type = 'member.deleted' AND object_id = $1`, owner.ID)
		if live != 0 || events != 1 {
			t.Errorf("live members %d, member.deleted events %d; want 0 and 1", live, events)
		}
		wantInvalidToken(t, s, session)
	})
}

func TestMemberRulesInGraphQL(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	other := s.NewOrg(t, resolverstest.AllScopes)
	team := createCustomer(t, s, org.Token, vars{"type": "team", "name": "Team", "externalId": "t-1", "owner": vars{"email": "own@t.example"}})
	theirs := createCustomer(t, s, other.Token, vars{"type": "team", "name": "Theirs", "owner": vars{"email": "own@o.example"}})
	theirOwner := members(t, s, other.Token, theirs.ID)[0]
	owner := members(t, s, org.Token, team.ID)[0]
	var dev struct{ CreateMember memberOut }
	s.Query(t, org.Token, createMemberDoc, vars{"in": vars{"externalCustomerId": "t-1", "email": "dev@t.example"}}, &dev)

	for _, tc := range []struct {
		name, doc string
		in        vars
		code      string
		reason    string
		field     *fieldErr
	}{
		{"a customer of another organization is not found", createMemberDoc,
			vars{"customerId": theirs.ID, "email": "x@t.example"}, "NOT_FOUND", "ResourceNotFound", nil},
		{"a member of another organization is not found", updateMemberDoc,
			vars{"member": vars{"customerId": team.ID, "id": theirOwner.ID}, "name": "X"}, "NOT_FOUND", "ResourceNotFound", nil},
		{"another organization's member cannot be removed by its own customer id", deleteMemberDoc,
			vars{"member": vars{"customerId": theirs.ID, "id": theirOwner.ID}}, "NOT_FOUND", "ResourceNotFound", nil},
		{"a customer named twice is bad input", createMemberDoc,
			vars{"customerId": team.ID, "externalCustomerId": "t-1", "email": "x@t.example"}, "BAD_USER_INPUT", "PolarRequestValidationError",
			&fieldErr{Type: "value_error", Loc: []any{"input", "customerId"}, Msg: "Exactly one of customerId and externalCustomerId is required."}},
		{"a member named twice is bad input", updateMemberDoc,
			vars{"member": vars{"customerId": team.ID, "id": owner.ID, "externalId": "x"}}, "BAD_USER_INPUT", "PolarRequestValidationError",
			&fieldErr{Type: "value_error", Loc: []any{"input", "member", "id"}, Msg: "Exactly one of id and externalId is required."}},
		{"an owner is not created", createMemberDoc,
			vars{"customerId": team.ID, "email": "x@t.example", "role": "owner"}, "BAD_USER_INPUT", "PolarRequestValidationError",
			&fieldErr{Type: "value_error", Loc: []any{"input", "role"}, Input: "owner",
				Msg: "An owner is made with its customer or by transferring the ownership: add a member or a billing_manager."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fields []fieldErr
			if tc.field != nil {
				fields = append(fields, *tc.field)
			}
			wantError(t, s.QueryError(t, org.Token, tc.doc, vars{"in": tc.in}), tc.code, tc.reason, fields...)
		})
	}

	t.Run("a member's seats are revoked when it is removed", func(t *testing.T) {
		sub := s.NewSubscription(t, org.ID, team.ID, s.NewProduct(t, org.ID, "Team plan").ID, ptr(2))
		var out struct {
			AssignSeat struct{ Seat struct{ ID uuid.UUID } }
		}
		s.Query(t, org.Token, `mutation($in: CustomerSeatAssignInput!) { assignSeat(input: $in) { seat { id } } }`,
			vars{"in": vars{"subscriptionId": sub, "memberId": dev.CreateMember.ID, "immediateClaim": true}}, &out)
		var removed struct{ DeleteMember memberOut }
		s.Query(t, org.Token, deleteMemberDoc, vars{"in": vars{"member": vars{"customerId": team.ID, "id": dev.CreateMember.ID}}}, &removed)
		var status string
		s.Get(t, &status, `SELECT status FROM customer_seats WHERE id = $1`, out.AssignSeat.Seat.ID)
		if removed.DeleteMember.ID != dev.CreateMember.ID || status != "revoked" {
			t.Errorf("removed %+v, seat %s; want the member removed and its seat revoked", removed.DeleteMember, status)
		}
	})
}

// TestOwnershipStaysWithOneMember races transfers of the ownership to every member of a team,
// and removals of them, from many goroutines: the customer ends with exactly one owner, and
// every transfer that answered made its member owner at the time.
func TestOwnershipStaysWithOneMember(t *testing.T) {
	t.Parallel()
	const n = 12
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	team := createCustomer(t, s, org.Token, vars{"type": "team", "name": "Team", "owner": vars{"email": "own@t.example"}})
	ids := make([]uuid.UUID, n)
	for i := range ids {
		var out struct{ CreateMember memberOut }
		s.Query(t, org.Token, createMemberDoc, vars{"in": vars{"customerId": team.ID, "email": "m" + uuid.NewString()[:8] + "@t.example"}}, &out)
		ids[i] = out.CreateMember.ID
	}
	var mu sync.Mutex
	var failures []string
	race(2*n, func(i int) {
		ref := vars{"customerId": team.ID, "id": ids[i%n]}
		res := s.Do(t, org.Token, updateMemberDoc, vars{"in": vars{"member": ref, "role": "owner"}})
		if i >= n {
			res = s.Do(t, org.Token, deleteMemberDoc, vars{"in": vars{"member": ref}})
		}
		if len(res.Errors) > 0 && res.Errors[0].Extensions.Code == "INTERNAL" {
			mu.Lock()
			failures = append(failures, string(res.Body))
			mu.Unlock()
		}
	})
	if len(failures) > 0 {
		t.Fatalf("%d internal errors, first: %s", len(failures), failures[0])
	}
	var owners int
	s.Get(t, &owners, `SELECT count(*) FROM members WHERE customer_id = $1 AND role = 'owner' AND deleted_at IS NULL`, team.ID)
	if owners != 1 {
		t.Fatalf("%d owners after the race, want 1", owners)
	}
}

// TestMemberCreationsWithOneEmailStoreOneMember races creations of one member: every call
// answers the same member, and one member.created is recorded.
func TestMemberCreationsWithOneEmailStoreOneMember(t *testing.T) {
	t.Parallel()
	const n = 20
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	team := createCustomer(t, s, org.Token, vars{"type": "team", "name": "Team", "owner": vars{"email": "own@t.example"}})
	var mu sync.Mutex
	got := map[string]int{}
	race(n, func(i int) {
		res := s.Do(t, org.Token, createMemberDoc, vars{"in": vars{"customerId": team.ID, "email": strings.Repeat("A", i%2+1) + "@t.example"}})
		mu.Lock()
		defer mu.Unlock()
		if len(res.Errors) > 0 {
			got["error "+res.Errors[0].Message]++
			return
		}
		var out struct{ CreateMember memberOut }
		_ = jsonUnmarshal(res.Data, &out)
		got[out.CreateMember.ID.String()]++
	})
	if len(got) != 2 {
		t.Fatalf("answers = %v, want two members (one per email) and no error", got)
	}
	var events int
	s.Get(t, &events, `SELECT count(*) FROM domain_events e JOIN members m ON m.id = e.object_id
		WHERE e.type = 'member.created' AND m.customer_id = $1 AND m.role <> 'owner'`, team.ID)
	if events != 2 {
		t.Errorf("%d member.created events, want 2", events)
	}
}
