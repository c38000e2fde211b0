package resolvers_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/lib/pq"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// grantStates gives one benefit a grant in each state upstream distinguishes, created a
// minute apart so the newest-first order is known: granted (newest), revoked, pending and
// failed (oldest). It returns their ids in that order and the customers holding them.
func grantStates(tb testing.TB, w *grantWorld, benefitID uuid.UUID) (ids, customers []uuid.UUID) {
	tb.Helper()
	p := w.s.NewProduct(tb, w.org.ID, "Stateful", benefitID)
	for range 4 {
		c := w.s.NewCustomer(tb, w.org.ID, "")
		o := w.s.NewPaidOrder(tb, w.org.ID, c.ID, p.ID, nil)
		w.grant(tb, resolvers.GrantScope{CustomerID: c.ID, ProductID: p.ID, OrderID: &o})
		var id uuid.UUID
		w.s.Get(tb, &id, `SELECT id FROM benefit_grants WHERE order_id = $1`, o)
		ids, customers = append(ids, id), append(customers, c.ID)
	}
	w.s.Exec(tb, `UPDATE benefit_grants SET created_at = now() - (array_position($1::uuid[], id) * interval '1 minute')
		WHERE id = ANY($1)`, pq.Array(ids))
	w.s.Exec(tb, `UPDATE benefit_grants SET granted_at = NULL, revoked_at = now() WHERE id = $1`, ids[1])
	w.s.Exec(tb, `UPDATE benefit_grants SET granted_at = NULL WHERE id = $1`, ids[2])
	w.s.Exec(tb, `UPDATE benefit_grants SET granted_at = NULL,
		error = '{"message": "Discord is down", "type": "BenefitRetriableError", "timestamp": "2027-01-01T00:00:00Z"}'
		WHERE id = $1`, ids[3])
	return ids, customers
}

