package resolvers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/internal/mail"
	"till/storage"
)

// seatMetadataKeys and seatMetadataBytes are upstream's SeatAssign.metadata limits.
const (
	seatMetadataKeys  = 10
	seatMetadataBytes = 1024
)

// seatRecipient is who an assignment gives the seat to, and how.
type seatRecipient struct {
	Email, ExternalCustomerID, ExternalMemberID *string
	CustomerID, MemberID                        *uuid.UUID
	Metadata                                    storage.RawJSON
	ImmediateClaim                              bool
}

// check applies SeatAssign's rules on the recipient: exactly one way of naming the person
// (an email, a customer, a member, or an external member id with an email). /v1 enforces
// them with upstream's messages before the use case runs; GraphQL callers get them here.
func (a seatRecipient) check() error {
	customers := countSet(a.CustomerID != nil, a.ExternalCustomerID != nil)
	members := countSet(a.MemberID != nil, a.ExternalMemberID != nil)
	email := countSet(a.Email != nil)
	var msg string
	switch {
	case customers+members+email == 0:
		msg = "One of email, customerId, externalCustomerId, memberId and externalMemberId is required."
	case customers > 0 && members > 0:
		msg = "customerId and externalCustomerId do not go with memberId and externalMemberId."
	case members > 1:
		msg = "memberId and externalMemberId do not go together."
	case customers > 0 && customers+email != 1:
		msg = "Exactly one of email, customerId and externalCustomerId is required."
	case a.MemberID != nil && email > 0:
		msg = "memberId does not go with email."
	}
	if msg != "" {
		return Invalid("value_error", msg, nil, "input")
	}
	if a.Email != nil {
		if err := checkEmail(*a.Email, "input", "email"); err != nil {
			return err
		}
	}
	if _, err := memberExternalID(a.ExternalMemberID, "input", "externalMemberId"); err != nil {
		return err
	}
	return checkSeatMetadata(a.Metadata)
}

// checkSeatMetadata holds seat metadata to upstream's limits: an object of at most 10 keys
// whose JSON is at most 1 KB.
func checkSeatMetadata(raw storage.RawJSON) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return Invalid("dict_type", "Input should be a valid dictionary", nil, "input", "metadata")
	}
	if len(m) > seatMetadataKeys {
		return Invalid("value_error", "Metadata cannot have more than 10 keys.", nil, "input", "metadata")
	}
	if len(raw) > seatMetadataBytes {
		return Invalid("value_error", "Metadata cannot exceed 1 KB of JSON.", nil, "input", "metadata")
	}
	return nil
}

func countSet(set ...bool) int {
	n := 0
	for _, s := range set {
		if s {
			n++
		}
	}
	return n
}

// assignSeat is assignSeat: a seat of one of the organization's purchases.
func (r *Resolver) assignSeat(ctx context.Context, in model.CustomerSeatAssignInput) (*model.CustomerSeatAssignment, error) {
	a := seatRecipient{Email: in.Email, ExternalCustomerID: in.ExternalCustomerID, CustomerID: in.CustomerID,
		ExternalMemberID: in.ExternalMemberID, MemberID: in.MemberID, Metadata: in.Metadata, ImmediateClaim: boolOr(in.ImmediateClaim)}
	if (in.SubscriptionID == nil) == (in.OrderID == nil) {
		return nil, Invalid("value_error", "Exactly one of subscriptionId and orderId is required.", nil, "input", "subscriptionId")
	}
	return r.assignSeatOf(ctx, a, func(tx *sqlx.Tx) (*storage.SeatSource, error) {
		return seatSource(ctx, tx, in.SubscriptionID, in.OrderID, nil, true)
	})
}

// portalAssignSeat is portalAssignSeat: a seat of one of the session customer's purchases,
// named by its subscription, order or checkout. The token goes to the seat's email only.
func (r *Resolver) portalAssignSeat(ctx context.Context, in model.PortalSeatAssignInput) (*storage.CustomerSeat, error) {
	a := seatRecipient{Email: in.Email, ExternalCustomerID: in.ExternalCustomerID, CustomerID: in.CustomerID,
		ExternalMemberID: in.ExternalMemberID, MemberID: in.MemberID, Metadata: in.Metadata, ImmediateClaim: boolOr(in.ImmediateClaim)}
	if countSet(in.SubscriptionID != nil, in.OrderID != nil, in.CheckoutID != nil) != 1 {
		return nil, Invalid("value_error", "Exactly one of subscriptionId, orderId and checkoutId is required.", nil, "input", "subscriptionId")
	}
	customer := auth.FromContext(ctx).CustomerID
	out, err := r.assignSeatOf(ctx, a, func(tx *sqlx.Tx) (*storage.SeatSource, error) {
		if in.CheckoutID == nil {
			return seatSource(ctx, tx, in.SubscriptionID, in.OrderID, &customer, true)
		}
		sub, order, err := storage.SeatSourceOfCheckout(ctx, tx, organizations(ctx), customer, *in.CheckoutID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, NotFound(checkoutSeatSourceNotFound)
		} else if err != nil {
			return nil, err
		}
		return seatSource(ctx, tx, sub, order, &customer, true)
	})
	if err != nil {
		return nil, err
	}
	return out.Seat, nil
}

