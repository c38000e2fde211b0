package storage

import (
	"context"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// SeatListFilter narrows a seat list. Values of one field are OR-ed, fields AND-ed; empty
// fields do not filter.
type SeatListFilter struct {
	// CustomerID and MemberID scope the portal lists: a customer sees the seats of its
	// purchases, a member the seats it holds.
	CustomerID *uuid.UUID
	MemberID   *uuid.UUID
	Statuses   []CustomerSeatStatus
}

// SeatSortColumns maps the sort properties of seat lists to SQL over seatList's alias cs.
var SeatSortColumns = map[string]string{
	"created_at": "cs.created_at",
	"claimed_at": "cs.claimed_at",
	"revoked_at": "cs.revoked_at",
	"status":     "cs.status",
	"email":      "lower(cs.email)",
}

// ListSeats returns one window of the organizations' seats, oldest first unless sorted
// otherwise, with the total count.
func ListSeats(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f SeatListFilter, sorts []Sort, w Window) (Paged[*CustomerSeat], error) {
	return listWindow[*CustomerSeat](ctx, q, seatList(orgs, f, sorts), w)
}

// SeatWindowsByCustomers returns one window of the seats of each customer's purchases, in
// key order, with the filters and sorting of ListSeats, in one statement.
func SeatWindowsByCustomers(ctx context.Context, q sqlx.ExtContext, orgs, customers []uuid.UUID, f SeatListFilter, sorts []Sort, w Window) ([]Paged[*CustomerSeat], error) {
	return listWindows(ctx, q, seatList(orgs, f, sorts), "cs.customer_id", customers, w,
		func(s *CustomerSeat) uuid.UUID { return derefID(s.CustomerID) })
}

// SeatWindowsBySubscriptions returns one window of each subscription's seats, in key order.
func SeatWindowsBySubscriptions(ctx context.Context, q sqlx.ExtContext, orgs, subscriptions []uuid.UUID, f SeatListFilter, sorts []Sort, w Window) ([]Paged[*CustomerSeat], error) {
	return listWindows(ctx, q, seatList(orgs, f, sorts), "cs.subscription_id", subscriptions, w,
		func(s *CustomerSeat) uuid.UUID { return derefID(s.SubscriptionID) })
}

// SeatWindowsByOrders returns one window of each order's seats, in key order.
func SeatWindowsByOrders(ctx context.Context, q sqlx.ExtContext, orgs, orders []uuid.UUID, f SeatListFilter, sorts []Sort, w Window) ([]Paged[*CustomerSeat], error) {
	return listWindows(ctx, q, seatList(orgs, f, sorts), "cs.order_id", orders, w,
		func(s *CustomerSeat) uuid.UUID { return derefID(s.OrderID) })
}

// seatList is the seat list query.
func seatList(orgs []uuid.UUID, f SeatListFilter, sorts []Sort) listSQL {
	w := orgFilters("cs.organization_id", orgs)
	ifSet(w, "cs.customer_id = $%d", f.CustomerID)
	ifSet(w, "cs.member_id = $%d", f.MemberID)
	anyOf(w, "cs.status", f.Statuses)
	return listSQL{Columns: qualify("cs", seatColumns), From: "customer_seats cs", ID: "cs.id",
		Where: w.where, Args: w.args, Sorts: sorts, Default: []Sort{{Column: "cs.created_at"}}}
}
