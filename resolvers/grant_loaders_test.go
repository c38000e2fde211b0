package resolvers_test

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// TestGrantListsCostConstantStatements extends the dataloader proof to grants and license
// keys: a page with its customers, members and benefits costs the same statements for 10 rows
// as for 100. Not parallel, like TestNestedQueriesCostConstantStatements, so the loaders'
// batching window is not disturbed.
func TestGrantListsCostConstantStatements(t *testing.T) {
	const rows = 110
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	benefit, first := seedGrants(t, s, org.ID, rows)
	session := s.NewCustomerSession(t, org.ID, first)

	for _, tc := range []struct {
		name, token, query string
		items              func(data []byte) []json.RawMessage
	}{
		{name: "a benefit's grants with customer, member and benefit", token: org.Token,
			query: `query($n: Int, $b: UUID!) { benefitGrants(benefitId: $b, limit: $n) { items { id customer { id }
				member { id } benefit { id } } } }`,
			items: func(data []byte) []json.RawMessage {
				var out struct {
					BenefitGrants struct{ Items []json.RawMessage }
				}
				mustUnmarshal(t, data, &out)
				return out.BenefitGrants.Items
			}},
		{name: "license keys with customer", token: org.Token,
			query: `query($n: Int) { licenseKeys(limit: $n) { items { id customer { id } } } }`,
			items: func(data []byte) []json.RawMessage {
				var out struct {
					LicenseKeys struct{ Items []json.RawMessage }
				}
				mustUnmarshal(t, data, &out)
				return out.LicenseKeys.Items
			}},
		{name: "the portal's grants with customer, member and benefit", token: session,
			query: `query($n: Int) { me { benefitGrants(limit: $n) { items { id customer { id } member { id }
				benefit { id } } } } }`,
			items: func(data []byte) []json.RawMessage {
				var out struct {
					Me struct {
						BenefitGrants struct{ Items []json.RawMessage }
					}
				}
				mustUnmarshal(t, data, &out)
				return out.Me.BenefitGrants.Items
			}},
	} {
		t.Run(tc.name+" cost the same statements for 10 and 100 rows", func(t *testing.T) {
			requireConstantStatements(t, counter, func(n int) *resolverstest.Response {
				return s.Do(t, tc.token, tc.query, vars{"n": n, "b": benefit})
			}, func(t *testing.T, data []byte, n int) {
				if items := tc.items(data); len(items) != n {
					t.Fatalf("N=%d: %d items", n, len(items))
				}
			})
		})
	}
}

// seedGrants stores n customers, each with a member, an order, a license key and a grant of
// one benefit to that member; the first customer's order also grants n other benefits to the
// customer itself. It returns the shared benefit and the first customer.
func seedGrants(tb testing.TB, s *resolverstest.Server, orgID uuid.UUID, n int) (uuid.UUID, uuid.UUID) {
	tb.Helper()
	s.Exec(tb, `INSERT INTO customers (organization_id, email, created_at)
		SELECT $1, 'g' || i || '@example.com', now() - i * interval '1 second' FROM generate_series(1, $2::int) i`, orgID, n)
	s.Exec(tb, `INSERT INTO members (organization_id, customer_id, email) SELECT organization_id, id, email
		FROM customers WHERE organization_id = $1`, orgID)
	s.Exec(tb, `INSERT INTO benefits (organization_id, type, description, properties)
		SELECT $1, 'custom', 'Benefit ' || i, '{"note": null}' FROM generate_series(0, $2::int) i`, orgID, n)
	var benefit, product, first, firstOrder uuid.UUID
	s.Get(tb, &benefit, `SELECT id FROM benefits WHERE organization_id = $1 AND description = 'Benefit 0'`, orgID)
	s.Get(tb, &product, `INSERT INTO products (organization_id, name) VALUES ($1, 'Seeded') RETURNING id`, orgID)
	s.Exec(tb, `INSERT INTO orders (organization_id, customer_id, product_id, status, billing_reason, currency,
			subtotal_amount, net_amount, total_amount)
		SELECT $1, id, $2, 'paid', 'purchase', 'usd', 0, 0, 0 FROM customers WHERE organization_id = $1`, orgID, product)
	s.Exec(tb, `INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, member_id, order_id, granted_at)
		SELECT o.organization_id, $2, o.customer_id, m.id, o.id, now()
		FROM orders o JOIN members m ON m.customer_id = o.customer_id WHERE o.organization_id = $1`, orgID, benefit)
	s.Exec(tb, `INSERT INTO license_keys (organization_id, benefit_id, customer_id, key)
		SELECT $1, $2, id, 'K-' || id FROM customers WHERE organization_id = $1`, orgID, benefit)
	s.Get(tb, &first, `SELECT id FROM customers WHERE organization_id = $1 ORDER BY created_at DESC LIMIT 1`, orgID)
	s.Get(tb, &firstOrder, `SELECT id FROM orders WHERE customer_id = $1`, first)
	s.Exec(tb, `INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, order_id, granted_at)
		SELECT $1, id, $2, $3, now() FROM benefits WHERE organization_id = $1 AND id <> $4`, orgID, first, firstOrder, benefit)
	return benefit, first
}
