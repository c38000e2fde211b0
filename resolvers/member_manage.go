package resolvers

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// memberNameMax is upstream's MemberNameInput limit.
const memberNameMax = 256

// Upstream's member rules (server/polar/member/service.py), with its messages.
const (
	individualHasOwnerOnly = "Individual customers can only have one member (the owner). " +
		"Upgrade to a team customer to add more members."
	onlyOwnerTransfers    = "Only the owner can transfer ownership."
	oneOwnerAlways        = "Cannot change role. Customer must have exactly one owner."
	ownerCannotLeave      = "Cannot delete the only owner. Transfer ownership first."
	individualOwnerEmail  = "Cannot change the email of an individual customer's owner. Update the customer's email instead."
	memberEmailTaken      = "A member with this email already exists for this customer."
	memberExternalIDTaken = "A member with this external ID already exists for this customer."
)

// memberName reads an optional name as upstream's MemberNameInput: empty is none, at most
// 256 characters.
func memberName(name *string, loc ...any) (*string, error) {
	if name == nil || *name == "" {
		return nil, nil
	}
	if n := utf8.RuneCountInString(*name); n > memberNameMax {
		return nil, &Error{Code: CodeValidation, Errors: []FieldError{{Type: "string_too_long", Loc: loc,
			Msg: "String should have at most 256 characters", Input: *name, Ctx: map[string]any{"max_length": memberNameMax}}}}
	}
	return name, nil
}

// memberExternalIDMax bounds a member's external id: the customer's members are unique by
// it, and an index holds only so much.
const memberExternalIDMax = 500

// memberExternalID reads an optional external id: empty is none, at most 500 characters.
func memberExternalID(id *string, loc ...any) (*string, error) {
	if id == nil || *id == "" {
		return nil, nil
	}
	if utf8.RuneCountInString(*id) > memberExternalIDMax {
		return nil, &Error{Code: CodeValidation, Errors: []FieldError{{Type: "string_too_long", Loc: loc,
			Msg: "String should have at most 500 characters", Input: *id, Ctx: map[string]any{"max_length": memberExternalIDMax}}}}
	}
	return id, nil
}

// memberEmail reads an email as upstream does: a valid address, stripped.
func memberEmail(email string, loc ...any) (string, error) {
	email = strings.TrimSpace(email)
	return email, checkEmail(email, loc...)
}

// createMember is createMember: the organization adds a member to one of its customers.
// Upstream's seat_based_pricing_enabled or member_model_enabled flag is not asked for: every
// customer has the member model here, as its owner shows.
func (r *Resolver) createMember(ctx context.Context, in model.MemberCreateInput) (*storage.Member, error) {
	email, err := memberEmail(in.Email, "input", "email")
	if err != nil {
		return nil, err
	}
	name, err := memberName(in.Name, "input", "name")
	if err != nil {
		return nil, err
	}
	role := storage.MemberRoleMember
	if in.Role != nil {
		role = *in.Role
	}
	if role == storage.MemberRoleOwner { // /v1 refuses it as upstream's body does, GraphQL callers here
		return nil, Invalid("value_error", "An owner is made with its customer or by transferring the ownership: add a member or a billing_manager.",
			string(role), "input", "role")
	}
	externalID, err := memberExternalID(in.ExternalID, "input", "externalId")
	if err != nil {
		return nil, err
	}
	var out *storage.Member
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		id, err := customerIDByRef(ctx, tx, in.CustomerID, in.ExternalCustomerID, customerNotFound, "input")
		if err != nil {
			return err
		}
		c, err := storage.LockCustomer(ctx, tx, organizations(ctx), id)
		if err != nil {
			return notFoundOr(err, customerNotFound)
		}
		out, err = r.addMember(ctx, tx, c, storage.MemberWrite{Email: email, Name: name, ExternalID: externalID, Role: role}, true)
		return err
	})
	return out, err
}

