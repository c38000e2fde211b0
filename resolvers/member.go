package resolvers

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// Members of customers, upstream's member model: every customer has one owner (made with the
// customer), and its people act for it in the portal through member sessions carrying their
// role. The organization manages them (members_read, members_write); the owner and billing
// managers of a team manage them in the portal.

// memberSorts whitelists the sorting of member lists.
var memberSorts = storage.MemberSortColumns

// codeAmbiguousExternalCustomerID is upstream's 409 for an external customer id that names
// customers of several of a user token's organizations.
const codeAmbiguousExternalCustomerID = "AmbiguousExternalCustomerID"

// memberNotFound and customerNotFound are upstream's details for a member or customer that
// is not there, or not the caller's.
const (
	memberNotFound   = "Member not found"
	customerNotFound = "Customer not found"
)

// customerMembers is Customer.members: a window of each customer's live members of the
// level, in one statement.
func (r *Resolver) customerMembers(ctx context.Context, c *storage.Customer, a listArgs, roles []storage.MemberRole) (*model.MemberPage, error) {
	p, w, err := relatedWindow(ctx, r.db, "Customer.members", c, func(c *storage.Customer) uuid.UUID { return c.ID }, a,
		memberSorts, storage.MemberListFilter{Roles: roles}, storage.MemberWindowsByCustomers)
	if err != nil {
		return nil, err
	}
	return memberPageOf(p, w), nil
}

// membersPage is the organization's member list. customerID is text, as upstream takes it:
// text that is not a UUID names no customer, which upstream answers with a not-found.
func (r *Resolver) membersPage(ctx context.Context, a listArgs, customerID, externalCustomerID *string, role *storage.MemberRole) (*model.MemberPage, error) {
	f := storage.MemberListFilter{ExternalCustomerID: externalCustomerID}
	if customerID != nil {
		id, err := uuid.Parse(*customerID)
		if err != nil {
			return nil, NotFound("Invalid customer ID format")
		}
		f.CustomerID = &id
	}
	if role != nil {
		f.Roles = []storage.MemberRole{*role}
	}
	p, w, err := rootWindow(ctx, a, memberSorts, func(sorts []storage.Sort, w storage.Window) (storage.Paged[*storage.Member], error) {
		return storage.ListMembers(ctx, r.db, organizations(ctx), f, sorts, w)
	})
	if err != nil {
		return nil, err
	}
	return memberPageOf(p, w), nil
}

// memberPageOf is the GraphQL page of a window of members.
func memberPageOf(p storage.Paged[*storage.Member], w storage.Window) *model.MemberPage {
	return &model.MemberPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}
}

// memberOfOrganization is Query.member: a member of the caller's organizations by id,
// deleted ones included, as member.deleted reports them.
func (r *Resolver) memberOfOrganization(ctx context.Context, id uuid.UUID) (*storage.Member, error) {
	m, err := storage.GetCustomerMember(ctx, r.db, organizations(ctx), id, true)
	return m, notFoundOr(err, memberNotFound)
}

// customerMember is Query.customerMember.
func (r *Resolver) customerMember(ctx context.Context, ref model.MemberRefInput) (*storage.Member, error) {
	return memberByRef(ctx, r.db, &ref, "ref")
}

// customerIDByRef resolves exactly one of a customer id and an external customer id to a
// live customer of the caller's organizations. An external id that names customers of
// several of them is ambiguous, as upstream answers it. notFound is the detail when there is
// no such customer; loc is where the input sits.
func customerIDByRef(ctx context.Context, q sqlx.ExtContext, id *uuid.UUID, externalID *string, notFound string, loc ...any) (uuid.UUID, error) {
	switch {
	case (id == nil) == (externalID == nil):
		return uuid.Nil, Invalid("value_error", "Exactly one of customerId and externalCustomerId is required.", nil,
			append(loc, "customerId")...)
	case id != nil:
		c, err := storage.GetCustomer(ctx, q, organizations(ctx), *id)
		if err != nil {
			return uuid.Nil, notFoundOr(err, notFound)
		}
		return c.ID, nil
	}
	ids, err := storage.CustomerIDsByExternalID(ctx, q, organizations(ctx), *externalID)
	switch {
	case err != nil:
		return uuid.Nil, err
	case len(ids) == 0:
		return uuid.Nil, NotFound(notFound)
	case len(ids) > 1:
		return uuid.Nil, &Error{Code: codeAmbiguousExternalCustomerID, Detail: "Several customers across your organizations " +
			"share this external customer ID. Use an organization-scoped token, the customer ID, or a unique external ID to disambiguate."}
	}
	return ids[0], nil
}

// memberByRef resolves a MemberRefInput to a live member of a customer of the caller's
// organizations; a member of another customer or organization is not found, as upstream.
func memberByRef(ctx context.Context, q sqlx.ExtContext, ref *model.MemberRefInput, loc ...any) (*storage.Member, error) {
	if (ref.ID == nil) == (ref.ExternalID == nil) {
		return nil, Invalid("value_error", "Exactly one of id and externalId is required.", nil, append(loc, "id")...)
	}
	customerID, err := customerIDByRef(ctx, q, ref.CustomerID, ref.ExternalCustomerID, memberNotFound, loc...)
	if err != nil {
		return nil, err
	}
	var m *storage.Member
	if ref.ID != nil {
		m, err = storage.GetMember(ctx, q, customerID, *ref.ID)
	} else {
		m, err = storage.GetMemberByExternalID(ctx, q, customerID, *ref.ExternalID)
	}
	if err == nil && !slices.Contains(organizations(ctx), m.OrganizationID) {
		err = storage.ErrNotFound
	}
	return m, notFoundOr(err, memberNotFound)
}

// lockedMember locks the member's customer, so the changes to one customer's members run
// one at a time, and reads the member again under that lock: a member removed meanwhile is
// not found.
func lockedMember(ctx context.Context, tx *sqlx.Tx, m *storage.Member) (*storage.Customer, *storage.Member, error) {
	c, err := storage.LockCustomer(ctx, tx, organizations(ctx), m.CustomerID)
	if err != nil {
		return nil, nil, notFoundOr(err, memberNotFound)
	}
	m, err = storage.GetMember(ctx, tx, c.ID, m.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, NotFound(memberNotFound)
	}
	return c, m, err
}