func TestListBenefitGrants(t *testing.T) {
	t.Parallel()
	w := newGrantWorld(t)
	b := newBenefit(t, w.s, w.org.Token, "Support")
	ids, customers := grantStates(t, w, b.ID)
	member := uuid.New()
	w.s.Exec(t, `INSERT INTO members (id, organization_id, customer_id, email) VALUES ($1, $2, $3, 'm@example.com')`,
		member, w.org.ID, customers[0])
	w.s.Exec(t, `UPDATE benefit_grants SET member_id = $2 WHERE id = $1`, ids[0], member)
	idsOf := func(gs []grant) []uuid.UUID {
		out := []uuid.UUID{}
		for _, g := range gs {
			out = append(out, g.ID)
		}
		return out
	}

	for _, tc := range []struct {
		name string
		args vars
		want []uuid.UUID
	}{
		{name: "every grant comes newest first", want: ids},
		{name: "isGranted true is the granted one", args: vars{"isGranted": true}, want: ids[:1]},
		{name: "isGranted false is every grant without granted_at: revoked, pending and failed",
			args: vars{"isGranted": false}, want: ids[1:]},
		{name: "customerId values are OR-ed", args: vars{"customerId": []uuid.UUID{customers[1], customers[3]}},
			want: []uuid.UUID{ids[1], ids[3]}},
		{name: "filters are AND-ed", args: vars{"customerId": []uuid.UUID{customers[0], customers[1]}, "isGranted": false},
			want: []uuid.UUID{ids[1]}},
		{name: "memberId selects the member's grants", args: vars{"memberId": []uuid.UUID{member}}, want: ids[:1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, idsOf(w.grants(t, b.ID, tc.args))); diff != "" {
				t.Errorf("grant ids (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a failed grant reports its error and is neither granted nor revoked", func(t *testing.T) {
		g := w.grants(t, b.ID, vars{"customerId": []uuid.UUID{customers[3]}})[0]
		want := map[string]any{"message": "Discord is down", "type": "BenefitRetriableError", "timestamp": "2027-01-01T00:00:00Z"}
		if g.IsGranted || g.IsRevoked || cmp.Diff(want, g.Error) != "" {
			t.Errorf("grant = %+v", g)
		}
	})

	t.Run("the member is resolved on member grants", func(t *testing.T) {
		g := w.grants(t, b.ID, vars{"memberId": []uuid.UUID{member}})[0]
		if g.Member == nil || g.Member.ID != member || g.Member.Email != "m@example.com" {
			t.Errorf("member = %+v", g.Member)
		}
	})

	deleted := newBenefit(t, w.s, w.org.Token, "Gone")
	w.s.Query(t, w.org.Token, `mutation($id: UUID!) { deleteBenefit(id: $id) { id } }`, vars{"id": deleted.ID}, nil)
	other := w.s.NewOrg(t, resolverstest.AllScopes)
	list := `query($b: UUID!) { benefitGrants(benefitId: $b) { items { id } } }`
	for _, tc := range []struct {
		name, token string
		benefit     uuid.UUID
		code        string
		reason      string
	}{
		{name: "an unknown benefit is not found", token: w.org.Token, benefit: uuid.New(), code: "NOT_FOUND", reason: "ResourceNotFound"},
		{name: "a deleted benefit is not found", token: w.org.Token, benefit: deleted.ID, code: "NOT_FOUND", reason: "ResourceNotFound"},
		{name: "another organization's benefit is not found, never forbidden", token: other.Token, benefit: b.ID, code: "NOT_FOUND", reason: "ResourceNotFound"},
		{name: "a token without benefits scopes is forbidden", token: w.s.NewToken(t, w.org.ID, "license_keys:read"), benefit: b.ID,
			code: "FORBIDDEN", reason: "insufficient_scope"},
		{name: "a customer session is forbidden", token: w.s.NewCustomerSession(t, w.org.ID, customers[0]), benefit: b.ID,
			code: "FORBIDDEN", reason: "Unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := w.s.QueryError(t, tc.token, list, vars{"b": tc.benefit})
			if e.Extensions.Code != tc.code || e.Extensions.Reason != tc.reason {
				t.Errorf("error = %s (%s), want %s (%s)", e.Extensions.Code, e.Extensions.Reason, tc.code, tc.reason)
			}
		})
	}

	t.Run("a benefits:read token may list and read one grant", func(t *testing.T) {
		token := w.s.NewToken(t, w.org.ID, "benefits:read")
		var out struct{ BenefitGrant grant }
		w.s.Query(t, token, `query($id: UUID!) { benefitGrant(id: $id) { `+grantFields+` } }`, vars{"id": ids[2]}, &out)
		if out.BenefitGrant.ID != ids[2] || out.BenefitGrant.IsGranted || out.BenefitGrant.IsRevoked {
			t.Errorf("grant = %+v, want the pending one", out.BenefitGrant)
		}
		wantError(t, w.s.QueryError(t, other.Token, `query($id: UUID!) { benefitGrant(id: $id) { id } }`, vars{"id": ids[2]}),
			"NOT_FOUND", "ResourceNotFound")
	})
}

func TestListLicenseKeys(t *testing.T) {
	t.Parallel()
	w := newGrantWorld(t)
	a := w.licenseBenefit(t, vars{})
	b := w.licenseBenefit(t, vars{})
	p := w.s.NewProduct(t, w.org.ID, "Keys", a.ID, b.ID)
	c := w.s.NewCustomer(t, w.org.ID, "")
	o1, o2 := w.s.NewPaidOrder(t, w.org.ID, c.ID, p.ID, nil), w.s.NewPaidOrder(t, w.org.ID, c.ID, p.ID, nil)
	w.grant(t, resolvers.GrantScope{CustomerID: c.ID, ProductID: p.ID, OrderID: &o1})
	w.grant(t, resolvers.GrantScope{CustomerID: c.ID, ProductID: p.ID, OrderID: &o2})
	w.revoke(t, resolvers.GrantScope{CustomerID: c.ID, ProductID: p.ID, OrderID: &o2})
	other := w.s.NewOrg(t, resolverstest.AllScopes)

	query := `query($o: [UUID!], $b: [UUID!], $s: [LicenseKeyStatus!]) {
		licenseKeys(organizationId: $o, benefitId: $b, status: $s, limit: 100) { items { id createdAt benefitId status customer { id } }
		pagination { totalCount maxPage } } }`
	type page struct {
		LicenseKeys struct {
			Items []struct {
				ID        uuid.UUID
				CreatedAt time.Time
				BenefitID uuid.UUID
				Status    string
				Customer  struct{ ID uuid.UUID }
			}
			Pagination struct{ TotalCount, MaxPage int }
		}
	}
	for _, tc := range []struct {
		name  string
		token string
		args  vars
		total int
	}{
		{name: "every key of the organization", args: vars{}, total: 4},
		{name: "by benefit", args: vars{"b": []uuid.UUID{a.ID}}, total: 2},
		{name: "by status", args: vars{"s": []string{"revoked"}}, total: 2},
		{name: "by benefit and status", args: vars{"b": []uuid.UUID{b.ID}, "s": []string{"granted", "disabled"}}, total: 1},
		{name: "by the organization's own id", args: vars{"o": []uuid.UUID{w.org.ID}}, total: 4},
		{name: "another organization's id selects nothing", args: vars{"o": []uuid.UUID{other.ID}}, total: 0},
		{name: "another organization sees none of them", token: other.Token, args: vars{}, total: 0},
		{name: "a license_keys:read token may list", token: w.s.NewToken(t, w.org.ID, "license_keys:read"), args: vars{}, total: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = w.org.Token
			}
			var out page
			w.s.Query(t, token, query, tc.args, &out)
			items := out.LicenseKeys.Items
			if out.LicenseKeys.Pagination.TotalCount != tc.total || len(items) != tc.total {
				t.Fatalf("total = %d, items = %d; want %d", out.LicenseKeys.Pagination.TotalCount, len(items), tc.total)
			}
			for i := 1; i < len(items); i++ {
				if items[i].CreatedAt.Before(items[i-1].CreatedAt) {
					t.Errorf("keys are not oldest first: %v", items)
				}
			}
			for _, k := range items {
				if k.Customer.ID != c.ID {
					t.Errorf("key %s customer = %s", k.ID, k.Customer.ID)
				}
			}
		})
	}
	t.Run("a token without license-key scopes is forbidden", func(t *testing.T) {
		e := w.s.QueryError(t, w.s.NewToken(t, w.org.ID, "benefits:read"), query, vars{})
		wantError(t, e, "FORBIDDEN", "insufficient_scope")
	})
}

