package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Window selects a part of a sorted list: an offset page (Page, Limit) or a keyset window
// after or before a cursor. A keyset window is stable under inserts and deletes; an offset
// page is stable as long as the rows do not change, because every order ends with the id.
type Window struct {
	Page  int
	Limit int
	// After and Before are decoded cursors (at most one is set); Backward reads the Limit
	// rows that come last (before Before, or at the end of the list), returned in list order.
	After, Before *Cursor
	Backward      bool
	// Columns are the record columns the reader will use (db names); nil reads them all.
	// The record's other fields are left zero, so only a reader that uses nothing else may
	// name them (see projected).
	Columns []string
	// Render, when the record type embeds Rendered, has PostgreSQL write each record's JSON
	// with these keys instead of reading Columns (see renderSQL); when a field cannot be
	// written so, Columns are read.
	Render []RenderField
}

// Offset is the number of rows before the window: only offset pages skip rows.
func (w Window) Offset() int {
	if w.After != nil || w.Before != nil || w.Backward {
		return 0
	}
	return Page{Page: w.Page, Limit: w.Limit}.Offset()
}

// Paged is one window of a list: its rows, the cursor of each row, the count of the whole
// list (cursor bounds ignored, as upstream's total_count), and whether rows remain beyond
// the window in reading direction.
type Paged[T any] struct {
	Items   []T
	Cursors []Cursor
	Total   int
	More    bool
	// Prefetched are the relations each item was read with (listSQL.Extra), aligned with
	// Items; nil when the list carries none.
	Prefetched []Prefetched
}

// listSQL is a list query in parts, so the same filters can run as one page or as one
// window per parent in a single statement.
type listSQL struct {
	// Columns is the select list of the record; From the tables with their joins.
	Columns, From string
	// ID is the unique tiebreaker that ends every order ("o.id").
	ID string
	// Where and Args are the list's conditions, $n numbered from 1.
	Where []string
	Args  []any
	// Sorts are the whitelisted criteria, Default the order when none is asked for.
	Sorts   []Sort
	Default []Sort
	// Extra are select expressions read with each row beyond the record: the prefetch_*
	// relations it carries (see Prefetched), handed back in Paged.Prefetched.
	Extra []string
}

// selectList is what each row selects: the record's columns (narrowed to w.Columns and
// keep, see projected) or its JSON (w.Render), and the extra expressions.
func (l listSQL) selectList(w Window, keep ...string) string {
	cols := projected(l.Columns, w.Columns, keep...)
	if w.Render != nil && !hasNested(w.Render) {
		if json := renderSQL(l.Columns, w.Render, nil); json != "" {
			cols = projected(l.Columns, []string{}, keep...) + ", (" + json + ") AS page_json"
		}
	}
	if len(l.Extra) == 0 {
		return cols
	}
	return cols + ", " + strings.Join(l.Extra, ", ")
}

// order is the list's sort criteria with the id as the last, so that no two rows tie.
func (l listSQL) order() []Sort {
	sorts := l.Sorts
	if len(sorts) == 0 {
		sorts = l.Default
	}
	out := make([]Sort, 0, len(sorts)+1)
	desc := false
	for _, s := range sorts {
		if s.Column != l.ID {
			out = append(out, s)
			desc = s.Desc
		}
	}
	// The id follows the direction of the last criterion so that an index on (x, id)
	// serves both.
	return append(out, Sort{Column: l.ID, Desc: desc})
}

// cursorSQL is the expression whose value is a row's cursor: its sort values and id.
func cursorSQL(order []Sort) string {
	cols := make([]string, len(order))
	for i, s := range order {
		cols[i] = s.Column
	}
	return "jsonb_build_array(" + strings.Join(cols, ", ") + ")::text"
}

// orderSQL renders criteria, reversed when reading backward; PostgreSQL puts nulls last
// ascending and first descending, so reversing the direction reverses the nulls too.
func orderSQL(order []Sort, reverse bool) string {
	parts := make([]string, len(order))
	for i, s := range order {
		dir := "ASC"
		if s.Desc != reverse {
			dir = "DESC"
		}
		parts[i] = s.Column + " " + dir
	}
	return strings.Join(parts, ", ")
}

