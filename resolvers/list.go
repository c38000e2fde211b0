package resolvers

import (
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

// pageAndSorts reads a sortable list's page, limit and sorting criteria in one place, so
// every sortable list rejects bad input with the same errors, the page's before the sorting's.
func pageAndSorts(page, limit *int, sorting []string, columns map[string]string) (storage.Page, []storage.Sort, error) {
	p, err := pageOf(page, limit)
	if err != nil {
		return p, nil, err
	}
	sorts, err := sortsOf(sorting, columns)
	return p, sorts, err
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
