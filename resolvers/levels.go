package resolvers

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/graph-gophers/dataloader/v7"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// levels remembers, for one operation, which objects were read together: the items of a
// list, or every record one batch statement returned. The objects read together are the
// ones the executor resolves side by side at the next depth of the query (a page's orders,
// the customers of those orders), so when the first of them asks for a relation, the keys
// of all of them are known at once: the loader is handed the whole level and dispatched
// right away. No resolver waits on a timer, and a nested query costs one statement per
// relation and depth, whatever its page sizes.
type levels struct {
	mu sync.Mutex
	of map[any]*level
}

// level is a set of objects read together, and the loaders already dispatched for it.
type level struct {
	members []any
	mu      sync.Mutex
	done    map[any]*sync.Once
}

// record notes that items were read together. Each object is a pointer that the
// operation's resolvers receive back as their parent, so it identifies its level.
func record[T any](ctx context.Context, items []*T) {
	ls := loaders(ctx).levels
	if ls == nil || len(items) < 2 {
		return
	}
	lv := &level{members: make([]any, 0, len(items)), done: map[any]*sync.Once{}}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, it := range items {
		if it == nil {
			continue
		}
		if _, seen := ls.of[it]; !seen {
			lv.members = append(lv.members, it)
			ls.of[it] = lv
		}
	}
}

// siblings returns the objects read together with obj (obj alone when none were).
func siblings[T any](ctx context.Context, obj *T) []*T {
	ls := loaders(ctx).levels
	ls.mu.Lock()
	lv := ls.of[any(obj)]
	ls.mu.Unlock()
	if lv == nil {
		return []*T{obj}
	}
	out := make([]*T, 0, len(lv.members))
	for _, m := range lv.members {
		if t, ok := m.(*T); ok {
			out = append(out, t)
		}
	}
	return out
}

// once runs f once per level and loader: the first sibling to ask enqueues the level's
// keys, the others wait until it has, so that their own keys are already in the batch.
func (ls *levels) once(obj any, loader any, f func()) {
	ls.mu.Lock()
	lv := ls.of[obj]
	ls.mu.Unlock()
	if lv == nil {
		f()
		return
	}
	lv.mu.Lock()
	o := lv.done[loader]
	if o == nil {
		o = &sync.Once{}
		lv.done[loader] = o
	}
	lv.mu.Unlock()
	o.Do(f)
}

// loader is a dataloader that is never left waiting: its only ways to load enqueue and
// flush in one step, so no batch depends on a timer.
type loader[V any] struct {
	dl *dataloader.Loader[uuid.UUID, V]
	// mu serialises enqueue-and-flush (one per operation, shared by its loaders), so that
	// two levels never share or split a batch and the statement count is the same from run
	// to run.
	mu *sync.Mutex
}

// key loads one key on its own: for reads that are not a relation of a listed object.
func (l *loader[V]) key(ctx context.Context, k uuid.UUID) (V, error) {
	l.mu.Lock()
	thunk := l.dl.Load(ctx, k)
	l.dl.Flush()
	l.mu.Unlock()
	return thunk()
}

// prime hands the loader a value read elsewhere, so that rendering it costs no statement.
// It takes the lock loads take, so that it never interleaves with a load of the same key
// (the dataloader's Prime checks and sets its cache in two steps).
func (l *loader[V]) prime(ctx context.Context, k uuid.UUID, v V) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dl.Prime(ctx, k, v)
}

// related is how every relation resolver loads: it enqueues the keys of obj's whole level
// (once per level and loader), then loads its own key and flushes, so the batch goes out as
// soon as the level is known.
func related[P any, V any](ctx context.Context, l *loader[V], obj *P, key func(*P) uuid.UUID) (V, error) {
	return relatedOpt(ctx, l, obj, func(p *P) *uuid.UUID { k := key(p); return &k })
}

// relatedOpt is related for an optional relation: a nil key is no object and no error.
func relatedOpt[P any, V any](ctx context.Context, l *loader[V], obj *P, key func(*P) *uuid.UUID) (V, error) {
	var zero V
	own := key(obj)
	if own == nil {
		return zero, nil
	}
	loaders(ctx).levels.once(any(obj), l, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, s := range siblings(ctx, obj) {
			if k := key(s); k != nil {
				l.dl.Load(ctx, *k)
			}
		}
		l.dl.Flush()
	})
	return l.key(ctx, *own)
}