func boolOr(b *bool) bool { return b != nil && *b }

// assignSeatOf assigns a seat of the purchase source reads and locks (so concurrent
// assignments never exceed its seats), in upstream's order: the purchase may hand out seats,
// one is left, the recipient is a member of the buying customer (found or made), and that
// member holds no seat of it yet.
func (r *Resolver) assignSeatOf(ctx context.Context, a seatRecipient, source func(*sqlx.Tx) (*storage.SeatSource, error)) (*model.CustomerSeatAssignment, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	if len(a.Metadata) == 0 || string(a.Metadata) == "null" {
		a.Metadata = storage.RawJSON("{}")
	}
	var out *model.CustomerSeatAssignment
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		src, err := source(tx)
		if err != nil {
			return err
		}
		if err := seatsOpen(src); err != nil {
			return err
		}
		occ, err := storage.SeatOccupancyOf(ctx, tx, src, "")
		if err != nil {
			return err
		}
		if src.Seats == nil || occ.Occupied >= *src.Seats {
			return seatNotAvailable("No available seats for " + sourceID(src))
		}
		m, err := r.seatMember(ctx, tx, src, a)
		if err != nil {
			return err
		}
		if occ, err = storage.SeatOccupancyOf(ctx, tx, src, m.Email); err != nil {
			return err
		}
		if occ.Taken {
			return &Error{Code: codeSeatAlreadyAssigned, Detail: "Seat already assigned to customer " + m.Email}
		}
		out, err = r.storeSeat(ctx, tx, src, m, a, occ.Reusable)
		return err
	})
	return out, err
}

// storeSeat stores the assignment: claimed at once, with the product's benefits granted to
// the member, or pending with a new claim token that is mailed to the member.
func (r *Resolver) storeSeat(ctx context.Context, tx *sqlx.Tx, src *storage.SeatSource, m *storage.Member,
	a seatRecipient, reuse *uuid.UUID) (*model.CustomerSeatAssignment, error) {
	now := r.Now()
	w := storage.SeatAssignment{Source: src, Email: m.Email, MemberID: m.ID, Claimed: a.ImmediateClaim,
		Metadata: a.Metadata, Reuse: reuse}
	var token string
	if !a.ImmediateClaim {
		var err error
		if token, err = invitationToken(); err != nil {
			return nil, err
		}
		hash, expires := auth.Hash(r.secret, token), now.Add(invitationTTL)
		w.TokenHash, w.ExpiresAt = &hash, &expires
	}
	seat, err := storage.AssignSeat(ctx, tx, w, now)
	if errors.Is(err, storage.ErrConflict) { // the member holds a seat of the purchase already
		return nil, &Error{Code: codeSeatAlreadyAssigned, Detail: "Seat already assigned to customer " + m.Email}
	} else if err != nil {
		return nil, err
	}
	if a.ImmediateClaim {
		if err := r.grantBenefits(ctx, tx, grantScope{OrganizationID: seat.OrganizationID, CustomerID: src.CustomerID,
			MemberID: &m.ID, ProductID: *src.ProductID, SubscriptionID: seat.SubscriptionID, OrderID: seat.OrderID}); err != nil {
			return nil, err
		}
		return &model.CustomerSeatAssignment{Seat: seat}, r.emit(ctx, tx, seat.OrganizationID, "customer_seat.claimed", seat.ID)
	}
	if err := r.mailSeatInvitation(ctx, tx, src, m.Email, token); err != nil {
		return nil, err
	}
	return &model.CustomerSeatAssignment{Seat: seat, InvitationToken: &token},
		r.emit(ctx, tx, seat.OrganizationID, "customer_seat.assigned", seat.ID)
}