func TestConcurrentSeatAssignmentsAndClaims(t *testing.T) {
	t.Parallel()
	const n = 20
	w := newGrantWorld(t)
	lk := w.licenseBenefit(t, vars{})
	p := w.s.NewProduct(t, w.org.ID, "Team plan", lk.ID)
	c := w.s.NewCustomer(t, w.org.ID, "")
	sub := w.s.NewSubscription(t, w.org.ID, c.ID, p.ID, ptr(3))

	var mu sync.Mutex
	codes := map[string]int{}
	var tokens []string
	race(n, func(i int) {
		res := w.s.Do(t, w.org.Token, `mutation($in: CustomerSeatAssignInput!) { assignSeat(input: $in) { invitationToken } }`,
			vars{"in": vars{"subscriptionId": sub, "email": uuid.NewString()[:8] + "@example.com"}})
		mu.Lock()
		defer mu.Unlock()
		if len(res.Errors) > 0 {
			codes[res.Errors[0].Extensions.Code+" "+res.Errors[0].Extensions.Reason]++
			return
		}
		var out struct {
			AssignSeat struct{ InvitationToken string }
		}
		_ = jsonUnmarshal(res.Data, &out)
		tokens = append(tokens, out.AssignSeat.InvitationToken)
	})
	if len(tokens) != 3 || codes["CONFLICT SeatNotAvailable"] != n-3 {
		t.Fatalf("%d assignments succeeded, errors %v; want 3 and %d SeatNotAvailable", len(tokens), codes, n-3)
	}

	claimed := 0
	race(n, func(int) {
		res := w.s.Do(t, "", claimSeat, vars{"t": tokens[0]})
		if len(res.Errors) == 0 {
			mu.Lock()
			claimed++
			mu.Unlock()
		}
	})
	var grants, keys, members int
	w.s.Get(t, &grants, `SELECT count(*) FROM benefit_grants WHERE subscription_id = $1`, sub)
	w.s.Get(t, &keys, `SELECT count(*) FROM license_keys WHERE customer_id = $1`, c.ID)
	w.s.Get(t, &members, `SELECT count(*) FROM members WHERE customer_id = $1 AND role <> 'owner'`, c.ID)
	if claimed != 1 || grants != 1 || keys != 1 || members != 3 {
		t.Fatalf("claims = %d, grants = %d, keys = %d, members = %d; want 1 each and a member per assignment", claimed, grants, keys, members)
	}
}
