package bench

import (
	"fmt"
	"strings"
)

// customerRelation is one list a customers page shows for each customer: its selection in
// Till's GraphQL, and how the ceiling reads the same rows (the same filters, order and
// window of 10, with the total) as JSON shaped like Till's answer.
type customerRelation struct {
	field   string
	graphql string
	// table and alias name the rows; where filters them beyond their customer and
	// organization; order is the list's default order; object is the JSON of one row, w.
	table, alias, where, order, object string
}

// customerRelations are the four lists of the customers page, each with the default order of
// the root list of its type: orders newest first, subscriptions by start newest first,
// grants newest first, keys oldest first.
var customerRelations = []customerRelation{
	{field: "orders",
		graphql: `orders(limit: 10) { items { id createdAt status netAmount currency productId } pagination { totalCount } }`,
		table:   "orders", alias: "o", where: "o.deleted_at IS NULL", order: "o.created_at DESC, o.id DESC",
		object: `json_build_object('id', w.id, 'createdAt', w.created_at, 'status', w.status, 'netAmount', w.net_amount,
			'currency', w.currency, 'productId', w.product_id)`},
	{field: "subscriptions",
		graphql: `subscriptions(limit: 10) { items { id status amount currency currentPeriodEnd productId } pagination { totalCount } }`,
		table:   "subscriptions", alias: "s", where: "s.deleted_at IS NULL AND s.started_at IS NOT NULL",
		order: "s.started_at DESC, s.id DESC",
		object: `json_build_object('id', w.id, 'status', w.status, 'amount', w.amount, 'currency', w.currency,
			'currentPeriodEnd', w.current_period_end, 'productId', w.product_id)`},
	{field: "benefitGrants",
		graphql: `benefitGrants(limit: 10) { items { id benefitId grantedAt isGranted } pagination { totalCount } }`,
		table:   "benefit_grants", alias: "g", where: "g.deleted_at IS NULL", order: "g.created_at DESC, g.id DESC",
		object: `json_build_object('id', w.id, 'benefitId', w.benefit_id, 'grantedAt', w.granted_at,
			'isGranted', w.granted_at IS NOT NULL)`},
	{field: "licenseKeys",
		graphql: `licenseKeys(limit: 10) { items { id displayKey status expiresAt } pagination { totalCount } }`,
		table:   "license_keys", alias: "k", where: "k.deleted_at IS NULL", order: "k.created_at, k.id",
		object: `json_build_object('id', w.id, 'displayKey', w.display_key, 'status', w.status, 'expiresAt', w.expires_at)`},
}

// cte is the relation's rows for the whole page in one pass: per customer (parent), the first
// 10 rows as a JSON array in order and the count of all of them.
func (r customerRelation) cte() string {
	return fmt.Sprintf(`r_%[1]s AS (SELECT w.customer_id AS parent,
			json_agg(%[2]s ORDER BY w.page_row) FILTER (WHERE w.page_row <= 10) AS items, count(*) AS total
		FROM (SELECT %[3]s.*, row_number() OVER (PARTITION BY %[3]s.customer_id ORDER BY %[4]s) AS page_row
			FROM %[5]s %[3]s JOIN p ON %[3]s.customer_id = p.id AND %[3]s.organization_id = p.organization_id
			WHERE %[6]s) w
		GROUP BY w.customer_id)`, r.field, r.object, r.alias, r.order, r.table, r.where)
}

// tillCustomerRelations are the relations of customerRelations that Customer has in Till's
// schema: the customers page asks Till for these, and its ceiling reads exactly these, so
// the two always do the same work. A `ceiling, all four` row reads every relation for
// comparison. Add a field here when the schema gains it.
var tillCustomerRelations = []string{"orders", "subscriptions", "benefitGrants", "licenseKeys"}

// relationsNamed picks the relations of customerRelations listed in names, in that order.
func relationsNamed(names []string) []customerRelation {
	var out []customerRelation
	for _, n := range names {
		for _, r := range customerRelations {
			if r.field == n {
				out = append(out, r)
			}
		}
	}
	return out
}

// customersPageQuery is a dashboard's customers page: 50 customers with the given relations.
func customersPageQuery(rels []customerRelation) string {
	var sel strings.Builder
	for _, r := range rels {
		sel.WriteString("\n      " + r.graphql)
	}
	return `query CustomersPage($page: Int) {
  customers(page: $page, limit: 50) {
    items { id createdAt email name externalId` + sel.String() + ` }
    pagination { totalCount }
  }
}`
}

// customersPageSQL is the ceiling's customers page in one statement: the token's
// organization, the page of 50 customers (newest first) with its total, and each relation
// read for the whole page in one pass. $1 is the token's hash, $2 the offset; no row when
// the token is unknown.
func customersPageSQL(rels []customerRelation) string {
	var ctes, fields, joins strings.Builder
	for _, r := range rels {
		ctes.WriteString(",\n\t" + r.cte())
		fmt.Fprintf(&fields, `, '%[1]s', json_build_object('items', coalesce(r_%[1]s.items, '[]'),
			'pagination', json_build_object('totalCount', coalesce(r_%[1]s.total, 0)))`, r.field)
		fmt.Fprintf(&joins, " LEFT JOIN r_%[1]s ON r_%[1]s.parent = p.id", r.field)
	}
	return organizationTokenCTE + `,
	live AS (SELECT c.* FROM customers c WHERE c.organization_id = (SELECT organization_id FROM tok) AND c.deleted_at IS NULL),
	p AS (SELECT * FROM live ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET $2)` + ctes.String() + `
	SELECT json_build_object('customers', json_build_object(
		'items', coalesce(json_agg(json_build_object('id', p.id, 'createdAt', p.created_at, 'email', p.email,
			'name', p.name, 'externalId', p.external_id` + fields.String() + `) ORDER BY p.created_at DESC, p.id DESC), '[]'),
		'pagination', json_build_object('totalCount', (SELECT count(*) FROM live))))
	FROM p` + joins.String() + `
	HAVING (SELECT count(*) FROM tok) = 1`
}

