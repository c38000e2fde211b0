package resolvers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// Seats of seat-based purchases, upstream's SeatService with the member model: a seat is
// assigned to an email (pending, with a claim token that is shown once and stored hashed),
// claimed with that token (the email becomes a member of the buying customer and receives
// the product's benefits), and revoked (the member loses them). customer_id is always the
// buying customer, member_id the holder once claimed.

// invitationTTL is how long a claim token is good for, as upstream's.
const invitationTTL = 24 * time.Hour

// Upstream's seat errors (server/polar/customer_seat/service.py): their class names are the
// error codes, all 400, the status Error gives a code it does not list. Upstream's
// seat_based_pricing_enabled feature flag (FeatureNotEnabled, 403) is not reproduced: a
// purchase is seat-based when it has seats.
const (
	codeSeatNotAvailable         = "SeatNotAvailable"
	codeSeatAlreadyAssigned      = "SeatAlreadyAssigned"
	codeInvalidInvitationToken   = "InvalidInvitationToken"
	invalidInvitationTokenDetail = "Invalid or expired invitation token"
)

// seatNotAvailable refuses an assignment the purchase cannot take.
func seatNotAvailable(detail string) *Error {
	return &Error{Code: codeSeatNotAvailable, Detail: detail}
}

// invalidInvitationToken is every failed claim: unknown, spent, expired or revoked tokens
// alike, so a token's fate is not disclosed.
func invalidInvitationToken() *Error {
	return &Error{Code: codeInvalidInvitationToken, Detail: invalidInvitationTokenDetail}
}

// seatSourceOf resolves the input's subscription or order (exactly one) among the caller's
// organizations; lock serialises assignments of one purchase.
func seatSourceOf(ctx context.Context, q sqlx.ExtContext, subscriptionID, orderID *uuid.UUID, lock bool) (*storage.SeatSource, error) {
	if (subscriptionID == nil) == (orderID == nil) {
		return nil, Invalid("value_error", "Exactly one of subscriptionId and orderId is required.", nil, "input", "subscriptionId")
	}
	src, err := storage.GetSeatSource(ctx, q, organizations(ctx), subscriptionID, orderID, lock)
	if errors.Is(err, storage.ErrNotFound) {
		if subscriptionID != nil {
			return nil, NotFound("Subscription not found")
		}
		return nil, NotFound("Order not found")
	}
	return src, err
}

// sourceID names the purchase in seat errors, as upstream's messages do.
func sourceID(src *storage.SeatSource) string {
	if src.SubscriptionID != nil {
		return src.SubscriptionID.String()
	}
	return src.OrderID.String()
}

// subscriptionRunning are the statuses of a subscription that hands out and honours seats:
// running, in its trial, or retrying a renewal payment.
var subscriptionRunning = map[storage.SubscriptionStatus]bool{storage.SubscriptionStatusActive: true,
	storage.SubscriptionStatusTrialing: true, storage.SubscriptionStatusPastDue: true}

// seatsOpen tells whether a purchase may hand out and honour seats: a subscription that is
// running, an order that is paid.
func seatsOpen(src *storage.SeatSource) error {
	switch {
	case src.SubscriptionID != nil && !subscriptionRunning[src.SubscriptionStatus]:
		return seatNotAvailable("Subscription is not active")
	case src.OrderID != nil && src.OrderStatus != storage.OrderStatusPaid &&
		src.OrderStatus != storage.OrderStatusPartiallyRefunded:
		return seatNotAvailable("Order must be paid before assigning seats")
	case src.ProductID == nil:
		return seatNotAvailable("Container has no associated product")
	}
	return nil
}

// assignSeat hands a seat of a seat-based subscription or order to an email. The purchase
// row is locked first, so concurrent assignments never exceed its seats.
func (r *Resolver) assignSeat(ctx context.Context, in model.CustomerSeatAssignInput) (*model.CustomerSeatAssignment, error) {
	email := strings.TrimSpace(in.Email)
	if err := checkEmail(email, "input", "email"); err != nil {
		return nil, err
	}
	if err := checkMetadata(in.Metadata, "input", "metadata"); err != nil {
		return nil, err
	}
	meta, err := json.Marshal(in.Metadata)
	if err != nil || in.Metadata == nil {
		meta = []byte("{}")
	}
	token, err := invitationToken()
	if err != nil {
		return nil, err
	}
	var out *model.CustomerSeatAssignment
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		src, err := seatSourceOf(ctx, tx, in.SubscriptionID, in.OrderID, true)
		if err != nil {
			return err
		}
		if err := seatsOpen(src); err != nil {
			return err
		}
		occ, err := storage.SeatOccupancyOf(ctx, tx, src, email)
		if err != nil {
			return err
		}
		if src.Seats == nil || occ.Occupied >= *src.Seats {
			return seatNotAvailable("No available seats for " + sourceID(src))
		}
		if occ.Taken {
			return &Error{Code: codeSeatAlreadyAssigned, Detail: "Seat already assigned to customer " + email}
		}
		now := r.Now()
		seat, err := storage.AssignSeat(ctx, tx, storage.SeatAssignment{Source: src, Email: email,
			TokenHash: auth.Hash(r.secret, token), ExpiresAt: now.Add(invitationTTL), Metadata: meta, Reuse: occ.Reusable}, now)
		if err != nil {
			return err
		}
		out = &model.CustomerSeatAssignment{Seat: seat, InvitationToken: token}
		return r.emit(ctx, tx, seat.OrganizationID, "customer_seat.assigned", seat.ID)
	})
	return out, err
}