// addMember adds a member to a locked customer, or returns the live member that already has
// the email. Individual customers have their owner only. announce emits member.created, as
// the organization's creation does and the portal's does not (upstream).
func (r *Resolver) addMember(ctx context.Context, tx *sqlx.Tx, c *storage.Customer, w storage.MemberWrite, announce bool) (*storage.Member, error) {
	if c.Type == storage.CustomerTypeIndividual {
		members, err := storage.CustomerMembers(ctx, tx, c.ID)
		if err != nil {
			return nil, err
		}
		if len(members) > 0 {
			return nil, NotPermitted(individualHasOwnerOnly)
		}
	}
	if m, err := storage.GetMemberByEmail(ctx, tx, c.ID, w.Email); !errors.Is(err, storage.ErrNotFound) {
		return m, err
	}
	w.OrganizationID, w.CustomerID = c.OrganizationID, c.ID
	m, err := storage.CreateMember(ctx, tx, w)
	var ce *storage.ConflictError
	if errors.As(err, &ce) && strings.Contains(ce.Constraint, "external_id") {
		return nil, Invalid("value_error", memberExternalIDTaken, w.ExternalID, "input", "externalId")
	}
	if err != nil || !announce {
		return m, err
	}
	return m, r.emit(ctx, tx, m.OrganizationID, "member.created", m.ID)
}

// createOwnerMember makes a new customer's owner in the transaction that creates it, from the
// given owner or else the customer's email, name and external id, dated as the customer
// (member.created). A customer with no email and no owner has nobody to make owner.
func (r *Resolver) createOwnerMember(ctx context.Context, tx *sqlx.Tx, c *storage.Customer, owner *model.MemberOwnerInput) error {
	w := storage.MemberWrite{OrganizationID: c.OrganizationID, CustomerID: c.ID, Name: c.Name, ExternalID: c.ExternalID,
		Role: storage.MemberRoleOwner, CreatedAt: &c.CreatedAt}
	if c.Email != nil {
		w.Email = strings.TrimSpace(*c.Email)
	}
	if owner != nil {
		w.Email = strings.TrimSpace(owner.Email)
		if owner.Name != nil && *owner.Name != "" {
			w.Name = owner.Name
		}
		if id, _ := memberExternalID(owner.ExternalID); id != nil { // checked with the input
			w.ExternalID = id
		}
	}
	if w.Email == "" {
		return Invalid("value_error", "An email is required to create an owner member.", nil, "input", "email")
	}
	m, err := storage.CreateMember(ctx, tx, w)
	if err != nil {
		return err
	}
	return r.emit(ctx, tx, m.OrganizationID, "member.created", m.ID)
}

// syncOwnerEmail gives an individual customer's owner the customer's new email, as upstream
// keeps them equal: the portal finds the owner by the customer's email. Team members have
// emails of their own and are left alone.
func syncOwnerEmail(ctx context.Context, tx *sqlx.Tx, c *storage.Customer) error {
	if c.Type != storage.CustomerTypeIndividual || c.Email == nil {
		return nil
	}
	_, err := storage.SyncOwnerEmail(ctx, tx, c.ID, *c.Email)
	if errors.Is(err, storage.ErrConflict) {
		return Invalid("value_error", memberEmailTaken, *c.Email, "input", "email")
	}
	return err
}

// updateMember is updateMember: the organization changes a member, and may hand the
// ownership over.
func (r *Resolver) updateMember(ctx context.Context, in model.MemberUpdateInput) (*storage.Member, error) {
	ch := memberChange{Role: in.Role, Email: in.Email}
	var err error
	if ch.Name, err = memberName(in.Name, "input", "name"); err != nil {
		return nil, err
	}
	if ch.Email != nil {
		email, err := memberEmail(*ch.Email, "input", "email")
		if err != nil {
			return nil, err
		}
		ch.Email = &email
	}
	var out *storage.Member
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		m, err := memberByRef(ctx, tx, in.Member, "input", "member")
		if err != nil {
			return err
		}
		c, m, err := lockedMember(ctx, tx, m)
		if err != nil {
			return err
		}
		out, err = r.changeMember(ctx, tx, c, m, ch, nil)
		return err
	})
	return out, err
}

// memberChange is what an update asks of a member; nil fields are left alone.
type memberChange struct {
	Name, Email *string
	Role        *storage.MemberRole
}

