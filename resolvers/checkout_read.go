package resolvers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// expireBatch bounds one expiry transaction, so a backlog never holds many row locks at once.
const expireBatch = 500

// checkout reads one checkout of the caller's organizations.
func (r *Resolver) checkout(ctx context.Context, id uuid.UUID) (*storage.Checkout, error) {
	c, err := storage.GetCheckout(ctx, r.db, organizations(ctx), id, r.Now())
	return c, notFoundOr(err, "")
}

// checkoutByClientSecret reads a checkout for the buyer's page; the secret is the credential.
func (r *Resolver) checkoutByClientSecret(ctx context.Context, secret string) (*storage.Checkout, error) {
	c, err := storage.GetCheckoutByClientSecret(ctx, r.db, secret, r.Now())
	return c, notFoundOr(err, "")
}

// sellerOnly is v for a principal of the checkout's organization (an organization token, or
// a user of it; webhook payloads render as the organization) and hidden otherwise. The buyer
// reads a checkout with its client secret only: upstream's public checkout leaves out the
// seller's metadata, customer metadata and external customer id, so a buyer never sees what
// the seller keeps about the checkout or the customer.
func sellerOnly[T any](ctx context.Context, c *storage.Checkout, v, hidden T) T {
	p := auth.FromContext(ctx)
	if p.Kind != auth.KindOrganization && p.Kind != auth.KindUser {
		return hidden
	}
	for _, o := range organizations(ctx) {
		if o == c.OrganizationID {
			return v
		}
	}
	return hidden
}

// checkoutsPage lists checkouts with GET /v1/checkouts/'s filters and sorts, noting them
// as read together so their relations load in one statement each.
func (r *Resolver) checkoutsPage(ctx context.Context, a listArgs, f *model.CheckoutFilter) (*model.CheckoutPage, error) {
	w, sorts, err := a.windowAndSorts(storage.CheckoutSortColumn)
	if err != nil {
		return nil, err
	}
	p, err := storage.ListCheckouts(ctx, r.db, organizations(ctx), checkoutFilterOf(f), sorts, w, r.Now())
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return checkoutPageOf(p, w), nil
}

// checkoutFilterOf turns the GraphQL filter into the storage one.
func checkoutFilterOf(f *model.CheckoutFilter) storage.CheckoutListFilter {
	if f == nil {
		return storage.CheckoutListFilter{}
	}
	return storage.CheckoutListFilter{OrganizationIDs: f.OrganizationID, ProductIDs: f.ProductID,
		CustomerIDs: f.CustomerID, ExternalCustomerIDs: f.ExternalCustomerID, Statuses: f.Status, Query: f.Query}
}

// checkoutPageOf is the GraphQL page of a window of checkouts.
func checkoutPageOf(p storage.Paged[*storage.Checkout], w storage.Window) *model.CheckoutPage {
	return &model.CheckoutPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}
}

// ExpireCheckouts marks every open checkout past expires_at at now as expired, recording
// checkout.expired for each in the same transaction, and returns how many it expired. The
// serve loop calls it periodically; several processes may run it at once. Until it runs,
// readers already see such checkouts as expired.
func (r *Resolver) ExpireCheckouts(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		var n int
		err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
			rows, err := storage.ExpireCheckouts(ctx, tx, now, expireBatch)
			if err != nil {
				return err
			}
			for _, c := range rows {
				if err := r.emit(ctx, tx, c.OrganizationID, "checkout.expired", c.ID); err != nil {
					return err
				}
			}
			n = len(rows)
			return nil
		})
		total += n
		if err != nil || n < expireBatch {
			return total, err
		}
	}
}

// confirmLease is how long a confirmed checkout belongs to the confirm that set it before a
// sweep may reopen it. The purchase step holds the checkout's row lock for as long as it
// runs, however long the processor takes, and the sweep skips locked rows; so the lease
// only covers the moment between confirm's two transactions, and a buyer whose server died
// mid-purchase can pay again within seconds rather than after a fixed grace. A purchase
// step that starts after a sweep reopened its checkout finds it open and refuses, and the
// charge's idempotency key (the checkout id) keeps a retried charge from being taken twice.
const confirmLease = 10 * time.Second

// ReopenStaleCheckouts reopens checkouts a crash left confirmed, recording checkout.updated
// for each, so their buyers can confirm again. The serve loop calls it with ExpireCheckouts.
func (r *Resolver) ReopenStaleCheckouts(ctx context.Context, now time.Time) (int, error) {
	var n int
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		rows, err := storage.ReopenStaleCheckouts(ctx, tx, now.Add(-confirmLease), expireBatch)
		if err != nil {
			return err
		}
		for _, c := range rows {
			if err := r.emit(ctx, tx, c.OrganizationID, "checkout.updated", c.ID); err != nil {
				return err
			}
		}
		n = len(rows)
		return nil
	})
	return n, err
}

// checkoutFlagsOf loads what the derived flags depend on through the operation's loaders.
func (r *Resolver) checkoutFlagsOf(ctx context.Context, c *storage.Checkout) (checkoutFlags, error) {
	var (
		product *storage.Product
		prices  []*storage.ProductPrice
		disc    *storage.Discount
		err     error
	)
	l := loaders(ctx)
	productOf := func(c *storage.Checkout) *uuid.UUID { return c.ProductID }
	if c.ProductID != nil {
		if product, err = relatedOpt(ctx, l.Product, c, productOf); err != nil {
			return checkoutFlags{}, err
		}
		if prices, err = relatedOpt(ctx, l.PricesByProduct, c, productOf); err != nil {
			return checkoutFlags{}, err
		}
	}
	if len(prices) == 0 && c.ProductPriceID != nil {
		p, err := relatedOpt(ctx, l.Price, c, func(c *storage.Checkout) *uuid.UUID { return c.ProductPriceID })
		if err != nil {
			return checkoutFlags{}, err
		}
		prices = []*storage.ProductPrice{p}
	}
	if c.DiscountID != nil {
		if disc, err = relatedOpt(ctx, l.Discount, c, func(c *storage.Checkout) *uuid.UUID { return c.DiscountID }); err != nil {
			return checkoutFlags{}, err
		}
	}
	return flagsOf(c, product, prices, disc), nil
}

// checkoutActiveTrial is the trial interval and count the checkout would start.
func (r *Resolver) checkoutActiveTrial(ctx context.Context, c *storage.Checkout) (*storage.Interval, *int, error) {
	if c.ProductID == nil {
		return nil, nil, nil
	}
	p, err := relatedOpt(ctx, loaders(ctx).Product, c, func(c *storage.Checkout) *uuid.UUID { return c.ProductID })
	if err != nil {
		return nil, nil, err
	}
	interval, count := activeTrial(c, p)
	return interval, count, nil
}

// checkoutURL is where the buyer pays: Till's checkout page for the client secret.
func (r *Resolver) checkoutURL(c *storage.Checkout) string {
	return fmt.Sprintf("%s/checkout/%s", r.portalURL, c.ClientSecret)
}

// checkoutProduct is the selected product.
func (r *Resolver) checkoutProduct(ctx context.Context, c *storage.Checkout) (*storage.Product, error) {
	if c.ProductID == nil {
		return nil, nil
	}
	return relatedOpt(ctx, loaders(ctx).Product, c, func(c *storage.Checkout) *uuid.UUID { return c.ProductID })
}
