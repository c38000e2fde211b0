package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/storage"
)

// organization returns the token's organization, or for user tokens the one asked for.
func (r *Resolver) organization(ctx context.Context, id *uuid.UUID) (*storage.Organization, error) {
	orgs := organizations(ctx)
	target := uuid.Nil
	switch {
	case id != nil:
		for _, o := range orgs {
			if o == *id {
				target = o
			}
		}
	case len(orgs) == 1:
		target = orgs[0]
	}
	if target == uuid.Nil {
		return nil, NotFound("")
	}
	o, err := storage.GetOrganization(ctx, r.db, target)
	return o, notFoundOr(err, "")
}
