package resolvers

import (
	"context"

	"github.com/google/uuid"

	"till/graph/model"
	"till/storage"
)

// memberSorts whitelists the sorting of member lists; oldest first by default.
var memberSorts = storage.MemberSortColumns

// customerMembers is Customer.members: a window of each customer's live members of the
// level, in one statement.
func (r *Resolver) customerMembers(ctx context.Context, c *storage.Customer, a listArgs, roles []string) (*model.MemberPage, error) {
	p, w, err := relatedWindow(ctx, r.db, "Customer.members", c, func(c *storage.Customer) uuid.UUID { return c.ID }, a,
		memberSorts, storage.MemberListFilter{Roles: roles}, storage.MemberWindowsByCustomers)
	if err != nil {
		return nil, err
	}
	return &model.MemberPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}