// listWindow reads one window of a list: the rows, their cursors and the total count, in one
// statement when the window has rows (the count rides along as an uncorrelated subquery,
// which PostgreSQL runs once). An empty window needs a second statement for the total only
// when it does not start the list: an empty first page means an empty list.
func listWindow[T any](ctx context.Context, q sqlx.ExtContext, l listSQL, w Window) (Paged[T], error) {
	w = renderable[T](w)
	if hasNested(w.Render) && len(l.Extra) > 0 {
		w.Render, w.Columns = nil, nil
	}
	out := Paged[T]{Items: []T{}}
	where := strings.Join(l.Where, " AND ")
	count := "SELECT count(*) FROM " + l.From + " WHERE " + where
	order := l.order()
	args := append([]any{}, l.Args...)
	reverse := w.Backward || w.Before != nil
	bounded := where
	for _, c := range []*Cursor{w.After, w.Before} {
		if c != nil {
			cond, cargs, err := c.condition(order, reverse, len(args))
			if err != nil {
				return out, err
			}
			bounded += " AND " + cond
			args = append(args, cargs...)
		}
	}
	args = append(args, w.Limit+1, w.Offset())
	sel := l.selectList(w)
	if hasNested(w.Render) {
		sel = projected(l.Columns, w.Columns) + ", row_number() OVER (ORDER BY " + orderSQL(order, reverse) + ") AS page_pos"
	}
	query := fmt.Sprintf("SELECT %s, %s AS page_cursor, (%s) AS page_total FROM %s WHERE %s ORDER BY %s LIMIT $%d OFFSET $%d",
		sel, cursorSQL(order), count, l.From, bounded, orderSQL(order, reverse), len(args)-1, len(args))
	if hasNested(w.Render) {
		var ok bool
		if query, args, ok = nestedPage(l, w, query, args); !ok {
			w.Render, w.Columns = nil, nil
			return listWindow[T](ctx, q, l, w)
		}
	}
	rows, err := scanPaged[T](ctx, q, query, args)
	if err != nil && hasNested(w.Render) && ctx.Err() == nil {
		// Read as columns, a value that cannot be written fails only the field that shows it.
		w.Render, w.Columns = nil, nil
		return listWindow[T](ctx, q, l, w)
	}
	if err != nil {
		return out, cursorErr(err, w)
	}
	if len(rows) > 0 {
		out.Total = rows[0].total
	} else if w.After != nil || w.Before != nil || w.Offset() > 0 {
		if err := sqlx.GetContext(ctx, q, &out.Total, count, l.Args...); err != nil {
			return out, mapErr(err)
		}
	}
	fillPaged(&out, rows, w.Limit, reverse, order)
	return out, nil
}

