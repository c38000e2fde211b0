package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// auditPurgeBatch bounds one purge statement, so a first purge of a large log holds no
// lock for long; the loop runs statements until one deletes less.
const auditPurgeBatch = 10_000

// auditLogPage lists the audit log of the caller's organizations, newest first: those whose
// role lets a user manage them (the guard narrows them), or an organization token's own. A
// user also reads the changes they made outside any organization, unless the filter names
// one.
func (r *Resolver) auditLogPage(ctx context.Context, f *model.AuditLogFilter, a listArgs) (*model.AuditEntryPage, error) {
	if f == nil {
		f = &model.AuditLogFilter{}
	}
	lf := storage.AuditFilter{ActorKinds: stringsOf(f.ActorKind), UserID: f.UserID, TokenID: f.TokenID,
		CustomerID: f.CustomerID, ObjectTypes: f.ObjectType, ObjectID: f.ObjectID, Operations: f.Operation,
		Actions: stringsOf(f.Action), Since: f.Since, Until: f.Until}
	orgs := organizations(ctx)
	if f.OrganizationID != nil {
		orgs = narrowedTo(orgs, *f.OrganizationID)
	} else if p := auth.FromContext(ctx); p.Kind == auth.KindUser {
		lf.PersonalOf = &p.UserID
	}
	p, w, err := rootWindow(ctx, a, nil, func(_ []storage.Sort, w storage.Window) (storage.Paged[*storage.AuditEntry], error) {
		return storage.ListAuditLog(ctx, r.db, orgs, lf, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.AuditEntryPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// narrowedTo is orgs cut to the one organization asked for; none when it is not among them.
func narrowedTo(orgs []uuid.UUID, want uuid.UUID) []uuid.UUID {
	for _, o := range orgs {
		if o == want {
			return []uuid.UUID{o}
		}
	}
	return []uuid.UUID{}
}

// stringsOf spells enum values as the strings the columns hold.
func stringsOf[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// auditActorOf is who made an entry's change, as GraphQL shows it.
func auditActorOf(e *storage.AuditEntry) *model.AuditActor {
	return &model.AuditActor{Kind: e.ActorKind, UserID: e.UserID, TokenID: e.TokenID, OauthClientID: e.OAuthClientID,
		CustomerID: e.CustomerID, MemberID: e.MemberID}
}

// auditChanges are an entry's changed fields, by name.
func auditChanges(e *storage.AuditEntry) ([]*storage.AuditChange, error) {
	list, err := e.ChangeList()
	if err != nil {
		return nil, err
	}
	out := make([]*storage.AuditChange, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out, nil
}

// PurgeAuditLog deletes the audit records older than the retention (none when it is 0,
// which keeps them forever); serve runs it hourly.
func (r *Resolver) PurgeAuditLog(ctx context.Context) (int, error) {
	if r.auditRetention <= 0 {
		return 0, nil
	}
	before := r.Now().Add(-r.auditRetention)
	total := 0
	for {
		n, err := storage.PurgeAuditLog(ctx, r.db, before, auditPurgeBatch)
		total += n
		if err != nil || n < auditPurgeBatch {
			return total, err
		}
	}
}
