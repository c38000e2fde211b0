package resolvers

import (
	"context"

	"till/storage"
)

// rootWindow reads one window of a root list: it checks the arguments (the page's errors
// before the sorting's), reads the window, and notes its items as read together so that their
// relations load in one statement each. columns is nil for a list without sorting.
func rootWindow[T any](ctx context.Context, a listArgs, columns map[string]string,
	read func(sorts []storage.Sort, w storage.Window) (storage.Paged[*T], error)) (storage.Paged[*T], storage.Window, error) {
	w, sorts, err := a.windowAndSorts(columns)
	if err != nil {
		return storage.Paged[*T]{}, w, err
	}
	w = selectionWindow[T](ctx, w)
	p, err := read(sorts, w)
	if err != nil {
		return p, w, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return p, w, nil
}
