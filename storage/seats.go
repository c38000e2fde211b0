package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

const seatColumns = `id, created_at, modified_at, organization_id, subscription_id, order_id, status, customer_id,
	member_id, email, invitation_token_expires_at, claimed_at, revoked_at, seat_metadata`

// SeatSource is the subscription or the order whose seats are handed out (exactly one of
// SubscriptionID and OrderID is set, and its status is in SubscriptionStatus or OrderStatus).
// Seats is nil when the purchase is not seat-based.
type SeatSource struct {
	SubscriptionID     *uuid.UUID         `db:"subscription_id"`
	OrderID            *uuid.UUID         `db:"order_id"`
	OrganizationID     uuid.UUID          `db:"organization_id"`
	CustomerID         uuid.UUID          `db:"customer_id"`
	ProductID          *uuid.UUID         `db:"product_id"`
	Seats              *int               `db:"seats"`
	SubscriptionStatus SubscriptionStatus `db:"subscription_status"`
	OrderStatus        OrderStatus        `db:"order_status"`
}

// GetSeatSource reads a live subscription (subscriptionID) or order (orderID) of the given
// organizations. lock takes its row lock, which serialises seat assignments of one purchase
// so concurrent assignments never exceed its seats.
func GetSeatSource(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, subscriptionID, orderID *uuid.UUID, lock bool) (*SeatSource, error) {
	query := `SELECT id AS subscription_id, NULL::uuid AS order_id, organization_id, customer_id, product_id,
		seats, status AS subscription_status, '' AS order_status FROM subscriptions WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL`
	id := subscriptionID
	if subscriptionID == nil {
		query = `SELECT NULL::uuid AS subscription_id, id AS order_id, organization_id, customer_id, product_id,
			seats, '' AS subscription_status, status AS order_status FROM orders WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL`
		id = orderID
	}
	if id == nil {
		return nil, ErrNotFound
	}
	if lock {
		query += " FOR UPDATE"
	}
	var s SeatSource
	err := sqlx.GetContext(ctx, q, &s, query, *id, pq.Array(orgs))
	return &s, mapErr(err)
}

// SeatOccupancy is how a purchase's seats are used when a new one is assigned.
type SeatOccupancy struct {
	// Occupied counts pending and claimed seats.
	Occupied int `db:"occupied"`
	// Taken reports a pending or claimed seat already assigned to the email.
	Taken bool `db:"taken"`
	// Reusable is a revoked seat that a new assignment takes over, as upstream does, so a
	// purchase keeps at most as many seat rows as it has seats.
	Reusable *uuid.UUID `db:"reusable"`
}

// SeatOccupancyOf reads the occupancy of src's seats for assigning one to email.
func SeatOccupancyOf(ctx context.Context, q sqlx.ExtContext, src *SeatSource, email string) (*SeatOccupancy, error) {
	var o SeatOccupancy
	err := sqlx.GetContext(ctx, q, &o, `SELECT count(*) FILTER (WHERE status <> 'revoked') AS occupied,
			coalesce(bool_or(status <> 'revoked' AND lower(email) = lower($3)), false) AS taken,
			(array_agg(id ORDER BY revoked_at, id) FILTER (WHERE status = 'revoked'))[1] AS reusable
		FROM customer_seats WHERE subscription_id = $1 OR order_id = $2`, src.SubscriptionID, src.OrderID, email)
	return &o, mapErr(err)
}

// SeatAssignment is a seat to store: pending with the hash of its claim token, or claimed
// at once (Claimed, no token) when the seller hands it out without an invitation.
type SeatAssignment struct {
	Source *SeatSource
	Email  string
	// MemberID is the buying customer's member the seat is for.
	MemberID  uuid.UUID
	TokenHash *string
	ExpiresAt *time.Time
	Claimed   bool
	Metadata  RawJSON
	// Reuse, when set, is a revoked seat of the source to assign instead of inserting one.
	Reuse *uuid.UUID
}

// AssignSeat stores a seat of the source's customer for a member.
func AssignSeat(ctx context.Context, q sqlx.ExtContext, a SeatAssignment, now time.Time) (*CustomerSeat, error) {
	status, claimedAt := CustomerSeatStatusPending, (*time.Time)(nil)
	if a.Claimed {
		status, claimedAt = CustomerSeatStatusClaimed, &now
	}
	var s CustomerSeat
	var err error
	if a.Reuse != nil {
		err = sqlx.GetContext(ctx, q, &s, `UPDATE customer_seats SET status = $2, customer_id = $3,
				member_id = $4, email = $5, invitation_token = $6, invitation_token_expires_at = $7,
				claimed_at = $8, revoked_at = NULL, seat_metadata = $9, modified_at = $10
			WHERE id = $1 AND status = 'revoked' RETURNING `+seatColumns,
			*a.Reuse, status, a.Source.CustomerID, a.MemberID, a.Email, a.TokenHash, a.ExpiresAt, claimedAt, a.Metadata, now)
	} else {
		err = sqlx.GetContext(ctx, q, &s, `INSERT INTO customer_seats (created_at, organization_id,
				subscription_id, order_id, status, customer_id, member_id, email, invitation_token,
				invitation_token_expires_at, claimed_at, seat_metadata)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING `+seatColumns,
			now, a.Source.OrganizationID, a.Source.SubscriptionID, a.Source.OrderID, status, a.Source.CustomerID,
			a.MemberID, a.Email, a.TokenHash, a.ExpiresAt, claimedAt, a.Metadata)
	}
	return &s, mapErr(err)
}

