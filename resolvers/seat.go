package resolvers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// Seats of seat-based purchases, upstream's SeatService with the member model: a seat is
// assigned to a member of the buying customer (found or made by email), pending with a claim
// token that is mailed to it and stored hashed, or claimed at once; claiming with the token
// grants the member the product's benefits; revoking takes them away and empties the seat.
// customer_id is the buying customer while the seat is held.

// invitationTTL is how long a claim token is good for, as upstream's.
const invitationTTL = 24 * time.Hour

// Upstream's seat errors (server/polar/customer_seat/service.py): their class names are the
// error codes. Upstream's seat_based_pricing_enabled feature flag (FeatureNotEnabled, 403) is
// not reproduced: a purchase is seat-based when it has seats.
const (
	codeSeatNotAvailable             = "SeatNotAvailable"
	codeSeatAlreadyAssigned          = "SeatAlreadyAssigned"
	codeSeatNotPending               = "SeatNotPending"
	codeInvalidInvitationToken       = "InvalidInvitationToken"
	codeInvalidSeatAssignmentRequest = "InvalidSeatAssignmentRequest"
	codeSeatMemberNotFound           = "MemberNotFound"
	codeSeatMemberEmailMismatch      = "MemberEmailMismatch"
	invalidInvitationTokenDetail     = "Invalid or expired invitation token"
	seatNotFound                     = "Seat not found"
	seatSourceRequired               = "Either subscription_id or order_id must be provided"
	checkoutSeatSourceNotFound       = "No subscription or order found for this checkout"
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
	return seatSource(ctx, q, subscriptionID, orderID, nil, lock)
}

// seatSource reads a subscription or an order of the caller's organizations, and with
// customer, one that customer bought: the portal reaches its own purchases only.
func seatSource(ctx context.Context, q sqlx.ExtContext, subscriptionID, orderID, customer *uuid.UUID, lock bool) (*storage.SeatSource, error) {
	src, err := storage.GetSeatSource(ctx, q, organizations(ctx), subscriptionID, orderID, lock)
	if err == nil && customer != nil && src.CustomerID != *customer {
		err = storage.ErrNotFound
	}
	if errors.Is(err, storage.ErrNotFound) {
		if subscriptionID != nil {
			return nil, NotFound("Subscription not found")
		}
		return nil, NotFound("Order not found")
	}
	return src, err
}

// listedSeatSource is the purchase a seat list reads, as upstream picks it: the subscription
// when one is given, else the order.
func listedSeatSource(ctx context.Context, q sqlx.ExtContext, subscriptionID, orderID, customer *uuid.UUID) (*storage.SeatSource, error) {
	switch {
	case subscriptionID != nil:
		return seatSource(ctx, q, subscriptionID, nil, customer, false)
	case orderID != nil:
		return seatSource(ctx, q, nil, orderID, customer, false)
	}
	return nil, BadRequest(seatSourceRequired)
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

// revokeSeat revokes a seat of the caller's organizations.
func (r *Resolver) revokeSeat(ctx context.Context, in model.CustomerSeatRevokeInput) (*storage.CustomerSeat, error) {
	return r.withSeat(ctx, in.ID, nil, r.revokeLockedSeat)
}

// portalRevokeSeat revokes a seat of one of the session customer's purchases.
func (r *Resolver) portalRevokeSeat(ctx context.Context, in model.CustomerSeatRevokeInput) (*storage.CustomerSeat, error) {
	customer := auth.FromContext(ctx).CustomerID
	return r.withSeat(ctx, in.ID, &customer, r.revokeLockedSeat)
}

// withSeat runs fn in a transaction on a locked seat of the caller's organizations, and with
// customer, of that customer's purchases; another's seat is not found.
func (r *Resolver) withSeat(ctx context.Context, id uuid.UUID, customer *uuid.UUID,
	fn func(context.Context, *sqlx.Tx, *storage.CustomerSeat) (*storage.CustomerSeat, error)) (*storage.CustomerSeat, error) {
	var out *storage.CustomerSeat
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		var seat *storage.CustomerSeat
		var err error
		if customer != nil {
			seat, err = storage.GetCustomerSeat(ctx, tx, organizations(ctx), *customer, id, true)
		} else {
			seat, err = storage.GetSeat(ctx, tx, organizations(ctx), id, true)
		}
		if err != nil {
			return notFoundOr(err, seatNotFound)
		}
		out, err = fn(ctx, tx, seat)
		return err
	})
	return out, err
}

// revokeLockedSeat revokes a locked seat and its holder's grants; a seat already revoked is
// returned as it is, and emits nothing.
func (r *Resolver) revokeLockedSeat(ctx context.Context, tx *sqlx.Tx, seat *storage.CustomerSeat) (*storage.CustomerSeat, error) {
	if seat.Status == storage.CustomerSeatStatusRevoked {
		return seat, nil
	}
	if seat.Status == storage.CustomerSeatStatusClaimed && seat.MemberID != nil && seat.CustomerID != nil {
		if err := r.revokeBenefits(ctx, tx, grantScope{OrganizationID: seat.OrganizationID, CustomerID: *seat.CustomerID,
			MemberID: seat.MemberID, SubscriptionID: seat.SubscriptionID, OrderID: seat.OrderID}); err != nil {
			return nil, err
		}
	}
	out, err := storage.RevokeSeat(ctx, tx, seat.ID, r.Now())
	if err != nil {
		return nil, err
	}
	return out, r.emit(ctx, tx, out.OrganizationID, "customer_seat.revoked", out.ID)
}

// seatList lists the seats of one subscription or order with what is left of them.
func (r *Resolver) seatList(ctx context.Context, subscriptionID, orderID *uuid.UUID) (*model.CustomerSeatList, error) {
	src, err := listedSeatSource(ctx, r.db, subscriptionID, orderID, nil)
	if err != nil {
		return nil, err
	}
	return r.seatListOf(ctx, src)
}

// portalSeatList lists the seats of one of the session customer's purchases: every member
// session of the customer sees them, as upstream shows them.
func (r *Resolver) portalSeatList(ctx context.Context, subscriptionID, orderID *uuid.UUID) (*model.CustomerSeatList, error) {
	customer := auth.FromContext(ctx).CustomerID
	src, err := listedSeatSource(ctx, r.db, subscriptionID, orderID, &customer)
	if err != nil {
		return nil, err
	}
	return r.seatListOf(ctx, src)
}

// seatListOf is a purchase's seats, oldest first, with its seat count and what is left.
func (r *Resolver) seatListOf(ctx context.Context, src *storage.SeatSource) (*model.CustomerSeatList, error) {
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
	return s, notFoundOr(err, seatNotFound)
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
