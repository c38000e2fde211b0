package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// A page whose items show, besides plain fields, paginated relations whose own items show
// only plain fields (a customers page with each customer's orders) is written by PostgreSQL
// whole: each relation (Nested) is read for every parent of the page in one pass and
// written into its parent's JSON, so the page is one statement and the server copies one
// text column per parent instead of resolving, loading and writing every relation of every
// parent.

// Nested is a paginated relation written inside its parent's JSON (a RenderField of kind
// "nested"): an offset window of a list, the items of one parent, with its page object.
type Nested struct {
	list   listSQL
	parent string // the column of the list's rows that holds the parent's id
	window Window
	// Page are the keys of the page object: kind "items" (the window's items, written with
	// window.Render), "totalCount" and "maxPage" (the pagination's), "object" (an object of
	// those, with Fields), or a Literal (a __typename).
	Page []RenderField
}

// NestOrdersOfCustomers is OrderWindowsByCustomers written in each customer's JSON.
func NestOrdersOfCustomers(orgs []uuid.UUID, f OrderListFilter, sorts []Sort, w Window, page []RenderField) *Nested {
	return &Nested{list: orderList(orgs, f, sorts), parent: "o.customer_id", window: w, Page: page}
}

// NestSubscriptionsOfCustomers is SubscriptionWindowsByCustomers written in each customer's JSON.
func NestSubscriptionsOfCustomers(orgs []uuid.UUID, f SubscriptionListFilter, sorts []Sort, w Window, page []RenderField) *Nested {
	return &Nested{list: subscriptionList(orgs, f, sorts), parent: "s.customer_id", window: w, Page: page}
}

// NestGrantsOfCustomers is GrantWindowsByCustomers written in each customer's JSON.
func NestGrantsOfCustomers(orgs []uuid.UUID, f GrantListFilter, sorts []Sort, w Window, page []RenderField) *Nested {
	return &Nested{list: grantList(orgs, f, sorts), parent: "g.customer_id", window: w, Page: page}
}

// NestLicenseKeysOfCustomers is LicenseKeyWindowsByCustomers written in each customer's JSON.
func NestLicenseKeysOfCustomers(orgs []uuid.UUID, f LicenseKeyListFilter, sorts []Sort, w Window, page []RenderField) *Nested {
	return &Nested{list: licenseKeyList(orgs, f, sorts), parent: "k.customer_id", window: w, Page: page}
}

// hasNested reports whether fields write a relation inside the record.
func hasNested(fields []RenderField) bool {
	for _, f := range fields {
		if f.Nested != nil {
			return true
		}
	}
	return false
}

// cte reads the relation for every parent of the page (the rows of page_parent) in one
// pass, as the statement's common table expression name: per parent, the JSON of the items
// of its window joined by commas (null when none) and the count of all its rows. Each
// parent's rows are numbered in list order, as listWindows numbers them; only the rows of
// the window are written. Its arguments are numbered after base; "" when an item cannot be
// written or the window is not an offset window.
func (n *Nested) cte(name string, base int) (string, []any) {
	l, w := n.list, n.window
	if w.After != nil || w.Before != nil || w.Backward || w.Limit < 1 {
		return "", nil
	}
	cols := projected(l.Columns, w.Columns)
	names, ok := selectNames(cols)
	if !ok {
		return "", nil
	}
	json := renderSQL(qualifyNames("page_w", names), w.Render, nil)
	if json == "" {
		return "", nil
	}
	order := orderSQL(l.order(), false)
	where := strings.Join(append(append([]string{}, l.Where...), n.parent+" IN (SELECT id FROM page_parent)"), " AND ")
	sql := fmt.Sprintf(`%s AS (SELECT page_w.page_parent_id AS parent,
		string_agg(%s, ',' ORDER BY page_w.page_row) FILTER (WHERE page_w.page_row > %d AND page_w.page_row <= %d) AS items,
		count(*) AS total
		FROM (SELECT %s, %s AS page_parent_id, row_number() OVER (PARTITION BY %s ORDER BY %s) AS page_row
			FROM %s WHERE %s) page_w
		GROUP BY page_w.page_parent_id)`,
		name, json, w.Offset(), w.Offset()+w.Limit, cols, n.parent, n.parent, order, l.From, where)
	return renumber(sql, base), l.Args
}

// page writes the relation's page object with fields, from the expressions of its items'
// JSON array and of its total; "" when a key cannot be written.
func (n *Nested) page(items, total string, fields []RenderField) string {
	return objectSQL(fields, func(f RenderField) string {
		switch f.Kind {
		case "items":
			return items
		case "totalCount":
			return total + "::text"
		case "maxPage":
			return fmt.Sprintf("((%s + %d) / %d)::text", total, n.window.Limit-1, n.window.Limit)
		case "object":
			return parenthesized(n.page(items, total, f.Fields))
		}
		return ""
	})
}