// listWindows reads one window per parent in one statement: parent is the column that
// links a row to its parent (o.customer_id), parents the keys. The result is in key order,
// one window per key, each with its own total. Windows are numbered by a running count over
// the rows the cursor admits, so the total still counts every row of the parent.
func listWindows[T any](ctx context.Context, q sqlx.ExtContext, l listSQL, parent string, parents []uuid.UUID, w Window, keyOf func(T) uuid.UUID) ([]Paged[T], error) {
	w = renderable[T](w)
	if hasNested(w.Render) { // relations are written inside the records of a root list only
		w.Render, w.Columns = nil, nil
	}
	order := l.order()
	reverse := w.Backward || w.Before != nil
	args := append(append([]any{}, l.Args...), pq.Array(parents))
	where := append(append([]string{}, l.Where...), fmt.Sprintf("%s = ANY($%d)", parent, len(args)))
	admitted := "true"
	for _, c := range []*Cursor{w.After, w.Before} {
		if c != nil {
			cond, cargs, err := c.condition(order, reverse, len(args))
			if err != nil {
				return nil, err
			}
			admitted = cond
			args = append(args, cargs...)
		}
	}
	args = append(args, w.Offset(), w.Limit+1)
	// A parent whose window is empty still sends its first row (page_in false), so that its
	// total is known. Without a cursor every row is admitted, and one numbering in list order
	// does for both (PostgreSQL sorts each parent's rows once instead of twice).
	query := fmt.Sprintf(`SELECT * FROM (SELECT *, page_admitted AND page_row > $%d AND page_row <= $%d + $%d AS page_in
		FROM (SELECT %s, %s AS page_cursor,
		count(*) OVER (PARTITION BY %s) AS page_total,
		count(*) FILTER (WHERE %s) OVER (PARTITION BY %s ORDER BY %s ROWS UNBOUNDED PRECEDING) AS page_row,
		row_number() OVER (PARTITION BY %s) AS page_any,
		(%s) AS page_admitted
		FROM %s WHERE %s) counted) page
		WHERE page_in OR page_any = 1 ORDER BY page_row`,
		len(args)-1, len(args)-1, len(args),
		l.selectList(w, selectName(parent)), cursorSQL(order), parent, admitted, parent, orderSQL(order, reverse), parent, admitted,
		l.From, strings.Join(where, " AND "))
	if admitted == "true" {
		query = fmt.Sprintf(`SELECT * FROM (SELECT *, page_row > $%d AND page_row <= $%d + $%d AS page_in
		FROM (SELECT %s, %s AS page_cursor,
		count(*) OVER (PARTITION BY %s) AS page_total,
		row_number() OVER (PARTITION BY %s ORDER BY %s) AS page_row
		FROM %s WHERE %s) counted) page
		WHERE page_in OR page_row = 1 ORDER BY page_row`,
			len(args)-1, len(args)-1, len(args),
			l.selectList(w, selectName(parent)), cursorSQL(order), parent, parent, orderSQL(order, reverse),
			l.From, strings.Join(where, " AND "))
	}
	rows, err := scanPaged[T](ctx, q, query, args)
	if err != nil {
		return nil, cursorErr(err, w)
	}
	byParent := make(map[uuid.UUID][]pagedRow[T], len(parents))
	totals := make(map[uuid.UUID]int, len(parents))
	for _, r := range rows {
		k := keyOf(r.item)
		totals[k] = r.total
		if r.in {
			byParent[k] = append(byParent[k], r)
		}
	}
	out := make([]Paged[T], len(parents))
	for i, p := range parents {
		out[i] = Paged[T]{Items: []T{}, Total: totals[p]}
		fillPaged(&out[i], byParent[p], w.Limit, reverse, order)
	}
	return out, nil
}

// cursorErr reports a value of a cursor that PostgreSQL cannot read as its column's type
// (a data exception, class 22) as the invalid cursor it is.
func cursorErr(err error, w Window) error {
	var pqErr *pq.Error
	if (w.After != nil || w.Before != nil) && errors.As(err, &pqErr) && strings.HasPrefix(string(pqErr.Code), "22") {
		return ErrInvalidCursor
	}
	return mapErr(err)
}

// fillPaged keeps at most limit rows (the one past them only tells that more follow) and
// puts backward windows back in list order.
func fillPaged[T any](out *Paged[T], rows []pagedRow[T], limit int, reverse bool, order []Sort) {
	sig := orderSignature(order)
	if len(rows) > limit {
		out.More, rows = true, rows[:limit]
	}
	out.Items = make([]T, len(rows))
	out.Cursors = make([]Cursor, len(rows))
	if len(rows) > 0 && rows[0].prefetched != nil {
		out.Prefetched = make([]Prefetched, len(rows))
	}
	for i, r := range rows {
		j := i
		if reverse {
			j = len(rows) - 1 - i
		}
		out.Items[j], out.Cursors[j] = r.item, Cursor{order: sig, key: r.cursor}
		if out.Prefetched != nil {
			out.Prefetched[j] = r.prefetched
		}
	}
}
