package storage

import (
	"context"
	"fmt"
	"github.com/google/uuid"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// listPage runs a filtered, sorted, paginated select plus its total count. The count ignores
// page and limit, as upstream's pagination.total_count does.
func listPage[T any](ctx context.Context, q sqlx.ExtContext, selectFrom string, where []string, args []any, order string, p Page) ([]T, int, error) {
	query := selectFrom + " WHERE " + strings.Join(where, " AND ")
	var total int
	if err := sqlx.GetContext(ctx, q, &total, "SELECT count(*) FROM ("+query+") x", args...); err != nil {
		return nil, 0, mapErr(err)
	}
	out := []T{}
	if total == 0 || p.Offset() >= total {
		return out, total, nil
	}
	args = append(args, p.Limit, p.Offset())
	rowsSQL := fmt.Sprintf("%s%s LIMIT $%d OFFSET $%d", query, order, len(args)-1, len(args))
	if err := sqlx.SelectContext(ctx, q, &out, rowsSQL, args...); err != nil {
		return nil, 0, mapErr(err)
	}
	return out, total, nil
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