// seatMember resolves the recipient to a member of the buying customer, as upstream's member
// model does: by id, by external id (made from the email and linked when missing), or by
// email (found or made); a customer of the organization stands for its email.
func (r *Resolver) seatMember(ctx context.Context, tx *sqlx.Tx, src *storage.SeatSource, a seatRecipient) (*storage.Member, error) {
	email := a.Email
	if a.CustomerID != nil || a.ExternalCustomerID != nil {
		var c *storage.Customer
		var err error
		if a.CustomerID != nil {
			c, err = storage.GetCustomer(ctx, tx, []uuid.UUID{src.OrganizationID}, *a.CustomerID)
		} else {
			c, err = storage.GetCustomerByExternalID(ctx, tx, []uuid.UUID{src.OrganizationID}, *a.ExternalCustomerID)
		}
		if errors.Is(err, storage.ErrNotFound) {
			return nil, &Error{Code: codeInvalidSeatAssignmentRequest, Detail: "Customer not found for the provided customer_id or external_customer_id."}
		} else if err != nil {
			return nil, err
		}
		if email == nil {
			email = c.Email
		}
	}
	switch {
	case a.MemberID != nil:
		m, err := storage.GetMember(ctx, tx, src.CustomerID, *a.MemberID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, &Error{Code: codeSeatMemberNotFound, Detail: "Member not found: " + a.MemberID.String()}
		}
		return m, err
	case a.ExternalMemberID != nil:
		return seatMemberByExternalID(ctx, tx, src, email, *a.ExternalMemberID)
	case email != nil:
		return storage.EnsureMemberByEmail(ctx, tx, src.OrganizationID, src.CustomerID, strings.TrimSpace(*email))
	}
	return nil, &Error{Code: codeInvalidSeatAssignmentRequest, Detail: "At least one of email, external_member_id, or member_id must be provided when member_model_enabled is true."}
}

// seatMemberByExternalID finds the buying customer's member with the external id; with an
// email it must match, and a missing member is found or made by email and given the id.
func seatMemberByExternalID(ctx context.Context, tx *sqlx.Tx, src *storage.SeatSource, email *string, externalID string) (*storage.Member, error) {
	mismatch := func(email string) error {
		return &Error{Code: codeSeatMemberEmailMismatch, Detail: "Member with external_member_id '" + externalID +
			"' exists but has a different email than '" + email + "'"}
	}
	m, err := storage.GetMemberByExternalID(ctx, tx, src.CustomerID, externalID)
	switch {
	case err == nil && email != nil && !strings.EqualFold(m.Email, *email):
		return nil, mismatch(*email)
	case err == nil:
		return m, nil
	case !errors.Is(err, storage.ErrNotFound):
		return nil, err
	case email == nil:
		return nil, &Error{Code: codeSeatMemberNotFound, Detail: "Member not found: " + externalID}
	}
	if m, err = storage.EnsureMemberByEmail(ctx, tx, src.OrganizationID, src.CustomerID, strings.TrimSpace(*email)); err != nil {
		return nil, err
	}
	switch {
	case m.ExternalID == nil:
		return storage.UpdateMember(ctx, tx, m.ID, storage.MemberUpdate{ExternalID: storage.Set(&externalID)})
	case *m.ExternalID != externalID:
		return nil, mismatch(*email)
	}
	return m, nil
}

// invitationToken draws a claim token as upstream's secrets.token_urlsafe(32).
func invitationToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// mailSeatInvitation queues the invitation to claim a seat, with upstream's subject and a
// link to the portal's claim page carrying the token.
func (r *Resolver) mailSeatInvitation(ctx context.Context, tx *sqlx.Tx, src *storage.SeatSource, to, token string) error {
	org, err := storage.GetOrganization(ctx, tx, src.OrganizationID)
	if err != nil {
		return err
	}
	product, err := storage.GetProduct(ctx, tx, []uuid.UUID{src.OrganizationID}, *src.ProductID)
	if err != nil {
		return err
	}
	from, err := billingContact(ctx, tx, src.CustomerID)
	if err != nil {
		return err
	}
	link := r.portalURL + "/" + org.Slug + "/portal/claim?token=" + token
	return r.enqueueMail(ctx, tx, mail.Message{To: to, Subject: "You've been invited to access " + product.Name,
		Text: from + " invited you to access " + product.Name + " from " + org.Name + ".\n\n" +
			"Claim your seat within a day: " + link + "\n"})
}

// billingContact names the buyer in an invitation, as upstream: its email, else its owner's,
// else its name.
func billingContact(ctx context.Context, tx *sqlx.Tx, customerID uuid.UUID) (string, error) {
	cs, err := storage.CustomersByIDs(ctx, tx, []uuid.UUID{customerID})
	if err != nil || len(cs) == 0 || cs[0] == nil {
		return "", err
	}
	c := cs[0]
	if c.Email != nil {
		return *c.Email, nil
	}
	members, err := storage.CustomerMembers(ctx, tx, c.ID)
	if err != nil {
		return "", err
	}
	for _, m := range members {
		if m.Role == storage.MemberRoleOwner {
			return m.Email, nil
		}
	}
	if c.Name != nil {
		return *c.Name, nil
	}
	return "Your team", nil
}
