package resolvers

import (
	"context"
	"fmt"
	"time"

	"github.com/99designs/gqlgen/graphql"
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
	c, err := storage.GetCheckout(ctx, r.DB, organizations(ctx), id, r.Now())
	return c, notFoundOr(err, "")
}

// checkoutByClientSecret reads a checkout for the buyer's page; the secret is the credential.
func (r *Resolver) checkoutByClientSecret(ctx context.Context, secret string) (*storage.Checkout, error) {
	c, err := storage.GetCheckoutByClientSecret(ctx, r.DB, secret, r.Now())
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

// checkoutsPage lists checkouts with GET /v1/checkouts/'s filters and sorts, priming the
// relations the operation selects.
func (r *Resolver) checkoutsPage(ctx context.Context, page, limit *int, sorting []string, f *model.CheckoutFilter) (*model.CheckoutPage, error) {
	p, sorts, err := pageAndSorts(page, limit, sorting, storage.CheckoutSortColumn)
	if err != nil {
		return nil, err
	}
	var lf storage.CheckoutListFilter
	if f != nil {
		lf = storage.CheckoutListFilter{OrganizationIDs: f.OrganizationID, ProductIDs: f.ProductID,
			CustomerIDs: f.CustomerID, ExternalCustomerIDs: f.ExternalCustomerID, Statuses: f.Status, Query: f.Query}
	}
	items, total, err := storage.ListCheckouts(ctx, r.DB, organizations(ctx), lf, sorts, p, r.Now())
	if err != nil {
		return nil, err
	}
	if err := r.primeCheckouts(ctx, items); err != nil {
		return nil, err
	}
	return &model.CheckoutPage{Items: items, Pagination: pagination(total, p)}, nil
}

// ExpireCheckouts marks every open checkout past expires_at at now as expired, recording
// checkout.expired for each in the same transaction, and returns how many it expired. The
// serve loop calls it periodically; several processes may run it at once. Until it runs,
// readers already see such checkouts as expired.
func (r *Resolver) ExpireCheckouts(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		var n int
		err := storage.InTx(ctx, r.DB, func(tx *sqlx.Tx) error {
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

// staleConfirmGrace is how long a checkout may stay confirmed before it counts as left by a
// crash between the two steps of confirm (the second holds the row lock while it runs).
const staleConfirmGrace = 2 * time.Minute

// ReopenStaleCheckouts reopens checkouts a crash left confirmed, recording checkout.updated
// for each, so their buyers can confirm again. The serve loop calls it with ExpireCheckouts.
func (r *Resolver) ReopenStaleCheckouts(ctx context.Context, now time.Time) (int, error) {
	var n int
	err := storage.InTx(ctx, r.DB, func(tx *sqlx.Tx) error {
		rows, err := storage.ReopenStaleCheckouts(ctx, tx, now.Add(-staleConfirmGrace), expireBatch)
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
	if c.ProductID != nil {
		if product, err = l.Product.Load(ctx, *c.ProductID)(); err != nil {
			return checkoutFlags{}, err
		}
		if prices, err = l.PricesByProduct.Load(ctx, *c.ProductID)(); err != nil {
			return checkoutFlags{}, err
		}
	}
	if len(prices) == 0 && c.ProductPriceID != nil {
		p, err := l.Price.Load(ctx, *c.ProductPriceID)()
		if err != nil {
			return checkoutFlags{}, err
		}
		prices = []*storage.ProductPrice{p}
	}
	if c.DiscountID != nil {
		if disc, err = l.Discount.Load(ctx, *c.DiscountID)(); err != nil {
			return checkoutFlags{}, err
		}
	}
	return flagsOf(c, product, prices, disc), nil
}

// checkoutActiveTrial is the trial interval and count the checkout would start.
func (r *Resolver) checkoutActiveTrial(ctx context.Context, c *storage.Checkout) (*string, *int, error) {
	if c.ProductID == nil {
		return nil, nil, nil
	}
	p, err := loaders(ctx).Product.Load(ctx, *c.ProductID)()
	if err != nil {
		return nil, nil, err
	}
	interval, count := activeTrial(c, p)
	return interval, count, nil
}

// checkoutURL is where the buyer pays: Till's checkout page for the client secret.
func (r *Resolver) checkoutURL(c *storage.Checkout) string {
	return fmt.Sprintf("%s/checkout/%s", r.PortalURL, c.ClientSecret)
}

// checkoutProduct is the selected product.
func (r *Resolver) checkoutProduct(ctx context.Context, c *storage.Checkout) (*storage.Product, error) {
	if c.ProductID == nil {
		return nil, nil
	}
	return loaders(ctx).Product.Load(ctx, *c.ProductID)()
}

// picksPrices reports whether a checkout page selects a product price field (typed or as
// /v1 spells it) of the offered or the selected products.
func picksPrices(picks func(...selection) bool, field string) bool {
	return picks(selection{"Checkout", "products"}, selection{"CheckoutProduct", field}) ||
		picks(selection{"Checkout", "product"}, selection{"CheckoutProduct", field})
}

// primeCheckouts loads the relations a checkout page selects with one statement each:
// offered products, their prices, benefits and meters, the selected product, price and
// discount. The loaders' batch window alone would split a page's nested loads under load.
func (r *Resolver) primeCheckouts(ctx context.Context, items []*storage.Checkout) error {
	if len(items) == 0 {
		return nil
	}
	fields := graphql.CollectFieldsCtx(ctx, []string{"CheckoutPage"})
	picks := func(path ...selection) bool {
		return selects(ctx, fields, append([]selection{{"CheckoutPage", "items"}}, path...))
	}
	pick := func(names ...string) bool {
		for _, n := range names {
			if picks(selection{"Checkout", n}) {
				return true
			}
		}
		return false
	}
	flags := pick("isDiscountApplicable", "isFreeProductPrice", "isPaymentRequired", "isPaymentSetupRequired",
		"isPaymentFormRequired", "activeTrialInterval", "activeTrialIntervalCount")
	ids := make([]uuid.UUID, len(items))
	var selected, priceIDs, discountIDs []uuid.UUID
	for i, c := range items {
		ids[i] = c.ID
		if c.ProductID != nil {
			selected = append(selected, *c.ProductID)
		}
		if c.ProductPriceID != nil {
			priceIDs = append(priceIDs, *c.ProductPriceID)
		}
		if c.DiscountID != nil {
			discountIDs = append(discountIDs, *c.DiscountID)
		}
	}
	l := loaders(ctx)
	offered := append([]uuid.UUID(nil), selected...)
	if pick("products", "prices") {
		rows, err := storage.ProductsByCheckouts(ctx, r.DB, ids)
		if err != nil {
			return err
		}
		for i, products := range rows {
			l.ProductsByCheckout.Prime(ctx, ids[i], products)
			for _, p := range products {
				offered = append(offered, p.ID)
			}
		}
	}
	var prices []*storage.ProductPrice
	if flags || pick("prices") || picksPrices(picks, "prices") || picksPrices(picks, "wirePrices") {
		unique := uniqueIDs(offered)
		rows, err := storage.PricesByProducts(ctx, r.DB, unique)
		if err != nil {
			return err
		}
		for i, list := range rows {
			l.PricesByProduct.Prime(ctx, unique[i], list)
			prices = append(prices, list...)
		}
	}
	if picks(selection{"Checkout", "products"}, selection{"CheckoutProduct", "benefits"}) ||
		picks(selection{"Checkout", "product"}, selection{"CheckoutProduct", "benefits"}) {
		if err := prime(ctx, r.DB, l.BenefitsByProduct, storage.ProductBenefitsByProducts, uniqueIDs(offered),
			selection{"CheckoutPage", "items"}); err != nil {
			return err
		}
	}
	var meters []uuid.UUID
	for _, p := range prices {
		if p.MeterID != nil {
			meters = append(meters, *p.MeterID)
		}
	}
	if pick("productPrice", "wireProductPrice") {
		rows, err := storage.PricesByIDs(ctx, r.DB, uniqueIDs(priceIDs))
		if err != nil {
			return err
		}
		for _, p := range rows {
			if p != nil {
				l.Price.Prime(ctx, p.ID, p)
				if p.MeterID != nil {
					meters = append(meters, *p.MeterID)
				}
			}
		}
	}
	if !flags && !pick("product") {
		selected = nil
	}
	if !flags && !pick("discount") {
		discountIDs = nil
	}
	for _, step := range []error{
		prime(ctx, r.DB, l.PriceMeter, storage.PriceMetersByIDs, meters, selection{"CheckoutPage", "items"}),
		prime(ctx, r.DB, l.Product, storage.ProductsByIDs, selected, selection{"CheckoutPage", "items"}),
		prime(ctx, r.DB, l.Discount, storage.DiscountsByIDs, discountIDs, selection{"CheckoutPage", "items"}),
	} {
		if step != nil {
			return step
		}
	}
	return nil
}
