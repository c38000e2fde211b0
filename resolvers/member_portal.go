package resolvers

import (
	"context"

	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// The team management of the portal (upstream's customer_portal/endpoints/member.py): the
// owner and billing managers of a team customer list, add, change and remove its members.
// @teamManager admits only their member sessions; the rules below are upstream's.

// teamOnly is upstream's refusal of team management for an individual customer.
const teamOnly = "Member management is only available for team customers. " +
	"Purchase a seat-based product to enable team features."

// portalMembers is Me.members: the team's live members, oldest first unless sorted otherwise.
func (r *Resolver) portalMembers(ctx context.Context, a listArgs) (*model.MemberPage, error) {
	c, err := r.portalCustomer(ctx)
	if err != nil {
		return nil, err
	}
	if c.Type != storage.CustomerTypeTeam {
		return nil, NotPermitted(teamOnly)
	}
	p, w, err := rootWindow(ctx, a, memberSorts, func(sorts []storage.Sort, w storage.Window) (storage.Paged[*storage.Member], error) {
		if len(sorts) == 0 {
			sorts = []storage.Sort{{Column: memberSorts["created_at"]}}
		}
		return storage.ListMembers(ctx, r.db, organizations(ctx), storage.MemberListFilter{CustomerID: &c.ID}, sorts, w)
	})
	if err != nil {
		return nil, err
	}
	return memberPageOf(p, w), nil
}

// portalAddMember adds a member to the team, or returns the member that has the email. As
// upstream, the portal's addition announces nothing.
func (r *Resolver) portalAddMember(ctx context.Context, in model.PortalMemberAddInput) (*storage.Member, error) {
	email, err := memberEmail(in.Email, "input", "email")
	if err != nil {
		return nil, err
	}
	var out *storage.Member
	err = r.inTeam(ctx, func(tx *sqlx.Tx, c *storage.Customer, _ *storage.Member) error {
		role := storage.MemberRoleMember
		if in.Role != nil {
			role = *in.Role
		}
		if role == storage.MemberRoleOwner {
			return Invalid("value_error", "Cannot add a member as owner. There must be exactly one owner.", string(role), "input", "role")
		}
		name := in.Name
		if name != nil && *name == "" {
			name = nil
		}
		out, err = r.addMember(ctx, tx, c, storage.MemberWrite{Email: email, Name: name, Role: role}, false)
		return err
	})
	return out, err
}

// portalUpdateMember changes a member of the team: nobody changes their own role, and only
// the owner hands the ownership over.
func (r *Resolver) portalUpdateMember(ctx context.Context, in model.PortalMemberUpdateInput) (*storage.Member, error) {
	name, err := memberName(in.Name, "input", "name")
	if err != nil {
		return nil, err
	}
	var out *storage.Member
	err = r.inTeam(ctx, func(tx *sqlx.Tx, c *storage.Customer, caller *storage.Member) error {
		m, err := storage.GetMember(ctx, tx, c.ID, in.ID)
		if err != nil {
			return notFoundOr(err, memberNotFound)
		}
		if in.Role != nil && *in.Role != m.Role && m.ID == caller.ID {
			return Invalid("value_error", "You cannot modify your own role.", in.ID.String(), "input", "id")
		}
		out, err = r.changeMember(ctx, tx, c, m, memberChange{Name: name, Role: in.Role}, caller)
		return err
	})
	return out, err
}

// portalRemoveMember removes a member of the team other than oneself and the owner.
func (r *Resolver) portalRemoveMember(ctx context.Context, in model.PortalMemberRemoveInput) (*storage.Member, error) {
	var out *storage.Member
	err := r.inTeam(ctx, func(tx *sqlx.Tx, c *storage.Customer, caller *storage.Member) error {
		m, err := storage.GetMember(ctx, tx, c.ID, in.ID)
		if err != nil {
			return notFoundOr(err, memberNotFound)
		}
		if m.ID == caller.ID {
			return Invalid("value_error", "You cannot remove yourself from the team.", in.ID.String(), "input", "id")
		}
		out, err = r.removeMember(ctx, tx, m)
		return err
	})
	return out, err
}

// inTeam runs fn in a transaction with the session's customer locked and its member read
// under that lock (a member removed meanwhile is refused as its session is), after
// upstream's check that the customer is a team.
func (r *Resolver) inTeam(ctx context.Context, fn func(tx *sqlx.Tx, c *storage.Customer, caller *storage.Member) error) error {
	p := auth.FromContext(ctx)
	return storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		c, err := storage.LockCustomer(ctx, tx, organizations(ctx), p.CustomerID)
		if err != nil {
			return notFoundOr(err, "")
		}
		if c.Type != storage.CustomerTypeTeam {
			return NotPermitted(teamOnly)
		}
		caller, err := storage.GetMember(ctx, tx, c.ID, p.MemberID)
		if err != nil {
			return notFoundOr(err, "")
		}
		return fn(tx, c, caller)
	})
}
