package resolvers

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// sessionTTL is upstream's CUSTOMER_SESSION_TTL: fixed, not sliding, not refreshable.
const sessionTTL = time.Hour

// createCustomerSession opens a portal session for a customer, or for one of its members
// when the organization uses the member model (contract §3.2).
func (r *Resolver) createCustomerSession(ctx context.Context, in model.CustomerSessionCreateInput) (*model.CustomerSession, error) {
	if in.ReturnURL != nil {
		if err := checkURL(*in.ReturnURL, "input", "returnUrl"); err != nil {
			return nil, err
		}
	}
	c, err := r.customerByRef(ctx, in.CustomerID, in.ExternalCustomerID)
	if err != nil {
		var te *Error
		if errors.As(err, &te) && te.Code == CodeNotFound {
			if in.CustomerID != nil {
				return nil, Invalid("value_error", "Customer does not exist.", in.CustomerID.String(), "input", "customerId")
			}
			return nil, Invalid("value_error", "Customer does not exist.", in.ExternalCustomerID, "input", "externalCustomerId")
		}
		return nil, err
	}
	org, err := storage.GetOrganization(ctx, r.db, c.OrganizationID)
	if err != nil {
		return nil, err
	}
	expires := r.Now().Add(sessionTTL)
	var (
		s     *storage.Session
		email = c.Email
		token string
	)
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		if !org.MemberModelEnabled() {
			token = auth.Generate(auth.PrefixCustomerSession)
			s, err = storage.CreateCustomerSession(ctx, tx, c.OrganizationID, c.ID, auth.Hash(r.secret, token), expires, in.ReturnURL)
			return err
		}
		m, err := memberForSession(ctx, tx, c, in)
		if err != nil {
			return err
		}
		token = auth.Generate(auth.PrefixMemberSession)
		s, err = storage.CreateMemberSession(ctx, tx, c.OrganizationID, c.ID, m.ID, auth.Hash(r.secret, token), expires, in.ReturnURL)
		email = &m.Email
		return err
	})
	if err != nil {
		return nil, err
	}
	q := url.Values{"customer_session_token": {token}}
	if email != nil {
		q.Set("email", *email)
	}
	return &model.CustomerSession{ID: s.ID, CreatedAt: s.CreatedAt, ModifiedAt: s.ModifiedAt, Token: token,
		ExpiresAt: s.ExpiresAt, ReturnURL: s.ReturnURL, CustomerID: c.ID, Customer: c,
		CustomerPortalURL: r.portalURL + "/" + org.Slug + "/portal?" + q.Encode()}, nil
}

// memberForSession picks the member a member session is for: by id, then external id, else
// the owner (created for individual customers when missing).
func memberForSession(ctx context.Context, q sqlx.ExtContext, c *storage.Customer, in model.CustomerSessionCreateInput) (*storage.Member, error) {
	var (
		m   *storage.Member
		err error
	)
	switch {
	case in.MemberID != nil:
		m, err = storage.GetMember(ctx, q, c.ID, *in.MemberID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, Invalid("value_error", "Member does not exist for this customer.", in.MemberID.String(), "input", "memberId")
		}
	case in.ExternalMemberID != nil:
		m, err = storage.GetMemberByExternalID(ctx, q, c.ID, *in.ExternalMemberID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, Invalid("value_error", "Member does not exist for this customer.", *in.ExternalMemberID, "input", "externalMemberId")
		}
	case c.Type == storage.CustomerTypeTeam:
		return nil, Invalid("value_error", "member_id is required for team customers.", nil, "input", "memberId")
	default:
		m, err = storage.EnsureOwnerMember(ctx, q, c)
		if errors.Is(err, storage.ErrNotFound) {
			// Another member already uses the customer's email, so no owner could be made.
			return nil, Invalid("value_error", "member_id is required: the customer has no owner member.", nil, "input", "memberId")
		}
	}
	return m, err
}

// checkURL accepts absolute http(s) URLs up to 2083 characters, as upstream's HttpUrl.
func checkURL(s string, loc ...any) error {
	u, err := url.Parse(s)
	if len(s) > 2083 {
		return Invalid("url_too_long", "URL should have at most 2083 characters", s, loc...)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Invalid("url_parsing", "Input should be a valid URL, relative URL without a base", s, loc...)
	}
	return nil
}