// renumber shifts every parameter reference ($3) of sql by base, so that a list's own
// arguments ($1…) follow those of the statement it is written into. Quoted text (a string
// literal, whose doubled quotes keep it going, or a quoted identifier) is copied as it is.
func renumber(sql string, base int) string {
	if base == 0 || !strings.Contains(sql, "$") {
		return sql
	}
	var b strings.Builder
	b.Grow(len(sql) + 16)
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(sql[i+1:], c)
			if end < 0 {
				b.WriteString(sql[i:])
				return b.String()
			}
			b.WriteString(sql[i : i+end+2])
			i += end + 1
		case c == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(sql[i+1 : j])
			b.WriteString("$" + strconv.Itoa(n+base))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// selectNames are the names of a select list's entries; ok is false when one has none.
func selectNames(list string) ([]string, bool) {
	entries := splitSelectList(list)
	names := make([]string, len(entries))
	for i, e := range entries {
		if names[i] = selectName(e); names[i] == "" {
			return nil, false
		}
	}
	return names, true
}

// qualifyNames is a select list of names read from the subquery alias.
func qualifyNames(alias string, names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = alias + "." + n
	}
	return strings.Join(out, ", ")
}

// nestedPage wraps a root list's page query, whose rows carry the columns the record's
// JSON reads and their order (page_pos), so that PostgreSQL writes each row's JSON with
// its nested relations, each read for the whole page in one pass (Nested.cte). The rows
// keep the columns storage reads back (alwaysRead), their cursor and the total. ok is
// false when a field cannot be written so.
func nestedPage(l listSQL, w Window, query string, args []any) (string, []any, bool) {
	keep, ok := selectNames(projected(l.Columns, []string{}))
	if !ok {
		return "", nil, false
	}
	return nestedSelect(l, w, query, args, qualifyNames("page_parent", keep)+", page_parent.page_cursor, page_parent.page_total, ")
}

// nestedSelect selects lead and the JSON of each row of query (the rows of list l with
// their page_pos) written with w.Render, relations included. The text is built once per
// shape (nestedTexts); the arguments are args and each nested list's, in field order.
func nestedSelect(l listSQL, w Window, query string, args []any, lead string) (string, []any, bool) {
	key := nestedKey(l, w, query, len(args), lead)
	if t, found := nestedTexts.get(key); found {
		return t.text, nestedArgs(append([]any{}, args...), w.Render), t.ok
	}
	text, all, ok := buildNestedSelect(l, w, query, args, lead)
	nestedTexts.put(key, memoText{text: text, ok: ok})
	return text, all, ok
}

// buildNestedSelect writes nestedSelect's statement.
func buildNestedSelect(l listSQL, w Window, query string, args []any, lead string) (string, []any, bool) {
	names, ok := selectNames(projected(l.Columns, w.Columns))
	if !ok || !slices.Contains(names, "id") {
		return "", nil, false
	}
	ctes := []string{"page_parent AS (" + query + ")"}
	var joins strings.Builder
	json := renderSQL(qualifyNames("page_parent", names), w.Render, func(f RenderField) string {
		name := fmt.Sprintf("page_rel_%d", len(ctes))
		cte, more := f.Nested.cte(name, len(args))
		page := f.Nested.page("'[' || coalesce("+name+".items, '') || ']'", "coalesce("+name+".total, 0)", f.Nested.Page)
		if cte == "" || page == "" {
			return ""
		}
		ctes = append(ctes, cte)
		args = append(args, more...)
		fmt.Fprintf(&joins, " LEFT JOIN %[1]s ON %[1]s.parent = page_parent.id", name)
		return page
	})
	if json == "" {
		return "", nil, false
	}
	return fmt.Sprintf(`WITH %s
		SELECT %s(%s) AS page_json
		FROM page_parent%s ORDER BY page_parent.page_pos`,
		strings.Join(ctes, ",\n\t"), lead, json, joins.String()), args, true
}

// RenderCustomer has PostgreSQL write the JSON of the live customer id of orgs with fields,
// relations included, in one statement: a portal's home. ok is false when a field cannot
// be written so; the JSON is nil when there is no such customer.
func RenderCustomer(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, fields []RenderField) ([]byte, bool, error) {
	l := customerList(orgs, CustomerListFilter{}, nil)
	l.Args = append(l.Args, id)
	where := strings.Join(append(l.Where, fmt.Sprintf("id = $%d", len(l.Args))), " AND ")
	query, args, ok := nestedSelect(l, Window{Render: fields},
		"SELECT "+l.Columns+", 1 AS page_pos FROM "+l.From+" WHERE "+where, l.Args, "")
	if !ok {
		return nil, false, nil
	}
	var out []byte
	if err := sqlx.GetContext(ctx, q, &out, query, args...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, true, nil
		}
		return nil, true, mapErr(err)
	}
	return out, true, nil
}
