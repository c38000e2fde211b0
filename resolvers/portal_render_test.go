package resolvers_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// TestRenderedPortalHomeMatchesTheExecutor checks portal homes that PostgreSQL writes whole
// (renderedMe) against the executor: the same home with `member` added (which no statement
// writes) is resolved field by field; with `,"member":null` cut out, the two answers must be
// the same bytes. The customers' billing addresses are absent, stored as JSON null, partial
// and full with text that needs escaping; one customer has no keys and no subscriptions. A
// member session is never written so, and reads what the executor gives it.
func TestRenderedPortalHomeMatchesTheExecutor(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, s.DB, org.ID)
	seedCustomerRelations(t, s, org.ID)
	var customers []uuid.UUID
	if err := s.DB.Select(&customers, `SELECT id FROM customers WHERE organization_id = $1 ORDER BY created_at DESC, id DESC`, org.ID); err != nil {
		t.Fatal(err)
	}
	s.Exec(t, `UPDATE customers SET billing_name = E'Ann "Q" \\ \u2028', billing_address =
		'{"line1": "1 \"Main\" St\\\\", "line2": null, "postal_code": "10115", "city": "Berlin\u0001", "country": "DE"}' WHERE id = $1`, customers[0])
	s.Exec(t, `UPDATE customers SET billing_address = 'null'::jsonb WHERE id = $1`, customers[1])
	s.Exec(t, `UPDATE customers SET billing_address = '{"city": "Paris"}' WHERE id = $1`, customers[2])

	queries := []struct {
		name, query string
		vars        map[string]any
	}{
		{"the dashboard's portal home", `{ me {
			customer { id email name billingName billingAddress { line1 postalCode city country } }
			orders(limit: 10) { items { id createdAt status netAmount currency product { name } } pagination { totalCount } }
			subscriptions(limit: 10) { items { id status amount currency currentPeriodEnd product { name } } pagination { totalCount } }
			licenseKeys(limit: 10) { items { id displayKey status expiresAt } pagination { totalCount } } %s } }`, nil},
		{"typenames, aliases, pages and sorting", `query($l: Int) { me { __typename
			c: customer { __typename createdAt externalId billingAddress { __typename state line2 country } }
			o: orders(limit: $l, page: 2, sorting: ["net_amount", "-created_at"]) { __typename
				items { __typename id p: product { __typename id name isArchived } } pagination { maxPage totalCount } }
			subscriptions(sorting: ["-amount"]) { items { amount productId } }
			licenseKeys(page: 5) { items { id } pagination { totalCount maxPage } } %s } }`, map[string]any{"l": 2}},
	}
	for i, c := range customers[:4] {
		token := s.NewCustomerSession(t, org.ID, c)
		for _, q := range queries {
			counter.Reset()
			fast := s.Do(t, token, strings.Replace(q.query, "%s", "", 1), q.vars)
			statements := counter.Snapshot().Statements()
			slow := s.Do(t, token, strings.Replace(q.query, "%s", "member { id }", 1), q.vars)
			if len(fast.Errors) > 0 || len(slow.Errors) > 0 {
				t.Fatalf("customer %d, %s: errors: %s / %s", i, q.name, fast.Body, slow.Body)
			}
			fastData, stripped := dataWithout(t, fast, slow, withoutMember)
			if stripped != fastData {
				t.Errorf("customer %d, %s: PostgreSQL's home and the executor's differ:\n written  %s\n executor %s", i, q.name, fastData, stripped)
			}
			if statements != 2 {
				t.Errorf("customer %d, %s: the written home cost %d statements, want 2 (the session, the home)", i, q.name, statements)
			}
		}
	}

	t.Run("what PostgreSQL does not write as the executor does is left to the executor", func(t *testing.T) {
		// encoding/json reads keys in any case (the last match wins) and leaves an order's
		// JSON null address an empty one; a deferred fragment is the executor's to leave out.
		s.Exec(t, `UPDATE customers SET billing_address = '{"LINE1": "Upper", "Country": "FR", "line1": "lower"}' WHERE id = $1`, customers[3])
		s.Exec(t, `UPDATE orders SET billing_address = 'null'::jsonb WHERE customer_id = $1`, customers[3])
		token := s.NewCustomerSession(t, org.ID, customers[3])
		for _, q := range []string{
			`{ me { customer { id billingAddress { line1 country } } %s } }`,
			`{ me { orders(limit: 2) { items { id billingAddress { line1 country } } } %s } }`,
			`{ me { customer { id } ... @defer { orders(limit: 1) { items { id } } } %s } }`,
			`{ me { orders(limit: 2) { items { id ... @defer { product { name } } } } %s } }`,
		} {
			fast := s.Do(t, token, strings.Replace(q, "%s", "", 1), nil)
			slow := s.Do(t, token, strings.Replace(q, "%s", "member { id }", 1), nil)
			fastData, stripped := dataWithout(t, fast, slow, withoutMember)
			if stripped != fastData || len(fast.Errors) > 0 {
				t.Errorf("%s:\n home     %s\n executor %s", q, fastData, stripped)
			}
		}
		if !strings.Contains(string(s.Do(t, token, `{ me { customer { billingAddress { country } } } }`, nil).Body), `"country":"FR"`) {
			t.Error("the customer's address is not read as encoding/json reads it")
		}
	})

	t.Run("a member session is resolved field by field", func(t *testing.T) {
		var memberID uuid.UUID
		s.Get(t, &memberID, `INSERT INTO members (organization_id, customer_id, email, role)
			VALUES ($1, $2, 'owner@example.com', 'owner') RETURNING id`, org.ID, customers[0])
		token := s.NewMemberSession(t, org.ID, customers[0], memberID)
		counter.Reset()
		res := s.Do(t, token, `{ me { customer { id } licenseKeys { items { id } pagination { totalCount } } } }`, nil)
		if len(res.Errors) > 0 || counter.Snapshot().Statements() < 3 {
			t.Fatalf("%d statements: %s", counter.Snapshot().Statements(), res.Body)
		}
		// The owner holds none of the customer's keys itself: its list is its own, empty.
		if !strings.Contains(string(res.Body), `"licenseKeys":{"items":[],"pagination":{"totalCount":0}}`) {
			t.Errorf("a member's keys: %s", res.Body)
		}
	})
}

// withoutMember takes a customer session's me.member (null) out of an answer.
func withoutMember(body string) string { return strings.Replace(body, `,"member":null}`, "}", 1) }
