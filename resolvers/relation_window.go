package resolvers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/storage"
)

// windowsFetch is a storage function that reads one window of a list per parent in one
// statement (the ...WindowsBy... functions), with the list's filter F.
type windowsFetch[T, F any] func(ctx context.Context, q sqlx.ExtContext, orgs, parents []uuid.UUID, f F,
	sorts []storage.Sort, w storage.Window) ([]storage.Paged[*T], error)

// relatedWindow is a paginated relation: obj's window of the list, read together with the
// windows of every parent of obj's level in one statement. name identifies the relation
// (Type.field); the arguments and the filter tell its loaders apart, so the same field
// asked twice with different arguments reads twice.
func relatedWindow[P, T, F any](ctx context.Context, db *sqlx.DB, name string, obj *P, key func(*P) uuid.UUID,
	a listArgs, columns map[string]string, f F, fetch windowsFetch[T, F]) (storage.Paged[*T], storage.Window, error) {
	w, sorts, err := a.windowAndSorts(columns)
	if err != nil {
		return storage.Paged[*T]{}, w, err
	}
	orgs := organizations(ctx)
	l, err := windowsOf(ctx, name, []any{a.key(), f}, &w, func(ctx context.Context, ids []uuid.UUID) ([]storage.Paged[*T], error) {
		return fetch(ctx, db, orgs, ids, f, sorts, w)
	})
	if err != nil {
		return storage.Paged[*T]{}, w, err
	}
	p, err := related(ctx, l, obj, key)
	if err != nil {
		return p, w, cursorErr(err, a)
	}
	return p, w, nil
}

// portalHolder tells whether the caller is a portal session and, for a member session, the
// member it acts as: a relation a session may follow shows it what its own portal list
// shows, a customer everything it bought and a member what it holds.
func portalHolder(ctx context.Context) (bool, *uuid.UUID) {
	p := auth.FromContext(ctx)
	if p.Kind != auth.KindCustomerSession && p.Kind != auth.KindMemberSession {
		return false, nil
	}
	return true, sessionMember(p)
}