// invitationToken draws a claim token as upstream's secrets.token_urlsafe(32).
func invitationToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// claimSeat claims a pending seat with its token: the token is the credential, spent on
// use. The seat's email becomes (or finds) a member of the buying customer, the product's
// benefits are granted to that member, and a member session is opened for it, as upstream
// logs the claimer in. Every token problem is the same InvalidInvitationToken.
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
		expired := seat.InvitationTokenExpiresAt != nil && seat.InvitationTokenExpiresAt.Before(now)
		if seat.Status != storage.CustomerSeatStatusPending || expired || seat.CustomerID == nil || seat.Email == nil {
			return invalidInvitationToken()
		}
		src, err := storage.GetSeatSource(ctx, tx, []uuid.UUID{seat.OrganizationID}, seat.SubscriptionID, seat.OrderID, false)
		if errors.Is(err, storage.ErrNotFound) || err == nil && seatsOpen(src) != nil {
			return invalidInvitationToken() // the purchase is gone or no longer running
		}
		if err != nil {
			return err
		}
		m, err := storage.EnsureMemberByEmail(ctx, tx, seat.OrganizationID, *seat.CustomerID, *seat.Email)
		if err != nil {
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

// revokeSeat revokes a seat of the caller's organizations and its holder's grants; a seat
// already revoked is returned as it is, and emits nothing.
func (r *Resolver) revokeSeat(ctx context.Context, in model.CustomerSeatRevokeInput) (*storage.CustomerSeat, error) {
	var out *storage.CustomerSeat
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		seat, err := storage.GetSeat(ctx, tx, organizations(ctx), in.ID, true)
		if err != nil {
			return notFoundOr(err, "")
		}
		if seat.Status == storage.CustomerSeatStatusRevoked {
			out = seat
			return nil
		}
		if seat.Status == storage.CustomerSeatStatusClaimed && seat.MemberID != nil && seat.CustomerID != nil {
			if err := r.revokeBenefits(ctx, tx, grantScope{OrganizationID: seat.OrganizationID, CustomerID: *seat.CustomerID,
				MemberID: seat.MemberID, SubscriptionID: seat.SubscriptionID, OrderID: seat.OrderID}); err != nil {
				return err
			}
		}
		if out, err = storage.RevokeSeat(ctx, tx, seat.ID, r.Now()); err != nil {
			return err
		}
		return r.emit(ctx, tx, out.OrganizationID, "customer_seat.revoked", out.ID)
	})
	return out, err
}

// seatList lists the seats of one subscription or order with what is left of them.
func (r *Resolver) seatList(ctx context.Context, subscriptionID, orderID *uuid.UUID) (*model.CustomerSeatList, error) {
	src, err := seatSourceOf(ctx, r.db, subscriptionID, orderID, false)
	if err != nil {
		return nil, err
	}
	seats, err := storage.SourceSeats(ctx, r.db, src)
	if err != nil {
		return nil, err
	}
	total := 0
	if src.Seats != nil {
		total = *src.Seats
	}
	used := 0
	for _, s := range seats {
		if s.Status != storage.CustomerSeatStatusRevoked {
			used++
		}
	}
	return &model.CustomerSeatList{Seats: seats, AvailableSeats: max(total-used, 0), TotalSeats: total}, nil
}

// seat reads one seat of the caller's organizations.
func (r *Resolver) seat(ctx context.Context, id uuid.UUID) (*storage.CustomerSeat, error) {
	s, err := storage.GetSeat(ctx, r.db, organizations(ctx), id, false)
	return s, notFoundOr(err, "")
}

// seatCustomerEmail is the buying customer's email, as the seat's customer_email.
func seatCustomerEmail(ctx context.Context, s *storage.CustomerSeat) (*string, error) {
	if s.CustomerID == nil {
		return nil, nil
	}
	c, err := relatedOpt(ctx, loaders(ctx).Customer, s, func(s *storage.CustomerSeat) *uuid.UUID { return s.CustomerID })
	if err != nil {
		return nil, fmt.Errorf("seat %s customer: %w", s.ID, err)
	}
	return c.Email, nil
}
