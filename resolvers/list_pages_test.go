package resolvers_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// tiedRows is how many rows each list of TestListsWalkEqualSortKeysOnce holds; tiedAt gives
// the i-th row one of three created_at values, so ties straddle every page boundary.
const (
	tiedRows = 14
	tiedAt   = `timestamptz '2026-01-01' + (i % 3) * interval '1 day'`
)

// tiedList is a root list for the walk: its field and extra arguments, how its rows are
// stored, and the sortings to walk it by (nil: its default order only).
type tiedList struct {
	field, args string
	key         string // the item's identity field
	vars        func(world tiedWorld) vars
	seed        string // an INSERT of tiedRows rows over generate_series i, $1 the organization
	sortings    [][]string
}

// tiedWorld is the organization whose lists the walk reads.
type tiedWorld struct {
	s        *resolverstest.Server
	org      resolverstest.Org
	customer uuid.UUID
	endpoint uuid.UUID
}

// TestListsWalkEqualSortKeysOnce walks every list converted to windows with many rows
// sharing their sort key: offset pages, first/after and last/before each see every row once
// and agree on the order.
func TestListsWalkEqualSortKeysOnce(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	w := tiedWorld{s: s, org: org}
	s.Get(t, &w.customer, `INSERT INTO customers (organization_id, email) VALUES ($1, 'walker@example.com') RETURNING id`, org.ID)
	s.Get(t, &w.endpoint, `INSERT INTO webhook_endpoints (organization_id, url, secret)
		VALUES ($1, 'https://example.com/walk', 'polar_whs_walk') RETURNING id`, org.ID)
	none := func(tiedWorld) vars { return vars{} }
	for _, l := range []tiedList{
		{field: "customers", vars: none, sortings: [][]string{nil, {"name"}, {"-name", "created_at"}, {"email"}},
			seed: `INSERT INTO customers (organization_id, email, name, created_at)
				SELECT $1, 'tied' || i || '@example.com', 'Name ' || (i % 2), ` + tiedAt + ` FROM generate_series(2, $2) i`},
		{field: "paymentMethods", args: "customerId: $customer",
			vars: func(w tiedWorld) vars { return vars{"customer": w.customer} },
			seed: `INSERT INTO payment_methods (organization_id, customer_id, processor_id, type, brand, last4,
				exp_month, exp_year, created_at)
				SELECT $1, (SELECT id FROM customers WHERE email = 'walker@example.com'), 'pm_' || i, 'card', 'visa',
				'4242', 1, 2031, ` + tiedAt + ` FROM generate_series(1, $2) i`},
		{field: "files", vars: none,
			seed: `INSERT INTO files (organization_id, service, name, path, mime_type, size, is_uploaded, created_at)
				SELECT $1, 'downloadable', 'f' || i, 'walk/' || i, 'application/zip', 1, true, ` + tiedAt + `
				FROM generate_series(1, $2) i`},
		{field: "meters", vars: none, sortings: [][]string{nil, {"-created_at"}},
			seed: `INSERT INTO meters (organization_id, name, filter, aggregation, created_at)
				SELECT $1, 'Meter ' || (i % 2), '{"conjunction": "and", "clauses": []}', '{"func": "count"}', ` + tiedAt + `
				FROM generate_series(1, $2) i`},
		{field: "webhookEndpoints", vars: none,
			seed: `INSERT INTO webhook_endpoints (organization_id, url, secret, created_at)
				SELECT $1, 'https://example.com/' || i, 'polar_whs_' || i, ` + tiedAt + ` FROM generate_series(2, $2) i`},
		{field: "webhookEvents", vars: none,
			seed: `INSERT INTO webhook_events (organization_id, webhook_endpoint_id, type, payload, created_at)
				SELECT $1, (SELECT id FROM webhook_endpoints WHERE url = 'https://example.com/walk'), 'order.paid', '{}',
				` + tiedAt + ` FROM generate_series(1, $2) i`},
		{field: "domainEvents", vars: none,
			seed: `INSERT INTO domain_events (organization_id, type, object_id, created_at)
				SELECT $1, 'order.paid', gen_random_uuid(), ` + tiedAt + ` FROM generate_series(1, $2) i`},
		{field: "jobs", vars: none,
			seed: `INSERT INTO jobs (organization_id, kind, state, finished_at, created_at)
				SELECT $1, 'walk', 'completed', now(), ` + tiedAt + ` FROM generate_series(1, $2) i`},
		{field: "oauth2Clients", key: "clientId", vars: none,
			seed: `INSERT INTO oauth2_clients (organization_id, client_id, client_name, redirect_uris, scope,
				token_endpoint_auth_method, created_at)
				SELECT $1, 'till_ci_walk' || i, 'App', '{https://example.com/cb}', 'openid', 'none', ` + tiedAt + `
				FROM generate_series(1, $2) i`},
	} {
		s.Exec(t, l.seed, org.ID, tiedRows)
		for _, sorting := range append([][]string{}, cmpOr(l.sortings, [][]string{nil})...) {
			t.Run(fmt.Sprintf("%s sorted by %v", l.field, sorting), func(t *testing.T) {
				walkTies(t, w, l, sorting)
			})
		}
	}
}

