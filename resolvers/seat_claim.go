package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// claimSeat claims a pending seat with its token: the token is the credential, spent on use.
// The seat's member (made from its email for seats assigned before members were) receives
// the product's benefits, and a member session is opened for it, as upstream logs the
// claimer in. Every token problem is the same InvalidInvitationToken.
func (r *Resolver) claimSeat(ctx context.Context, in model.CustomerSeatClaimInput) (*model.CustomerSeatClaim, error) {
	if in.InvitationToken == "" {
		return nil, invalidInvitationToken()
	}
	var out *model.CustomerSeatClaim
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		seat, err := storage.GetSeatByToken(ctx, tx, auth.Hash(r.secret, in.InvitationToken))
		if errors.Is(err, storage.ErrNotFound) {
			return invalidInvitationToken()
		}
		if err != nil {
			return err
		}
		now := r.Now()
		if !claimable(seat, now) || seat.CustomerID == nil || seat.Email == nil {
			return invalidInvitationToken()
		}
		src, err := storage.GetSeatSource(ctx, tx, []uuid.UUID{seat.OrganizationID}, seat.SubscriptionID, seat.OrderID, false)
		if errors.Is(err, storage.ErrNotFound) || err == nil && seatsOpen(src) != nil {
			return invalidInvitationToken() // the purchase is gone or no longer running
		}
		if err != nil {
			return err
		}
		var m *storage.Member
		if seat.MemberID != nil {
			m, err = storage.GetMember(ctx, tx, *seat.CustomerID, *seat.MemberID)
		} else {
			m, err = storage.EnsureMemberByEmail(ctx, tx, seat.OrganizationID, *seat.CustomerID, *seat.Email)
		}
		if errors.Is(err, storage.ErrNotFound) {
			return invalidInvitationToken() // the member was removed
		} else if err != nil {
			return err
		}
		if seat, err = storage.ClaimSeat(ctx, tx, seat.ID, m.ID, now); err != nil {
			if errors.Is(err, storage.ErrConflict) { // the member holds another seat of this purchase
				return &Error{Code: codeSeatAlreadyAssigned, Detail: "Seat already assigned to customer " + m.Email}
			}
			return err
		}
		if err := r.grantBenefits(ctx, tx, grantScope{OrganizationID: seat.OrganizationID, CustomerID: *seat.CustomerID,
			MemberID: &m.ID, ProductID: *src.ProductID, SubscriptionID: seat.SubscriptionID, OrderID: seat.OrderID}); err != nil {
			return err
		}
		token := auth.Generate(auth.PrefixMemberSession)
		if _, err := storage.CreateMemberSession(ctx, tx, seat.OrganizationID, *seat.CustomerID, m.ID,
			auth.Hash(r.secret, token), now.Add(sessionTTL), nil); err != nil {
			return err
		}
		out = &model.CustomerSeatClaim{Seat: seat, CustomerSessionToken: token}
		return r.emit(ctx, tx, seat.OrganizationID, "customer_seat.claimed", seat.ID)
	})
	return out, err
}

// claimable tells whether a seat's token may still be claimed: the seat waits for its claim
// and the token has not expired.
func claimable(seat *storage.CustomerSeat, now time.Time) bool {
	return seat.Status == storage.CustomerSeatStatusPending &&
		(seat.InvitationTokenExpiresAt == nil || !seat.InvitationTokenExpiresAt.Before(now))
}

// seatClaimInfo is what an invitation offers, read without side effects: mail scanners follow
// links. A token that cannot be claimed is not found, whatever the reason.
func (r *Resolver) seatClaimInfo(ctx context.Context, token string) (*model.SeatClaimInfo, error) {
	notFound := NotFound(invalidInvitationTokenDetail)
	if token == "" {
		return nil, notFound
	}
	seat, err := storage.FindSeatByToken(ctx, r.db, auth.Hash(r.secret, token))
	if errors.Is(err, storage.ErrNotFound) || err == nil && !claimable(seat, r.Now()) {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	src, err := storage.GetSeatSource(ctx, r.db, []uuid.UUID{seat.OrganizationID}, seat.SubscriptionID, seat.OrderID, false)
	if errors.Is(err, storage.ErrNotFound) || err == nil && src.ProductID == nil {
		return nil, NotFound("Seat has no subscription or order")
	} else if err != nil {
		return nil, err
	}
	product, err := storage.GetProduct(ctx, r.db, []uuid.UUID{seat.OrganizationID}, *src.ProductID)
	if err != nil {
		return nil, err
	}
	org, err := storage.GetOrganization(ctx, r.db, seat.OrganizationID)
	if err != nil {
		return nil, notFoundOr(err, "Organization not found")
	}
	email := ""
	if seat.Email != nil {
		email = *seat.Email
	}
	return &model.SeatClaimInfo{ProductName: product.Name, ProductID: product.ID, OrganizationName: org.Name,
		OrganizationSlug: org.Slug, CustomerEmail: email, CanClaim: seat.Status == storage.CustomerSeatStatusPending}, nil
}

// resendSeatInvitation is resendSeatInvitation: the seat's invitation again, with a new
// token returned once, as assignSeat returns the first.
func (r *Resolver) resendSeatInvitation(ctx context.Context, in model.CustomerSeatRevokeInput) (*model.CustomerSeatAssignment, error) {
	var token string
	seat, err := r.withSeat(ctx, in.ID, nil, func(ctx context.Context, tx *sqlx.Tx, s *storage.CustomerSeat) (*storage.CustomerSeat, error) {
		var err error
		s, token, err = r.reissueInvitation(ctx, tx, s)
		return s, err
	})
	if err != nil {
		return nil, err
	}
	return &model.CustomerSeatAssignment{Seat: seat, InvitationToken: &token}, nil
}

// portalResendSeatInvitation sends the invitation of a seat of one of the session customer's
// purchases again; the token goes to the seat's email only.
func (r *Resolver) portalResendSeatInvitation(ctx context.Context, in model.CustomerSeatRevokeInput) (*storage.CustomerSeat, error) {
	customer := auth.FromContext(ctx).CustomerID
	return r.withSeat(ctx, in.ID, &customer, func(ctx context.Context, tx *sqlx.Tx, s *storage.CustomerSeat) (*storage.CustomerSeat, error) {
		s, _, err := r.reissueInvitation(ctx, tx, s)
		return s, err
	})
}

// reissueInvitation mails a pending seat's invitation again. Only the token's hash is
// stored, so a new token replaces it (the old link stops working); its expiry stays, as
// upstream resends the same token.
func (r *Resolver) reissueInvitation(ctx context.Context, tx *sqlx.Tx, s *storage.CustomerSeat) (*storage.CustomerSeat, string, error) {
	if s.Status != storage.CustomerSeatStatusPending {
		return nil, "", &Error{Code: codeSeatNotPending, Detail: "Seat is not in pending status"}
	}
	if s.Email == nil || s.CustomerID == nil {
		return nil, "", invalidInvitationToken()
	}
	src, err := storage.GetSeatSource(ctx, tx, []uuid.UUID{s.OrganizationID}, s.SubscriptionID, s.OrderID, false)
	if err != nil {
		return nil, "", err
	}
	if src.ProductID == nil {
		return nil, "", seatNotAvailable("Container has no associated product")
	}
	token, err := invitationToken()
	if err != nil {
		return nil, "", err
	}
	if s, err = storage.ReissueSeatToken(ctx, tx, s.ID, auth.Hash(r.secret, token), r.Now()); err != nil {
		return nil, "", err
	}
	return s, token, r.mailSeatInvitation(ctx, tx, src, *s.Email, token)
}
