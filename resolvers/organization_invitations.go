package resolvers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/internal/mail"
	"till/storage"
)

// organizationInvitationTTL is how long an invitation's link works after it was sent.
const organizationInvitationTTL = 7 * 24 * time.Hour

// inviteOrganizationMember invites an address into the caller's organization and queues the
// mail with its link in the same transaction. The token is drawn afresh on every invitation,
// so re-inviting an address turns its older link off.
func (r *Resolver) inviteOrganizationMember(ctx context.Context, in model.OrganizationMemberInviteInput) (*storage.OrganizationInvitation, error) {
	if len(in.Email) > maxEmailLength {
		return nil, Invalid("string_too_long", fmt.Sprintf("String should have at most %d characters", maxEmailLength),
			in.Email, "input", "email")
	}
	if err := checkEmail(in.Email, "input", "email"); err != nil {
		return nil, err
	}
	org, err := targetOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	token, err := invitationToken()
	if err != nil {
		return nil, err
	}
	p := auth.FromContext(ctx)
	var inv *storage.OrganizationInvitation
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		caller, err := lockMemberships(ctx, tx, org, auth.PermissionMembersManage)
		if err != nil {
			return err
		}
		if err := mayGrant(caller, auth.Role(in.Role)); err != nil {
			return err
		}
		switch member, err := storage.IsMemberByEmail(ctx, tx, org, in.Email); {
		case err != nil:
			return err
		case member:
			return BadRequest(in.Email + " is already a member of the organization; change their role instead.")
		}
		inv, err = storage.UpsertInvitation(ctx, tx, storage.InvitationWrite{OrganizationID: org, Email: in.Email,
			Role: string(in.Role), TokenHash: auth.Hash(r.secret, token), InvitedBy: &p.UserID,
			ExpiresAt: r.Now().Add(organizationInvitationTTL)})
		if err != nil {
			return err
		}
		return r.mailInvitation(ctx, tx, inv, token)
	})
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// mailInvitation queues the invitation's mail: who invites, to what, as what, and the link.
func (r *Resolver) mailInvitation(ctx context.Context, tx *sqlx.Tx, inv *storage.OrganizationInvitation, token string) error {
	o, err := storage.GetOrganization(ctx, tx, inv.OrganizationID)
	if err != nil {
		return err
	}
	inviter := "A member"
	if inv.InvitedBy != nil {
		if u, err := storage.GetUser(ctx, tx, *inv.InvitedBy); err == nil {
			inviter = u.Email
		}
	}
	link := strings.TrimRight(r.portalURL, "/") + "/invitations/accept?token=" + url.QueryEscape(token)
	text := fmt.Sprintf("%s invited you to join %s as %s.\n\nSign in as %s and open this link to accept:\n%s\n\n"+
		"The invitation token is %s (for acceptOrganizationInvitation). The link works until %s.\n",
		inviter, o.Name, inv.Role, inv.Email, link, token, inv.ExpiresAt.UTC().Format(time.RFC1123))
	return r.enqueueMail(ctx, tx, mail.Message{To: inv.Email, Subject: "You are invited to join " + o.Name, Text: text})
}

// organizationInvitationsPage lists the pending invitations of one of the caller's
// organizations.
func (r *Resolver) organizationInvitationsPage(ctx context.Context, orgID *uuid.UUID, a listArgs) (*model.OrganizationInvitationPage, error) {
	org, err := targetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	w, err := a.window()
	if err != nil {
		return nil, err
	}
	p, err := storage.ListPendingInvitations(ctx, r.db, org, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	return &model.OrganizationInvitationPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// cancelOrganizationInvitation cancels a pending invitation of the caller's organizations.
func (r *Resolver) cancelOrganizationInvitation(ctx context.Context, id uuid.UUID) (*storage.OrganizationInvitation, error) {
	var out *storage.OrganizationInvitation
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		inv, err := storage.LockPendingInvitation(ctx, tx, organizations(ctx), id)
		if err != nil {
			return notFoundOr(err, "Invitation not found.")
		}
		if _, err := lockMemberships(ctx, tx, inv.OrganizationID, auth.PermissionMembersManage); err != nil {
			return err
		}
		out, err = storage.CancelInvitation(ctx, tx, inv.ID)
		return err
	})
	return out, err
}

// acceptOrganizationInvitation lets the signed-in user join by an invitation's token when
// the user's verified email is the invited address. The token is spent on use; every token
// that cannot be used (unknown, used, cancelled, expired) is the same InvalidInvitationToken.
func (r *Resolver) acceptOrganizationInvitation(ctx context.Context, in model.OrganizationInvitationAcceptInput) (*storage.OrganizationMember, error) {
	if in.Token == "" || len(in.Token) > 200 {
		return nil, invalidInvitationToken()
	}
	u, err := storage.GetUser(ctx, r.db, auth.FromContext(ctx).UserID)
	if err != nil {
		return nil, notFoundOr(err, "User not found.")
	}
	var m *storage.OrganizationMember
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		inv, err := storage.LockInvitationByToken(ctx, tx, auth.Hash(r.secret, in.Token))
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return invalidInvitationToken()
		case err != nil:
			return err
		case inv.AcceptedAt != nil || inv.CancelledAt != nil || !inv.ExpiresAt.After(r.Now()):
			return invalidInvitationToken()
		case !u.EmailVerified || !strings.EqualFold(u.Email, inv.Email):
			return NotPermitted("This invitation is for another email address.")
		}
		if _, err := storage.JoinOrganization(ctx, tx, u.ID, inv.OrganizationID, inv.Role); err != nil {
			return err
		}
		if _, err := storage.MarkInvitationAccepted(ctx, tx, inv.ID, u.ID); err != nil {
			return err
		}
		m, err = storage.GetOrganizationMember(ctx, tx, inv.OrganizationID, u.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	membershipsChanged(ctx)
	return m, nil
}
