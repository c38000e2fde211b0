package resolvers_test

import (
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// TestBenefitRelationsCostConstantStatements is the dataloader proof for the benefit
// domain's relations: dashboards and portals three levels deep through grants, license keys,
// seats, members and downloadables cost the same statements for 10 parents as for 100. Not
// parallel, like TestNestedQueriesCostConstantStatements.
func TestBenefitRelationsCostConstantStatements(t *testing.T) {
	const rows = 110
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	first := seedBenefitGraph(t, s, org.ID, rows)
	session := s.NewCustomerSession(t, org.ID, first)

	// items checks that the list at path holds n objects and that its last one reached its
	// relation at nested: an object, or a list that is not empty.
	items := func(path []string, nested ...string) func(t *testing.T, data []byte, n int) {
		return func(t *testing.T, data []byte, n int) {
			var root any
			mustUnmarshal(t, data, &root)
			for _, k := range path {
				root = root.(map[string]any)[k]
			}
			list := root.([]any)
			if len(list) != n {
				t.Fatalf("N=%d: %d items at %v", n, len(list), path)
			}
			last := list[n-1]
			for _, k := range nested {
				last = last.(map[string]any)[k]
			}
			if l, ok := last.([]any); last == nil || ok && len(l) == 0 {
				t.Fatalf("N=%d: the last item reached nothing at %v: %v", n, nested, list[n-1])
			}
		}
	}
	// Each loader appears once per query: a record reached at two levels is read by whichever
	// asks first, which would make the count depend on the order the levels resolve in.
	for _, tc := range []struct {
		name, token, query string
		check              func(t *testing.T, data []byte, n int)
	}{
		{"customers with grants, keys, seats, members and downloadables, and theirs", org.Token,
			`query($n: Int) { customers(limit: $n) { items { id
				benefitGrants(first: 3) { items { id benefit { id } licenseKey { id } member { id } } pageInfo { endCursor } }
				licenseKeys(limit: 3) { items { id grant { id customer { id } } } }
				seats(limit: 3) { items { id } }
				members(limit: 3) { items { id } }
				downloadables(limit: 3) { items { id } } } } }`,
			items([]string{"customers", "items"}, "licenseKeys", "items")},
		{"benefits with their grants and the grants' customers and keys", org.Token,
			`query($n: Int) { benefits(limit: $n, filter: {type: [custom]}) { items { id
				grants(limit: 3) { items { id customer { id } } pagination { totalCount } } } } }`,
			items([]string{"benefits", "items"}, "grants", "items")},
		{"subscriptions with their grants and seats", org.Token,
			`query($n: Int) { subscriptions(limit: $n) { items { id
				benefitGrants(limit: 3) { items { id member { id } licenseKey { grant { id } } } }
				customerSeats(limit: 3) { items { id } } } } }`,
			items([]string{"subscriptions", "items"}, "benefitGrants", "items")},
		{"a portal customer's grants through me.customer, with their benefits and keys", session,
			`query($n: Int) { me { customer { benefitGrants(limit: $n, sorting: ["granted_at"]) { items { id benefit { id }
				licenseKey { id grant { id } } } } licenseKeys { items { id } } seats { items { id } }
				downloadables { items { id } } } } }`,
			items([]string{"me", "customer", "benefitGrants", "items"}, "benefit")},
	} {
		t.Run(tc.name+" cost the same statements for 10 and 100 parents", func(t *testing.T) {
			counts := requireConstantStatements(t, counter, func(n int) *resolverstest.Response {
				return s.Do(t, tc.token, tc.query, vars{"n": n})
			}, tc.check)
			t.Logf("statements: %d for 10, %d for 100", counts[10].Statements(), counts[100].Statements())
		})
	}
}

// seedBenefitGraph stores n customers, each with a member, a paid order and a seat-based
// subscription of one product, a claimed and a pending seat, and grants: a license key
// (with its key) to the customer by the order and to the member by the subscription, a
// file by the order, and a custom benefit of its own. The first customer's order also
// grants every custom benefit, so its grants outnumber any page. It returns that customer.
func seedBenefitGraph(tb testing.TB, s *resolverstest.Server, orgID uuid.UUID, n int) uuid.UUID {
	tb.Helper()
	var lk, dl, file, product, first uuid.UUID
	s.Exec(tb, `INSERT INTO customers (organization_id, email, created_at)
		SELECT $1, 'r' || i || '@example.com', now() - i * interval '1 second' FROM generate_series(1, $2::int) i`, orgID, n)
	s.Exec(tb, `INSERT INTO members (organization_id, customer_id, email) SELECT organization_id, id, 'm-' || email
		FROM customers WHERE organization_id = $1`, orgID)
	s.Get(tb, &lk, `INSERT INTO benefits (organization_id, type, description, properties)
		VALUES ($1, 'license_keys', 'Key', '{}') RETURNING id`, orgID)
	s.Get(tb, &file, `INSERT INTO files (organization_id, service, name, path, mime_type, size, is_uploaded)
		VALUES ($1, 'downloadable', 'f.txt', 'seed/' || gen_random_uuid(), 'text/plain', 1, true) RETURNING id`, orgID)
	s.Get(tb, &dl, `INSERT INTO benefits (organization_id, type, description, properties)
		VALUES ($1, 'downloadables', 'Files', jsonb_build_object('files', jsonb_build_array($2::text))) RETURNING id`, orgID, file)
	s.Exec(tb, `INSERT INTO benefits (organization_id, type, description, properties)
		SELECT $1, 'custom', 'Benefit ' || i, '{"note": null}' FROM generate_series(1, $2::int) i`, orgID, n)
	s.Get(tb, &product, `INSERT INTO products (organization_id, name) VALUES ($1, 'Seeded') RETURNING id`, orgID)
	s.Exec(tb, `INSERT INTO orders (organization_id, customer_id, product_id, status, billing_reason, currency,
			subtotal_amount, net_amount, total_amount)
		SELECT $1, id, $2, 'paid', 'purchase', 'usd', 0, 0, 0 FROM customers WHERE organization_id = $1`, orgID, product)
	s.Exec(tb, `INSERT INTO subscriptions (organization_id, customer_id, product_id, status, amount, currency,
			recurring_interval, current_period_start, current_period_end, started_at, seats)
		SELECT $1, id, $2, 'active', 1000, 'usd', 'month', now(), now() + interval '1 month', now(), 2
		FROM customers WHERE organization_id = $1`, orgID, product)
	s.Exec(tb, `INSERT INTO customer_seats (organization_id, subscription_id, status, customer_id, member_id, email, claimed_at)
		SELECT s.organization_id, s.id, 'claimed', s.customer_id, m.id, m.email, now()
		FROM subscriptions s JOIN members m ON m.customer_id = s.customer_id WHERE s.organization_id = $1`, orgID)
	s.Exec(tb, `INSERT INTO customer_seats (organization_id, subscription_id, customer_id, email)
		SELECT organization_id, id, customer_id, 'pending-' || id || '@example.com' FROM subscriptions WHERE organization_id = $1`, orgID)
	s.Exec(tb, `INSERT INTO license_keys (organization_id, benefit_id, customer_id, member_id, key)
		SELECT $1::uuid, $2::uuid, c.id, NULL::uuid, 'K-' || c.id FROM customers c WHERE c.organization_id = $1
		UNION ALL SELECT $1, $2, m.customer_id, m.id, 'M-' || m.id FROM members m WHERE m.organization_id = $1`, orgID, lk)
	s.Exec(tb, `INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, member_id, order_id, subscription_id,
			granted_at, properties)
		SELECT o.organization_id, $2::uuid, o.customer_id, NULL::uuid, o.id, NULL::uuid, now(), jsonb_build_object('license_key_id', k.id::text)
		FROM orders o JOIN license_keys k ON k.customer_id = o.customer_id AND k.member_id IS NULL WHERE o.organization_id = $1
		UNION ALL
		SELECT s.organization_id, $2, s.customer_id, k.member_id, NULL, s.id, now(), jsonb_build_object('license_key_id', k.id::text)
		FROM subscriptions s JOIN license_keys k ON k.customer_id = s.customer_id AND k.member_id IS NOT NULL
		WHERE s.organization_id = $1
		UNION ALL
		SELECT o.organization_id, $3::uuid, o.customer_id, NULL, o.id, NULL, now(), jsonb_build_object('files', jsonb_build_array($4::text))
		FROM orders o WHERE o.organization_id = $1
		UNION ALL
		SELECT o.organization_id, b.id, o.customer_id, NULL, o.id, NULL, now(), '{}'::jsonb
		FROM orders o JOIN customers c ON c.id = o.customer_id
			JOIN benefits b ON b.organization_id = o.organization_id AND b.description = 'Benefit ' || split_part(split_part(c.email, '@', 1), 'r', 2)
		WHERE o.organization_id = $1`, orgID, lk, dl, file)
	s.Exec(tb, `INSERT INTO downloadables (organization_id, benefit_id, file_id, customer_id)
		SELECT $1, $2, $3, id FROM customers WHERE organization_id = $1`, orgID, dl, file)
	s.Get(tb, &first, `SELECT id FROM customers WHERE organization_id = $1 ORDER BY created_at DESC LIMIT 1`, orgID)
	s.Exec(tb, `INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, order_id, granted_at)
		SELECT $1, b.id, $2, o.id, now() FROM benefits b JOIN orders o ON o.customer_id = $2
		WHERE b.organization_id = $1 AND b.type = 'custom' ON CONFLICT DO NOTHING`, orgID, first)
	return first
}