// walkTies walks one list by offset pages of 4, by first/after windows of 3 and by
// last/before windows of 5, and requires each walk to see every row once, in the same order.
func walkTies(t *testing.T, w tiedWorld, l tiedList, sorting []string) {
	t.Helper()
	sortArg, sortVar := "", ""
	if l.sortings != nil {
		sortArg, sortVar = "sorting: $sorting,", ", $sorting: [String!]"
	}
	extraVars := ""
	for name := range l.vars(w) {
		extraVars += ", $" + name + ": UUID"
	}
	key := cmp.Or(l.key, "id")
	doc := fmt.Sprintf(`query($page: Int, $limit: Int, $first: Int, $after: String, $last: Int, $before: String%s%s) {
		list: %s(%s %s page: $page, limit: $limit, first: $first, after: $after, last: $last, before: $before) {
			items { key: %s } pagination { totalCount maxPage }
			pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
		sortVar, extraVars, l.field, l.args, sortArg, key)
	read := func(v vars) tiedWindow {
		t.Helper()
		for k, x := range l.vars(w) {
			v[k] = x
		}
		if sorting != nil {
			v["sorting"] = sorting
		}
		var out struct{ List tiedWindow }
		w.s.Query(t, w.org.Token, doc, v, &out)
		return out.List
	}

	var byOffset []string
	for page := 1; page <= 4; page++ {
		p := read(vars{"page": page, "limit": 4})
		if p.Pagination.TotalCount != tiedRows || p.Pagination.MaxPage != 4 {
			t.Fatalf("page %d: pagination %+v, want %d rows on 4 pages", page, p.Pagination, tiedRows)
		}
		byOffset = append(byOffset, p.keys()...)
	}
	if distinct := len(slices.Compact(slices.Sorted(slices.Values(byOffset)))); len(byOffset) != tiedRows || distinct != tiedRows {
		t.Fatalf("offset pages: %d rows, %d distinct, want %d each once", len(byOffset), distinct, tiedRows)
	}

	var forward []string
	v := vars{"first": 3}
	for range tiedRows {
		p := read(v)
		forward = append(forward, p.keys()...)
		if !p.PageInfo.HasNextPage {
			break
		}
		v = vars{"first": 3, "after": *p.PageInfo.EndCursor}
	}
	if !slices.Equal(forward, byOffset) {
		t.Errorf("first/after walked\n%v\noffset pages\n%v", forward, byOffset)
	}

	var backward []string
	v = vars{"last": 5}
	for range tiedRows {
		p := read(v)
		backward = append(p.keys(), backward...)
		if !p.PageInfo.HasPreviousPage {
			break
		}
		v = vars{"last": 5, "before": *p.PageInfo.StartCursor}
	}
	if !slices.Equal(backward, byOffset) {
		t.Errorf("last/before walked\n%v\noffset pages\n%v", backward, byOffset)
	}
}

// tiedWindow is a window of any list, its items reduced to their identity.
type tiedWindow struct {
	Items      []struct{ Key string }
	Pagination struct{ TotalCount, MaxPage int }
	PageInfo   struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

func (p tiedWindow) keys() []string {
	out := make([]string, len(p.Items))
	for i, it := range p.Items {
		out[i] = strings.ToLower(it.Key)
	}
	return out
}

// cmpOr is cmp.Or for values that are not comparable: v unless it is empty.
func cmpOr[T any](v []T, or []T) []T {
	if len(v) == 0 {
		return or
	}
	return v
}
