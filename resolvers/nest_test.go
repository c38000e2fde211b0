package resolvers_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// seedCustomerRelations gives the dashboard's customers what a customers page shows
// besides orders: for the newest four, grants granted or not and revoked or not, and for
// the newest three, license keys (one with text that needs escaping and an expiry) and
// subscriptions; the fifth customer keeps nothing but orders, the sixth nothing at all.
func seedCustomerRelations(t *testing.T, s *resolverstest.Server, orgID uuid.UUID) {
	t.Helper()
	s.Exec(t, `DELETE FROM orders WHERE customer_id = (SELECT id FROM customers ORDER BY created_at DESC, id DESC OFFSET 5 LIMIT 1)`)
	s.Exec(t, `INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, granted_at, revoked_at)
		SELECT b.organization_id, b.id, c.id, CASE WHEN c.n % 2 = 0 THEN now() END, CASE WHEN c.n = 1 THEN now() END
		FROM benefits b CROSS JOIN (SELECT id, row_number() OVER (ORDER BY created_at DESC, id DESC) AS n FROM customers) c
		WHERE c.n <= 4`)
	s.Exec(t, `INSERT INTO license_keys (organization_id, benefit_id, customer_id, key, status, expires_at)
		SELECT b.organization_id, b.id, c.id, 'KEY-' || c.n || '-' || left(b.id::text, 8) || E'"\\\t',
			CASE WHEN c.n = 2 THEN 'revoked' ELSE 'granted' END,
			CASE WHEN c.n = 1 THEN '2031-05-06 07:08:09.123456+00'::timestamptz END
		FROM benefits b CROSS JOIN (SELECT id, row_number() OVER (ORDER BY created_at DESC, id DESC) AS n FROM customers) c
		WHERE c.n <= 3`)
	var customers []uuid.UUID
	if err := s.DB.Select(&customers, `SELECT id FROM customers ORDER BY created_at DESC, id DESC LIMIT 3`); err != nil {
		t.Fatal(err)
	}
	for i, c := range customers {
		seedPortalSubscriptions(t, s.DB, orgID, c, "Plan "+string(rune('A'+i)), i+1)
	}
}

// TestNestedRelationsMatchTheExecutor checks customers pages whose relations PostgreSQL
// writes inside each customer (storage.Nested) against the executor: the same page with
// one more customer field that no statement can write (organization) resolves every
// relation field by field; with that field cut out, the two answers must be the same bytes.
// The pages cover empty relations, offsets past the end, sorting, variables, aliases, the
// same relation twice, __typename at every level and text that needs escaping.
func TestNestedRelationsMatchTheExecutor(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, s.DB, org.ID)
	seedCustomerRelations(t, s, org.ID)

	const all = `orders(limit: 10) { items { id createdAt status netAmount currency productId } pagination { totalCount } }
		subscriptions(limit: 10) { items { id status amount currency currentPeriodEnd productId } pagination { totalCount } }
		benefitGrants(limit: 10) { items { id benefitId grantedAt isGranted } pagination { totalCount } }
		licenseKeys(limit: 10) { items { id displayKey status expiresAt } pagination { totalCount } }`
	tests := []struct {
		name, query string
		vars        map[string]any
	}{
		{"the dashboard's customers page", `query($page: Int) { customers(page: $page, limit: 8) { items { id createdAt email name externalId ` +
			all + ` %s } pagination { totalCount } } }`, map[string]any{"page": 1}},
		{"typenames, aliases, every pagination field", `{ customers(limit: 7) { __typename items { __typename key: id
			o: orders(limit: 3, page: 2) { __typename p: pagination { maxPage __typename totalCount } items { __typename id } }
			k: licenseKeys(limit: 2) { items { displayKey expiresAt __typename } pagination { maxPage } } %s } } }`, nil},
		{"one relation twice, sorted, past the end", `query($s: [String!], $l: Int) { customers(limit: 6) { items {
			first: orders(limit: $l, sorting: $s) { items { id createdAt } }
			later: orders(limit: 4, page: 9) { items { id } pagination { totalCount maxPage } }
			subscriptions(sorting: ["amount", "-started_at"]) { items { amount } } %s } } }`,
			map[string]any{"s": []string{"created_at"}, "l": 2}},
		{"items with their product", `{ customers(limit: 6) { items { id
			orders(limit: 3) { items { id product { __typename id name isArchived } } }
			subscriptions { items { p: product { name } } } %s } } }`, nil},
	}
	cut := regexp.MustCompile(`,"organization":\{"id":"[^"]*"\}}`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counter.Reset()
			fast := s.Do(t, org.Token, strings.Replace(tc.query, "%s", "", 1), tc.vars)
			statements := counter.Snapshot().Statements()
			slow := s.Do(t, org.Token, strings.Replace(tc.query, "%s", "organization { id }", 1), tc.vars)
			if len(fast.Errors) > 0 || len(slow.Errors) > 0 {
				t.Fatalf("errors: %s / %s", fast.Body, slow.Body)
			}
			fastData, stripped := dataWithout(t, fast, slow, func(b string) string { return cut.ReplaceAllString(b, "}") })
			if stripped != fastData {
				t.Errorf("PostgreSQL's page and the executor's differ:\n nested   %s\n executor %s", fastData, stripped)
			}
			// The token's lookup and the page: every relation was written inside it.
			if statements != 2 {
				t.Errorf("the nested page cost %d statements, want 2", statements)
			}
		})
	}
}