// windowsOf returns the operation's loader of one paginated relation under one set of
// arguments (the same field may appear with different arguments at several places of a
// query). Its batch reads a window per parent in one statement, and every row it returns
// is of the next level of the query. It narrows w, the window fetch reads, to the columns
// the field's items need, or to their JSON (itemPlan); those are part of the loader's identity, so the
// same relation selected with other fields elsewhere in the query reads its own records.
func windowsOf[T any](ctx context.Context, name string, args any, w *storage.Window,
	fetch func(context.Context, []uuid.UUID) ([]storage.Paged[*T], error)) (*loader[storage.Paged[*T]], error) {
	ld := loaders(ctx)
	plan, err := planWindow[T](ctx, ld, name, args)
	if err != nil {
		return nil, err
	}
	w.Columns, w.Render = plan.columns, plan.render
	key := plan.key
	if l, ok := ld.windows.Load(key); ok {
		return l.(*loader[storage.Paged[*T]]), nil
	}
	l := &loader[storage.Paged[*T]]{mu: ld.mu, dl: dataloader.NewBatchedLoader(
		func(ctx context.Context, keys []uuid.UUID) []*dataloader.Result[storage.Paged[*T]] {
			pages, err := fetch(ctx, keys)
			out := make([]*dataloader.Result[storage.Paged[*T]], len(keys))
			var all []*T
			for i := range keys {
				if err != nil {
					out[i] = &dataloader.Result[storage.Paged[*T]]{Error: err}
					continue
				}
				out[i] = &dataloader.Result[storage.Paged[*T]]{Data: pages[i]}
				all = append(all, pages[i].Items...)
			}
			record(ctx, all)
			return out
		}, dataloader.WithWait[uuid.UUID, storage.Paged[*T]](noWait))}
	actual, _ := ld.windows.LoadOrStore(key, l)
	return actual.(*loader[storage.Paged[*T]]), nil
}

// windowField is one paginated relation at one place of the response: every parent of a
// level resolves it with the same arguments and selection. The place is the path of
// response names without list indices; the field's AST node would not do, since a field
// of a fragment spread at two places is one node whose selection merges with different
// siblings at each.
type windowField struct {
	name, place string
}

// windowPlan is what windowsOf works out once per windowField: the loader's key (name,
// arguments, columns and rendering) and what the items' records are read as (itemPlan).
type windowPlan struct {
	key     string
	columns []string
	render  []storage.RenderField
}

// planWindow returns the plan of the relation being resolved, made by its first parent:
// the siblings of a page share it rather than each encoding the arguments again.
func planWindow[T any](ctx context.Context, ld *Loaders, name string, args any) (windowPlan, error) {
	var at windowField
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Field.Field != nil {
		at = windowField{name: name, place: placeOf(fc)}
		if p, ok := ld.plans.Load(at); ok {
			return p.(windowPlan), nil
		}
	}
	cols, render := itemPlan[*T](ctx, false)
	key, err := json.Marshal([]any{args, cols, render})
	if err != nil {
		return windowPlan{}, err
	}
	p := windowPlan{key: name + string(key), columns: cols, render: render}
	if at.place != "" {
		ld.plans.Store(at, p)
	}
	return p, nil
}

// placeOf is the response path of the field being resolved, without list indices:
// "customers.items.orders" for every customer's orders of a page.
func placeOf(fc *graphql.FieldContext) string {
	var names []string
	for f := fc; f != nil; f = f.Parent {
		if f.Field.Field != nil {
			names = append(names, f.Field.Alias)
		}
	}
	slices.Reverse(names)
	return strings.Join(names, ".")
}

// oneOf returns the operation's loader named name of one record per key, made on first
// use: relations add their loaders here without a field in Loaders.
func oneOf[T any](ctx context.Context, db *sqlx.DB, name string,
	fetch func(context.Context, sqlx.ExtContext, []uuid.UUID) ([]*T, error), missing string) *loader[*T] {
	ld := loaders(ctx)
	if l, ok := ld.windows.Load(name); ok {
		return l.(*loader[*T])
	}
	l, _ := ld.windows.LoadOrStore(name, one(db, ld.mu, fetch, missing))
	return l.(*loader[*T])
}

// manyOf is oneOf for a relation of many records per key.
func manyOf[T any](ctx context.Context, db *sqlx.DB, name string,
	fetch func(context.Context, sqlx.ExtContext, []uuid.UUID) ([][]*T, error)) *loader[[]*T] {
	ld := loaders(ctx)
	if l, ok := ld.windows.Load(name); ok {
		return l.(*loader[[]*T])
	}
	l, _ := ld.windows.LoadOrStore(name, many(db, ld.mu, fetch))
	return l.(*loader[[]*T])
}
