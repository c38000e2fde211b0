package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// seatSorts whitelists the sorting of seat lists; oldest first by default, as the portal
// lists them.
var seatSorts = storage.SeatSortColumns

// portalSeats lists a customer's seats, or the seats a member holds.
func (r *Resolver) portalSeats(ctx context.Context, a listArgs, statuses []storage.CustomerSeatStatus) (*model.CustomerSeatPage, error) {
	w, sorts, err := a.windowAndSorts(seatSorts)
	if err != nil {
		return nil, err
	}
	s := auth.FromContext(ctx)
	p, err := storage.ListSeats(ctx, r.db, organizations(ctx), storage.SeatListFilter{CustomerID: &s.CustomerID,
		MemberID: sessionMember(s), Statuses: statuses}, sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return seatPageOf(p, w), nil
}

// seatRelation is a list of seats related to obj (Customer.seats, Subscription.customerSeats,
// …): a window per parent of the level, in one statement. A member session sees the seats
// it holds, as in its own list.
func seatRelation[P any](ctx context.Context, r *Resolver, name string, obj *P, key func(*P) uuid.UUID, a listArgs,
	statuses []storage.CustomerSeatStatus, fetch windowsFetch[storage.CustomerSeat, storage.SeatListFilter]) (*model.CustomerSeatPage, error) {
	f := storage.SeatListFilter{Statuses: statuses}
	if _, member := portalHolder(ctx); member != nil {
		f.MemberID = member
	}
	p, w, err := relatedWindow(ctx, r.db, name, obj, key, a, seatSorts, f, fetch)
	if err != nil {
		return nil, err
	}
	return seatPageOf(p, w), nil
}

// seatPageOf is the GraphQL page of a window of seats.
func seatPageOf(p storage.Paged[*storage.CustomerSeat], w storage.Window) *model.CustomerSeatPage {
	return &model.CustomerSeatPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}
}