// TestNestedRelationsKeepTheirGuards shows that a relation is written inside its parent
// only for a caller its guard admits: a token without orders:read gets the executor's
// refusal of each customer's orders, and its licenseKeys still written.
func TestNestedRelationsKeepTheirGuards(t *testing.T) {
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, s.DB, org.ID)
	seedCustomerRelations(t, s, org.ID)
	token := s.NewToken(t, org.ID, "customers:read license_keys:read")
	res := s.Do(t, token, `{ customers(limit: 3) { items { id orders(limit: 2) { items { id } } licenseKeys { items { id } } } } }`, nil)
	if len(res.Errors) != 3 {
		t.Fatalf("want one refusal per customer's orders: %s", res.Body)
	}
	for _, e := range res.Errors {
		if e.Extensions.Code != "FORBIDDEN" || len(e.Path) != 4 || e.Path[3] != "orders" {
			t.Errorf("refusal %+v", e)
		}
	}
	if strings.Contains(string(res.Body), `"orders":{`) || !strings.Contains(string(res.Body), `"licenseKeys":{"items":[{"id":`) {
		t.Errorf("a refused relation was written, or an admitted one was not: %s", res.Body)
	}
}

// TestNestedPageThatFailsIsResolvedFieldByField: a value PostgreSQL cannot write as the
// executor does (an infinite date-time) fails the page statement; the page is then read
// as columns, and only the relations that show the value fail, as the executor has them.
func TestNestedPageThatFailsIsResolvedFieldByField(t *testing.T) {
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, s.DB, org.ID)
	s.Exec(t, `UPDATE orders SET modified_at = 'infinity' WHERE id = (SELECT id FROM orders
		WHERE customer_id = (SELECT id FROM customers ORDER BY created_at DESC, id DESC LIMIT 1) ORDER BY created_at DESC LIMIT 1)`)
	const query = `{ customers(limit: 3) { items { id orders(limit: 2) { items { id modifiedAt } } %s } } }`
	fast := s.Do(t, org.Token, strings.Replace(query, "%s", "", 1), nil)
	slow := s.Do(t, org.Token, strings.Replace(query, "%s", "organization { id }", 1), nil)
	if len(fast.Errors) == 0 || len(fast.Errors) != len(slow.Errors) {
		t.Fatalf("errors differ:\n nested   %s\n executor %s", fast.Body, slow.Body)
	}
	for i, e := range fast.Errors {
		if fmt.Sprint(e.Path) != fmt.Sprint(slow.Errors[i].Path) || len(e.Path) < 4 || e.Path[3] != "orders" {
			t.Errorf("error %d at %v, the executor's at %v", i, e.Path, slow.Errors[i].Path)
		}
	}
}

// TestWrittenProductsMatchTheExecutor: an item's product is written by PostgreSQL in a root
// list and in a relation's window (read with a cursor, so not nested) as the executor
// writes it; the same pages with the order's paid (a resolver) resolve the product field by
// field.
func TestWrittenProductsMatchTheExecutor(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	seedDashboard(t, s.DB, org.ID)
	s.Exec(t, `UPDATE products SET name = E'Pro "Plan" \\ \t' WHERE id = (SELECT product_id FROM orders ORDER BY created_at DESC LIMIT 1)`)
	cut := regexp.MustCompile(`,"paid":(true|false)}`)
	for _, tc := range []struct{ query string }{
		{`{ orders(limit: 12) { items { id product { __typename id name isArchived createdAt } %s } } }`},
		{`{ customers(limit: 4) { items { id orders(first: 3) { items { id p: product { name } %s } } } } }`},
	} {
		counter.Reset()
		fast := s.Do(t, org.Token, strings.Replace(tc.query, "%s", "", 1), nil)
		statements := counter.Snapshot().Statements()
		slow := s.Do(t, org.Token, strings.Replace(tc.query, "%s", "paid", 1), nil)
		if len(fast.Errors) > 0 || len(slow.Errors) > 0 {
			t.Fatalf("errors: %s / %s", fast.Body, slow.Body)
		}
		fastData, stripped := dataWithout(t, fast, slow, func(b string) string { return cut.ReplaceAllString(b, "}") })
		if stripped != fastData || !strings.Contains(fastData, `Pro \"Plan\"`) {
			t.Errorf("PostgreSQL's products and the executor's differ:\n written  %s\n executor %s", fastData, stripped)
		}
		if want := int64(strings.Count(tc.query, "items")) + 1; statements != want {
			t.Errorf("%s cost %d statements, want %d (the token, then one per list)", tc.query, statements, want)
		}
	}
}

// dataWithout is the data of two answers to one document, the second with one more field
// that cut takes out again: what a writer that bypasses the executor wrote, and what the
// executor wrote, to compare byte for byte. Extensions are left out (the cost extension
// counts the extra field). The extra field must be in the executed answer.
func dataWithout(t *testing.T, written, executed *resolverstest.Response, cut func(string) string) (string, string) {
	t.Helper()
	stripped := cut(string(executed.Body))
	if stripped == string(executed.Body) {
		t.Fatalf("the extra field is not in the executed answer: %s", executed.Body)
	}
	w, _, _ := strings.Cut(string(written.Body), `,"extensions"`)
	e, _, _ := strings.Cut(stripped, `,"extensions"`)
	return w, e
}