// GetSeatByToken finds the seat holding a claim token hash and locks it, so one token is
// claimed once however many requests race.
func GetSeatByToken(ctx context.Context, q sqlx.ExtContext, tokenHash string) (*CustomerSeat, error) {
	var s CustomerSeat
	err := sqlx.GetContext(ctx, q, &s, `SELECT `+seatColumns+` FROM customer_seats
		WHERE invitation_token = $1 FOR UPDATE`, tokenHash)
	return &s, mapErr(err)
}

// GetSeat reads a seat of the given organizations, locked when lock is set.
func GetSeat(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, lock bool) (*CustomerSeat, error) {
	query := `SELECT ` + seatColumns + ` FROM customer_seats WHERE id = $1 AND organization_id = ANY($2)`
	if lock {
		query += " FOR UPDATE"
	}
	var s CustomerSeat
	err := sqlx.GetContext(ctx, q, &s, query, id, pq.Array(orgs))
	return &s, mapErr(err)
}

// ClaimSeat marks a seat claimed by a member and spends its token.
func ClaimSeat(ctx context.Context, q sqlx.ExtContext, id, memberID uuid.UUID, now time.Time) (*CustomerSeat, error) {
	var s CustomerSeat
	err := sqlx.GetContext(ctx, q, &s, `UPDATE customer_seats SET status = 'claimed', member_id = $2,
			claimed_at = $3, invitation_token = NULL, modified_at = $3
		WHERE id = $1 RETURNING `+seatColumns, id, memberID, now)
	return &s, mapErr(err)
}

// revokedSeat is what revoking writes, as upstream's revoke_seat: the token is spent and the
// seat forgets its customer, member and email, so it holds nobody until it is reused.
const revokedSeat = `status = 'revoked', revoked_at = $2, invitation_token = NULL, customer_id = NULL,
	member_id = NULL, email = NULL, modified_at = $2`

// RevokeSeat marks a seat revoked.
func RevokeSeat(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, now time.Time) (*CustomerSeat, error) {
	var s CustomerSeat
	err := sqlx.GetContext(ctx, q, &s, `UPDATE customer_seats SET `+revokedSeat+`
		WHERE id = $1 RETURNING `+seatColumns, id, now)
	return &s, mapErr(err)
}

// ReissueSeatToken replaces a pending seat's claim token hash (its expiry stays): only hashes
// are stored, so resending an invitation sends a new token and the old one stops working.
func ReissueSeatToken(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, tokenHash string, now time.Time) (*CustomerSeat, error) {
	var s CustomerSeat
	err := sqlx.GetContext(ctx, q, &s, `UPDATE customer_seats SET invitation_token = $2, modified_at = $3
		WHERE id = $1 AND status = 'pending' RETURNING `+seatColumns, id, tokenHash, now)
	return &s, mapErr(err)
}

// MemberSeats lists the pending and claimed seats a member holds, locked, oldest first: a
// member who leaves gives them all up.
func MemberSeats(ctx context.Context, q sqlx.ExtContext, memberID uuid.UUID) ([]*CustomerSeat, error) {
	rows := []*CustomerSeat{}
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+seatColumns+` FROM customer_seats
		WHERE member_id = $1 AND status <> 'revoked' ORDER BY created_at, id FOR UPDATE`, memberID)
	return rows, mapErr(err)
}

// SetMemberSeatsEmail gives the pending and claimed seats of a member its new email.
func SetMemberSeatsEmail(ctx context.Context, q sqlx.ExtContext, memberID uuid.UUID, email string) error {
	_, err := q.ExecContext(ctx, `UPDATE customer_seats SET email = $2, modified_at = now()
		WHERE member_id = $1 AND status <> 'revoked'`, memberID, email)
	return mapErr(err)
}

// GetCustomerSeat reads a seat of a subscription or order the customer bought, locked when
// lock is set: the portal reaches seats through its purchases, whoever holds them.
func GetCustomerSeat(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID, id uuid.UUID, lock bool) (*CustomerSeat, error) {
	query := `SELECT ` + qualify("cs", seatColumns) + ` FROM customer_seats cs
		LEFT JOIN subscriptions s ON s.id = cs.subscription_id
		LEFT JOIN orders o ON o.id = cs.order_id
		WHERE cs.id = $1 AND cs.organization_id = ANY($2) AND (s.customer_id = $3 OR o.customer_id = $3)`
	if lock {
		query += " FOR UPDATE OF cs"
	}
	var s CustomerSeat
	err := sqlx.GetContext(ctx, q, &s, query, id, pq.Array(orgs), customerID)
	return &s, mapErr(err)
}

