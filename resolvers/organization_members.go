package resolvers

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// Member management keeps three rules beside the permissions the schema declares:
// an organization that has an owner keeps one (the database refuses the change that would
// leave none, whoever makes it); only an owner makes, unmakes or removes an owner; and no
// one grants a role holding a permission they lack. The caller's role is read again under
// the organization's membership lock, so a caller demoted a moment ago cannot use the role
// their request started with.

// codeLastOwner refuses a change that would leave an organization without an owner, with
// the name of upstream's exception for the rule (which its endpoints answer as a 403).
const codeLastOwner = "CannotRemoveOrganizationOwner"

const (
	organizationMemberNotFound = "Member not found."
	lastOwnerDetail            = "An organization keeps at least one owner: make another member an owner first."
	ownerOnlyDetail            = "Only an owner may make, change or remove an owner."
)

// organizationMembersPage lists the members of one of the caller's organizations.
func (r *Resolver) organizationMembersPage(ctx context.Context, orgID *uuid.UUID, a listArgs) (*model.OrganizationMemberPage, error) {
	org, err := targetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	w, sorts, err := a.windowAndSorts(storage.OrganizationMemberSortColumns)
	if err != nil {
		return nil, err
	}
	p, err := storage.ListOrganizationMembers(ctx, r.db, org, sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	return &model.OrganizationMemberPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// changeOrganizationMemberRole gives a member another role.
func (r *Resolver) changeOrganizationMemberRole(ctx context.Context, in model.OrganizationMemberRoleInput) (*storage.OrganizationMember, error) {
	return r.manageMember(ctx, in.OrganizationID, in.UserID, func(tx *sqlx.Tx, caller auth.Role, m *storage.OrganizationMember) (*storage.OrganizationMember, error) {
		if m.Role == string(auth.RoleOwner) && caller != auth.RoleOwner {
			return nil, NotPermitted(ownerOnlyDetail)
		}
		if err := mayGrant(caller, auth.Role(in.Role)); err != nil {
			return nil, err
		}
		return storage.SetOrganizationMemberRole(ctx, tx, m.OrganizationID, m.UserID, string(in.Role))
	})
}

// removeOrganizationMember ends another user's membership.
func (r *Resolver) removeOrganizationMember(ctx context.Context, in model.OrganizationMemberRemoveInput) (*storage.OrganizationMember, error) {
	return r.manageMember(ctx, in.OrganizationID, in.UserID, func(tx *sqlx.Tx, caller auth.Role, m *storage.OrganizationMember) (*storage.OrganizationMember, error) {
		if m.Role == string(auth.RoleOwner) && caller != auth.RoleOwner {
			return nil, NotPermitted(ownerOnlyDetail)
		}
		return storage.RemoveOrganizationMember(ctx, tx, m.OrganizationID, m.UserID)
	})
}

// manageMember runs change on the member userID of the caller's organization orgID under
// the organization's membership lock, once the caller's current role still lets them manage
// members, and then makes every credential of the member's read the change.
func (r *Resolver) manageMember(ctx context.Context, orgID *uuid.UUID, userID uuid.UUID,
	change func(tx *sqlx.Tx, caller auth.Role, m *storage.OrganizationMember) (*storage.OrganizationMember, error)) (*storage.OrganizationMember, error) {
	org, err := targetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	var out *storage.OrganizationMember
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		caller, err := lockMemberships(ctx, tx, org, auth.PermissionMembersManage)
		if err != nil {
			return err
		}
		m, err := storage.LockOrganizationMember(ctx, tx, org, userID)
		if err != nil {
			return notFoundOr(err, organizationMemberNotFound)
		}
		out, err = change(tx, caller, m)
		return memberChangeErr(err)
	})
	if err != nil {
		return nil, err
	}
	membershipsChanged(ctx)
	return out, nil
}

// leaveOrganization ends the caller's own membership.
func (r *Resolver) leaveOrganization(ctx context.Context, orgID *uuid.UUID) (*storage.OrganizationMember, error) {
	org, err := targetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	m, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.OrganizationMember, error) {
		return storage.RemoveOrganizationMember(ctx, q, org, auth.FromContext(ctx).UserID)
	})
	if err != nil {
		return nil, memberChangeErr(notFoundOr(err, organizationMemberNotFound))
	}
	membershipsChanged(ctx)
	return m, nil
}

// lockMemberships takes the organization's membership lock and returns the caller's role
// as it is now, refused when it no longer grants need.
func lockMemberships(ctx context.Context, tx *sqlx.Tx, org uuid.UUID, need auth.Permission) (auth.Role, error) {
	role, err := storage.LockMemberships(ctx, tx, org, auth.FromContext(ctx).UserID)
	if err != nil {
		return "", notFoundOr(err, "Organization not found.")
	}
	if !auth.Role(role).Grants(need) {
		return "", permissionDenied(need)
	}
	return auth.Role(role), nil
}

// mayGrant refuses a caller giving a role they may not: owner by anyone but an owner, and
// any role holding a permission the caller lacks.
func mayGrant(caller, role auth.Role) error {
	switch {
	case role == auth.RoleOwner && caller != auth.RoleOwner:
		return NotPermitted(ownerOnlyDetail)
	case role.Exceeds(caller):
		return NotPermitted("A role holding permissions the caller lacks cannot be given by them.")
	}
	return nil
}

// memberChangeErr words the database's last-owner refusal.
func memberChangeErr(err error) error {
	if errors.Is(err, storage.ErrLastOwner) {
		return &Error{Code: codeLastOwner, Detail: lastOwnerDetail}
	}
	return err
}

// membershipsChanged makes this process forget the credentials it keeps, once a membership
// change has committed, so the next request of the member's tokens and sessions reads it;
// the change's notification does the same in every other process.
func membershipsChanged(ctx context.Context) {
	auth.TokensChanged(ctx)
	auth.SessionsChanged(ctx)
}

// organizationRole is a stored role as GraphQL shows it.
func organizationRole(role string) model.OrganizationRole {
	return model.OrganizationRole(role)
}
