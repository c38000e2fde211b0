package resolvers

import (
	"errors"
	"fmt"
	"strings"

	"till/graph/model"
	"till/storage"
)

// maxLimit is upstream's API_PAGINATION_MAX_LIMIT: larger limits are clamped, not rejected.
const maxLimit = 100

// pageOf validates page and limit as upstream does (both > 0) and clamps limit.
func pageOf(page, limit *int) (storage.Page, error) {
	p := storage.Page{Page: 1, Limit: 10}
	if page != nil {
		if *page <= 0 {
			return p, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "greater_than",
				Loc: []any{"query", "page"}, Msg: "Input should be greater than 0", Input: *page}}}
		}
		p.Page = *page
	}
	if limit != nil {
		if *limit <= 0 {
			return p, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "greater_than",
				Loc: []any{"query", "limit"}, Msg: "Input should be greater than 0", Input: *limit}}}
		}
		p.Limit = min(*limit, maxLimit)
	}
	return p, nil
}

// pagination computes the page envelope; max_page is 0 when there are no rows.
func pagination(total int, p storage.Page) *model.Pagination {
	return &model.Pagination{TotalCount: total, MaxPage: (total + p.Limit - 1) / p.Limit}
}

// sortsOf maps sorting criteria ("-created_at") to whitelisted columns; an unknown one is
// the 422 upstream's service-level check gives.
func sortsOf(sorting []string, columns map[string]string) ([]storage.Sort, error) {
	out := make([]storage.Sort, 0, len(sorting))
	for _, s := range sorting {
		desc := strings.HasPrefix(s, "-")
		col, ok := columns[strings.TrimPrefix(s, "-")]
		if !ok {
			return nil, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "enum",
				Loc: []any{"query", "sorting"}, Msg: "Invalid sorting criterion.", Input: s}}}
		}
		out = append(out, storage.Sort{Column: col, Desc: desc})
	}
	return out, nil
}

// metadataOf turns GraphQL metadata filters into the storage map.
func metadataOf(filters []*model.MetadataFilter) map[string][]string {
	if len(filters) == 0 {
		return nil
	}
	m := make(map[string][]string, len(filters))
	for _, f := range filters {
		m[f.Key] = append(m[f.Key], f.Values...)
	}
	return m
}

// listArgs are the pagination arguments every GraphQL list takes: upstream's page and
// limit, or a cursor window (first/after forward, last/before backward), plus sorting.
type listArgs struct {
	page, limit, first, last *int
	after, before            *string
	sorting                  []string
}

// window reads a list's pagination arguments. page and limit behave as upstream's (limit
// clamped at 100, which only /v1 can send: GraphQL refuses it before running); first and
// last take 1 to 100 rows after or before a cursor and cannot be mixed with a page past
// the first.
func (a listArgs) window() (storage.Window, error) {
	p, err := pageOf(a.page, a.limit)
	if err != nil {
		return storage.Window{}, err
	}
	w := storage.Window{Page: p.Page, Limit: p.Limit}
	cursorArgs := a.first != nil || a.last != nil || a.after != nil || a.before != nil
	if !cursorArgs {
		return w, nil
	}
	switch {
	case p.Page > 1:
		return w, badArg("page", "page cannot be combined with first, last, after or before.", p.Page)
	case a.first != nil && a.last != nil:
		return w, badArg("last", "first and last cannot be combined.", *a.last)
	case a.after != nil && a.before != nil:
		return w, badArg("before", "after and before cannot be combined.", *a.before)
	}
	w.Page = 1
	for _, n := range []struct {
		name string
		v    *int
	}{{"first", a.first}, {"last", a.last}} {
		if n.v != nil {
			if *n.v <= 0 || *n.v > maxLimit {
				return w, badArg(n.name, fmt.Sprintf("Input should be between 1 and %d.", maxLimit), *n.v)
			}
			w.Limit = *n.v
		}
	}
	w.Backward = a.last != nil || a.before != nil
	for _, c := range []struct {
		name string
		v    *string
		dst  **storage.Cursor
	}{{"after", a.after, &w.After}, {"before", a.before, &w.Before}} {
		if c.v != nil {
			cur, err := storage.ParseCursor(*c.v)
			if err != nil {
				return w, badArg(c.name, "Invalid cursor.", *c.v)
			}
			*c.dst = cur
		}
	}
	return w, nil
}

// windowAndSorts reads the window and the sorting of a list, the page's errors first.
func (a listArgs) windowAndSorts(columns map[string]string) (storage.Window, []storage.Sort, error) {
	w, err := a.window()
	if err != nil {
		return w, nil, err
	}
	sorts, err := sortsOf(a.sorting, columns)
	return w, sorts, err
}

// key identifies the arguments, for the loader of a paginated relation.
func (a listArgs) key() any {
	return []any{a.page, a.limit, a.first, a.last, a.after, a.before, a.sorting}
}

// badArg refuses one pagination argument.
func badArg(name, msg string, input any) *Error {
	return &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "value_error",
		Loc: []any{"query", name}, Msg: msg, Input: input}}}
}

// cursorErr turns a cursor the list cannot use (another sorting's, or forged) into the
// client's error.
func cursorErr(err error, a listArgs) error {
	if errors.Is(err, storage.ErrInvalidCursor) {
		name, input := "after", a.after
		if a.before != nil {
			name, input = "before", a.before
		}
		return badArg(name, "Invalid cursor.", deref(input))
	}
	return err
}

// pageInfo describes a window for cursor pagination. An offset page has rows after it
// when the total says so and before it past the first page; a cursor window knows the
// side it reads toward and assumes rows on the side of its cursor.
func pageInfo[T any](p storage.Paged[T], w storage.Window) *storage.PageInfo {
	switch {
	case w.Backward:
		return storage.PageInfoOf(p, w.Before != nil, p.More)
	case w.After != nil:
		return storage.PageInfoOf(p, p.More, true)
	default:
		return storage.PageInfoOf(p, p.More, w.Page > 1)
	}
}

// paginationOf is upstream's envelope for a window: offset pages count in limits.
func paginationOf(total int, w storage.Window) *model.Pagination {
	return pagination(total, storage.Page{Page: w.Page, Limit: w.Limit})
}
