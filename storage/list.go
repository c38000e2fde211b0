package storage

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/lib/pq"
)

// filters collects a query's WHERE conditions and their arguments (for listSQL, mostly),
// numbering each placeholder as its condition is added, so a function states only its
// filters and cannot get a $n wrong. Conditions keep the order they were added in.
type filters struct {
	where []string
	args  []any
}

// newFilters starts from the conditions every row of the list must meet and their
// arguments ($1… already numbered in where).
func newFilters(where []string, args ...any) *filters {
	return &filters{where: where, args: args}
}

// orgFilters starts a list's conditions with its organization scope (column among orgs)
// followed by more, which take no arguments. One organization, the usual caller, is compared
// with = rather than = ANY: PostgreSQL reads rows of an index on (organization_id, x) in x's
// order only for a single value, so a sorted first page then stops at its limit instead of
// sorting every row of the organization.
func orgFilters(column string, orgs []uuid.UUID, more ...string) *filters {
	f := &filters{}
	f.inOrgs(column, orgs)
	f.where = append(f.where, more...)
	return f
}

// inOrgs adds the organization scope as orgFilters words it, for a list whose conditions
// start otherwise. Unlike anyOf, no organizations matches no row.
func (f *filters) inOrgs(column string, orgs []uuid.UUID) {
	if len(orgs) == 1 {
		f.add(column+" = $%d", orgs[0])
	} else {
		f.add(column+" = ANY($%d)", pq.Array(orgs))
	}
}

// add appends a condition with one argument; cond holds %d where its placeholder number goes
// ("o.status = ANY($%d)").
func (f *filters) add(cond string, v any) {
	f.args = append(f.args, v)
	f.where = append(f.where, fmt.Sprintf(cond, len(f.args)))
}

// anyOf filters column to the given values, OR-ed. An empty list does not filter, as the
// list APIs treat an absent repeated query parameter.
func anyOf[T any](f *filters, column string, values []T) {
	switch len(values) {
	case 0:
	case 1: // as in orgFilters: an index on (column, x) then serves the order by x
		f.add(column+" = $%d", values[0])
	default:
		f.add(column+" = ANY($%d)", pq.Array(values))
	}
}

// ifSet adds cond with *v when v is set: the optional ids, flags and date bounds of a list,
// whose comparison (strict or inclusive) stays in cond.
func ifSet[T any](f *filters, cond string, v *T) {
	if v != nil {
		f.add(cond, *v)
	}
}

// contains adds cond (an ILIKE over one or more columns) with *q as a contains-pattern, its
// LIKE wildcards escaped so they match literally; a nil or empty query does not filter.
func (f *filters) contains(cond string, q *string) {
	if q != nil && *q != "" {
		f.add(cond, "%"+escapeLike(*q)+"%")
	}
}

// metadata adds upstream's metadata filters on column (see metadataWhere).
func (f *filters) metadata(column string, m map[string][]string) {
	f.where, f.args = metadataWhere(column, m, f.where, f.args)
}

// metadataWhere adds upstream's metadata filters: values of one key are OR-ed, keys are
// AND-ed, and stored values compare as text so metadata[n]=1 matches 1 and "1".
func metadataWhere(column string, filters map[string][]string, where []string, args []any) ([]string, []any) {
	keys := make([]string, 0, len(filters))
	for k := range filters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, k, pq.Array(filters[k]))
		where = append(where, fmt.Sprintf("%s->>$%d = ANY($%d)", column, len(args)-1, len(args)))
	}
	return where, args
}

// escapeLike escapes LIKE wildcards in user input.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// inKeyOrder returns one row per key, in key order, the zero value where a key has no row,
// as dataloader batch functions must.
func inKeyOrder[T any](keys []uuid.UUID, rows []T, key func(T) uuid.UUID) []T {
	idx := make(map[uuid.UUID]T, len(rows))
	for _, r := range rows {
		idx[key(r)] = r
	}
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = idx[k]
	}
	return out
}

// groupBy distributes rows over keys, keeping row order within each key.
func groupBy[T any](keys []uuid.UUID, rows []T, key func(T) uuid.UUID) [][]T {
	idx := make(map[uuid.UUID][]T, len(keys))
	for _, r := range rows {
		k := key(r)
		idx[k] = append(idx[k], r)
	}
	out := make([][]T, len(keys))
	for i, k := range keys {
		out[i] = idx[k]
		if out[i] == nil {
			out[i] = []T{}
		}
	}
	return out
}

// groupJoined is groupBy for join rows that carry their key beside an embedded record (a
// link table's key and the linked row): it returns a copy of each row's record, one slice
// per key in key order, so a loader hands out the record type alone.
func groupJoined[R, T any](keys []uuid.UUID, rows []*R, key func(*R) uuid.UUID, record func(*R) T) [][]*T {
	grouped := groupBy(keys, rows, key)
	out := make([][]*T, len(grouped))
	for i, g := range grouped {
		out[i] = make([]*T, len(g))
		for j, r := range g {
			v := record(r)
			out[i][j] = &v
		}
	}
	return out
}
