package resolvers

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/storage"
)

// UserCreated is what EnsureUser did: the user, whether it is new, and the membership it
// holds in the organization asked for (empty when none was).
type UserCreated struct {
	User *storage.User
	// OrganizationSlug and Role describe the membership; empty without one.
	OrganizationSlug, Role string
}

// EnsureUser is the operator's way to let a person in: it finds or creates the live user
// with this email, verified since the operator vouches for it, and with org (a slug or an
// id) makes them a member with role. Running it again with the same arguments changes
// nothing; asking for another role than a live membership holds is refused, because a role
// change may not leave an organization without an owner and that rule belongs to the member
// management use cases.
func (r *Resolver) EnsureUser(ctx context.Context, email, org, role string) (*UserCreated, error) {
	if err := checkEmail(email, "email"); err != nil {
		return nil, err
	}
	if org == "" && role != "" {
		return nil, BadRequest("A role needs an organization.")
	}
	if role == "" {
		role = "member"
	}
	if !auth.Role(role).Known() {
		return nil, Invalid("enum", "Input should be 'owner', 'admin', 'member' or 'finance'", role, "role")
	}
	var o *storage.Organization
	if org != "" {
		var err error
		if o, err = organizationByRef(ctx, r, org); err != nil {
			return nil, err
		}
	}
	out := &UserCreated{}
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		u, err := storage.EnsureVerifiedUser(ctx, tx, email)
		if err != nil || o == nil {
			out.User = u
			return err
		}
		got, err := storage.JoinOrganization(ctx, tx, u.ID, o.ID, role)
		if err == nil && got != role {
			err = &Error{Code: CodeBadRequest, Detail: fmt.Sprintf(
				"%s is already a member of %s with the role %s.", u.Email, o.Slug, got)}
		}
		out.User, out.OrganizationSlug, out.Role = u, o.Slug, got
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// organizationByRef finds a live organization by id or slug.
func organizationByRef(ctx context.Context, r *Resolver, ref string) (*storage.Organization, error) {
	o, err := storage.GetOrganizationByRef(ctx, r.db, ref)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, NotFound(fmt.Sprintf("No organization %q.", ref))
	}
	return o, err
}