// changeMember applies upstream's update rules to a member of a locked customer. caller is
// the member acting in the portal, nil for the organization (which may always transfer the
// ownership). Making a member owner demotes the owner to billing manager; the owner cannot
// otherwise step down. Emits member.updated when something changed.
func (r *Resolver) changeMember(ctx context.Context, tx *sqlx.Tx, c *storage.Customer, m *storage.Member,
	ch memberChange, caller *storage.Member) (*storage.Member, error) {
	var u storage.MemberUpdate
	transferred := false
	if ch.Role != nil && *ch.Role != m.Role {
		members, err := storage.CustomerMembers(ctx, tx, c.ID)
		if err != nil {
			return nil, err
		}
		var owner *storage.Member
		for _, o := range members {
			if o.Role == storage.MemberRoleOwner {
				owner = o
			}
		}
		switch {
		case *ch.Role == storage.MemberRoleOwner && owner != nil:
			if caller != nil && caller.Role != storage.MemberRoleOwner {
				return nil, Invalid("value_error", onlyOwnerTransfers, string(*ch.Role), "input", "role")
			}
			if m, err = storage.TransferOwnership(ctx, tx, owner.ID, m.ID); err != nil {
				return nil, err
			}
			transferred = true
		case m.Role == storage.MemberRoleOwner:
			return nil, Invalid("value_error", oneOwnerAlways, string(*ch.Role), "input", "role")
		default:
			u.Role = storage.Set(*ch.Role)
		}
	}
	if ch.Email != nil && *ch.Email != m.Email {
		if c.Type == storage.CustomerTypeIndividual {
			return nil, Invalid("value_error", individualOwnerEmail, *ch.Email, "input", "email")
		}
		other, err := storage.GetMemberByEmail(ctx, tx, c.ID, *ch.Email)
		if err == nil && other.ID != m.ID {
			return nil, Invalid("value_error", memberEmailTaken, *ch.Email, "input", "email")
		} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
		u.Email = storage.Set(*ch.Email)
	}
	if ch.Name != nil {
		u.Name = storage.Set(ch.Name)
	}
	if u.IsZero() && !transferred {
		return m, nil
	}
	out, err := storage.UpdateMember(ctx, tx, m.ID, u)
	if err != nil {
		return nil, err
	}
	if email, ok := u.Email.Get(); ok {
		if err := storage.SetMemberSeatsEmail(ctx, tx, m.ID, email); err != nil {
			return nil, err
		}
	}
	return out, r.emit(ctx, tx, out.OrganizationID, "member.updated", out.ID)
}

// deleteMember is deleteMember.
func (r *Resolver) deleteMember(ctx context.Context, in model.MemberDeleteInput) (*storage.Member, error) {
	var out *storage.Member
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		m, err := memberByRef(ctx, tx, in.Member, "input", "member")
		if err != nil {
			return err
		}
		if _, m, err = lockedMember(ctx, tx, m); err != nil {
			return err
		}
		out, err = r.removeMember(ctx, tx, m)
		return err
	})
	return out, err
}

// removeMember removes a member of a locked customer, as upstream: never the owner (a
// customer always has one); the seats it holds are revoked with their grants, and its
// sessions stop at once (member.deleted).
func (r *Resolver) removeMember(ctx context.Context, tx *sqlx.Tx, m *storage.Member) (*storage.Member, error) {
	if m.Role == storage.MemberRoleOwner {
		return nil, Invalid("value_error", ownerCannotLeave, m.ID.String(), "input")
	}
	seats, err := storage.MemberSeats(ctx, tx, m.ID)
	if err != nil {
		return nil, err
	}
	for _, s := range seats {
		if _, err := r.revokeLockedSeat(ctx, tx, s); err != nil {
			return nil, err
		}
	}
	out, err := storage.DeleteMember(ctx, tx, m.ID)
	if err != nil {
		return nil, notFoundOr(err, memberNotFound)
	}
	return out, r.emit(ctx, tx, out.OrganizationID, "member.deleted", out.ID)
}