// windowSQL is a scalar subquery that reads the first 10 rows of a list in order, with the
// list's total, as {items, pagination: {totalCount}}: for the portal, whose lists are of one
// customer.
func windowSQL(columns, from, order string) string {
	return `(SELECT json_build_object(
			'items', coalesce(json_agg(to_jsonb(w) - 'page_total' - 'page_row' ORDER BY w.page_row), '[]'),
			'pagination', json_build_object('totalCount', coalesce(max(w.page_total), 0)))
		FROM (SELECT ` + columns + `, count(*) OVER () AS page_total, row_number() OVER (ORDER BY ` + order + `) AS page_row
			FROM ` + from + ` ORDER BY ` + order + ` LIMIT 10) w)`
}

// organizationTokenCTE finds the organization of a live organization access token by its
// stored hash ($1), as Till's authentication does.
const organizationTokenCTE = `WITH tok AS (SELECT t.organization_id FROM organization_access_tokens t
		JOIN organizations o ON o.id = t.organization_id
		WHERE t.token = $1 AND t.deleted_at IS NULL AND o.deleted_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now()))`

// orderSQL is the ceiling's order page in one statement: the order of the token's
// organization ($2, a hash) by id ($1) with the whole rows of its customer, product,
// discount and subscription, and its items.
const orderSQL = `SELECT json_build_object('order', to_jsonb(o) || jsonb_build_object(
		'customer', to_jsonb(c), 'product', to_jsonb(p), 'discount', to_jsonb(d), 'subscription', to_jsonb(s),
		'items', (SELECT coalesce(jsonb_agg(to_jsonb(i) ORDER BY i.created_at, i.id), '[]') FROM order_items i WHERE i.order_id = o.id)))
	FROM orders o
	JOIN organization_access_tokens t ON t.organization_id = o.organization_id AND t.token = $2 AND t.deleted_at IS NULL
		AND (t.expires_at IS NULL OR t.expires_at > now())
	JOIN organizations org ON org.id = o.organization_id AND org.deleted_at IS NULL
	JOIN customers c ON c.id = o.customer_id
	LEFT JOIN products p ON p.id = o.product_id
	LEFT JOIN discounts d ON d.id = o.discount_id
	LEFT JOIN subscriptions s ON s.id = o.subscription_id
	WHERE o.id = $1 AND o.deleted_at IS NULL`

// portalQuery is a customer portal's home: the customer, its orders and subscriptions with
// their product's name, and its license keys.
const portalQuery = `query Portal {
  me {
    customer { id email name billingName billingAddress { line1 postalCode city country } }
    orders(limit: 10) { items { id createdAt status netAmount currency product { name } } pagination { totalCount } }
    subscriptions(limit: 10) { items { id status amount currency currentPeriodEnd product { name } } pagination { totalCount } }
    licenseKeys(limit: 10) { items { id displayKey status expiresAt } pagination { totalCount } }
  }
}`

// portalSQL is the ceiling's portal home in one statement: the customer of a live customer
// session (by its stored hash, $1) and its three lists, each with its total, with the
// defaults of the portal's lists (orders newest first, started subscriptions by start
// newest first, keys oldest first).
var portalSQL = `WITH me AS (SELECT s.customer_id, s.organization_id FROM customer_sessions s
		JOIN customers c ON c.id = s.customer_id JOIN organizations o ON o.id = s.organization_id
		WHERE s.token = $1 AND s.expires_at > now() AND c.deleted_at IS NULL AND o.deleted_at IS NULL)
	SELECT json_build_object('me', json_build_object(
		'customer', (SELECT json_build_object('id', c.id, 'email', c.email, 'name', c.name, 'billingName', c.billing_name,
			'billingAddress', c.billing_address) FROM customers c WHERE c.id = me.customer_id),
		'orders', ` + windowSQL(`o.id, o.created_at AS "createdAt", o.status, o.net_amount AS "netAmount", o.currency,
			json_build_object('name', pr.name) AS product`,
	`orders o LEFT JOIN products pr ON pr.id = o.product_id
			WHERE o.customer_id = me.customer_id AND o.organization_id = me.organization_id AND o.deleted_at IS NULL`,
	`o.created_at DESC, o.id DESC`) + `,
		'subscriptions', ` + windowSQL(`s.id, s.status, s.amount, s.currency, s.current_period_end AS "currentPeriodEnd",
			json_build_object('name', pr.name) AS product`,
	`subscriptions s JOIN products pr ON pr.id = s.product_id
			WHERE s.customer_id = me.customer_id AND s.organization_id = me.organization_id AND s.deleted_at IS NULL
				AND s.started_at IS NOT NULL`,
	`s.started_at DESC, s.id DESC`) + `,
		'licenseKeys', ` + windowSQL(`k.id, k.display_key AS "displayKey", k.status, k.expires_at AS "expiresAt"`,
	`license_keys k WHERE k.customer_id = me.customer_id AND k.organization_id = me.organization_id AND k.deleted_at IS NULL`,
	`k.created_at, k.id`) + `))
	FROM me`