// SourceSeats lists every seat of a subscription or order, oldest first.
func SourceSeats(ctx context.Context, q sqlx.ExtContext, src *SeatSource) ([]*CustomerSeat, error) {
	rows := []*CustomerSeat{}
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+seatColumns+` FROM customer_seats
		WHERE subscription_id = $1 OR order_id = $2 ORDER BY created_at, id`, src.SubscriptionID, src.OrderID)
	return rows, mapErr(err)
}

// ClaimedSeatMembers lists the members holding a claimed seat of the source: the holders of
// a seat-based purchase's benefits.
func ClaimedSeatMembers(ctx context.Context, q sqlx.ExtContext, src *SeatSource) ([]uuid.UUID, error) {
	ids := []uuid.UUID{}
	err := sqlx.SelectContext(ctx, q, &ids, `SELECT member_id FROM customer_seats
		WHERE (subscription_id = $1 OR order_id = $2) AND status = 'claimed' AND member_id IS NOT NULL
		ORDER BY claimed_at, id`, src.SubscriptionID, src.OrderID)
	return ids, mapErr(err)
}

// EnsureMemberByEmail returns the customer's live member with this email (case-insensitive),
// creating a plain member when there is none. As in EnsureOwnerMember, a concurrent insert
// makes ON CONFLICT skip with a snapshot that cannot see the winner; a second statement does.
func EnsureMemberByEmail(ctx context.Context, q sqlx.ExtContext, orgID, customerID uuid.UUID, email string) (*Member, error) {
	find := `SELECT ` + memberColumns + ` FROM members
		WHERE organization_id = $1 AND customer_id = $2 AND lower(email) = lower($3) AND deleted_at IS NULL`
	var m Member
	err := sqlx.GetContext(ctx, q, &m, `WITH ins AS (
			INSERT INTO members (organization_id, customer_id, email, role) VALUES ($1, $2, $3, 'member')
			ON CONFLICT DO NOTHING RETURNING `+memberColumns+`)
		SELECT * FROM ins UNION ALL (`+find+`) LIMIT 1`, orgID, customerID, email)
	if err = mapErr(err); err != ErrNotFound {
		return &m, err
	}
	err = sqlx.GetContext(ctx, q, &m, find, orgID, customerID, email)
	return &m, mapErr(err)
}

// RevokeSubscriptionSeats revokes every seat of a subscription that is not revoked yet and
// returns them, for when the subscription ends.
func RevokeSubscriptionSeats(ctx context.Context, q sqlx.ExtContext, subscriptionID uuid.UUID, now time.Time) ([]*CustomerSeat, error) {
	rows := []*CustomerSeat{}
	err := sqlx.SelectContext(ctx, q, &rows, `UPDATE customer_seats SET `+revokedSeat+`
		WHERE subscription_id = $1 AND status <> 'revoked' RETURNING `+seatColumns, subscriptionID, now)
	return rows, mapErr(err)
}

// SeatSourceOfCheckout finds what a checkout of the customer produced, as upstream resolves
// a seat assignment by checkout: its subscription, or else its earliest order.
func SeatSourceOfCheckout(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, customerID, checkoutID uuid.UUID) (subscriptionID, orderID *uuid.UUID, err error) {
	var row struct {
		SubscriptionID *uuid.UUID `db:"subscription_id"`
		OrderID        *uuid.UUID `db:"order_id"`
	}
	err = sqlx.GetContext(ctx, q, &row, `SELECT
			(SELECT id FROM subscriptions WHERE checkout_id = $1 AND customer_id = $2 AND organization_id = ANY($3)
				AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1) AS subscription_id,
			(SELECT id FROM orders WHERE checkout_id = $1 AND customer_id = $2 AND organization_id = ANY($3)
				AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1) AS order_id`, checkoutID, customerID, pq.Array(orgs))
	switch {
	case err != nil:
		return nil, nil, mapErr(err)
	case row.SubscriptionID != nil:
		return row.SubscriptionID, nil, nil
	case row.OrderID != nil:
		return nil, row.OrderID, nil
	}
	return nil, nil, ErrNotFound
}

// FindSeatByToken reads the seat holding a claim token hash without locking it, for the
// read-only look at an invitation.
func FindSeatByToken(ctx context.Context, q sqlx.ExtContext, tokenHash string) (*CustomerSeat, error) {
	var s CustomerSeat
	err := sqlx.GetContext(ctx, q, &s, `SELECT `+seatColumns+` FROM customer_seats WHERE invitation_token = $1`, tokenHash)
	return &s, mapErr(err)
}
