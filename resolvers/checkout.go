package resolvers

import (
	"context"
	"errors"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// checkoutSecretPrefix marks checkout client secrets, as upstream's polar_c_ does.
const checkoutSecretPrefix = "till_c_"

// checkoutChanges is what a create, an update or a confirm may change on a checkout, so the
// three share one set of rules. Omittables distinguish "absent" from "null".
type checkoutChanges struct {
	productID, productPriceID                      *uuid.UUID
	amount, seats                                  *int
	email, name, billingName, taxID                graphql.Omittable[*string]
	billingAddress                                 graphql.Omittable[*model.AddressInput]
	isBusiness, allowDiscountCodes, requireBilling *bool
	allowTrial                                     *bool
	discountID                                     graphql.Omittable[*uuid.UUID]
	discountCode                                   graphql.Omittable[*string]
	trialInterval                                  graphql.Omittable[*storage.Interval]
	trialIntervalCount                             graphql.Omittable[*int]
	successURL                                     *string
	returnURL, embedOrigin, locale                 graphql.Omittable[*string]
	metadata, customerMetadata, customFieldData    storage.JSONMap
}

// given wraps a plain optional input as present-when-set.
func given[T any](v *T) graphql.Omittable[*T] {
	if v == nil {
		return graphql.Omittable[*T]{}
	}
	return graphql.OmittableOf(v)
}

// setDetails validates the changes that do not affect the price and sets them on u.
// cur is the checkout as stored (for a create: its id and nothing else).
func setDetails(cur *storage.Checkout, ch checkoutChanges, u *storage.CheckoutUpdate) error {
	if v, ok := ch.email.ValueOK(); ok && cur.CustomerID == nil {
		if v != nil {
			if err := checkEmail(*v, "input", "customerEmail"); err != nil {
				return err
			}
		}
		u.CustomerEmail = storage.Set(v)
	}
	for _, f := range []struct {
		dst *storage.Omittable[*string]
		in  graphql.Omittable[*string]
	}{{&u.CustomerName, ch.name}, {&u.CustomerBillingName, ch.billingName}, {&u.ReturnURL, ch.returnURL},
		{&u.EmbedOrigin, ch.embedOrigin}, {&u.Locale, ch.locale}} {
		setGiven(f.dst, f.in.ValueOK)
	}
	if v, ok := ch.returnURL.ValueOK(); ok && v != nil {
		if err := checkURL(*v, "input", "returnUrl"); err != nil {
			return err
		}
	}
	address := cur.CustomerBillingAddress
	if v, ok := ch.billingAddress.ValueOK(); ok {
		a, err := addressOf(v, "input", "customerBillingAddress")
		if err != nil {
			return err
		}
		u.CustomerBillingAddress, address = storage.Set(a), a
	}
	taxID, taxGiven := ch.taxID.ValueOK()
	if !taxGiven && cur.CustomerTaxID != nil {
		taxID, taxGiven = cur.CustomerTaxID, address != cur.CustomerBillingAddress
	}
	if taxGiven {
		if taxID == nil || *taxID == "" {
			u.CustomerTaxID = storage.Set[*string](nil)
		} else {
			country := ""
			if address != nil {
				country = address.Country
			}
			if country == "" {
				return Invalid("missing", "Country is required to validate tax ID.", nil, "input", "customerBillingAddress")
			}
			v, _, err := taxIDOf(*taxID, country, "input", "customerTaxId")
			if err != nil {
				return err
			}
			u.CustomerTaxID = storage.Set(&v)
		}
	}
	for _, f := range []struct {
		dst *storage.Omittable[bool]
		in  *bool
	}{{&u.IsBusinessCustomer, ch.isBusiness}, {&u.AllowDiscountCodes, ch.allowDiscountCodes},
		{&u.RequireBillingAddress, ch.requireBilling}, {&u.AllowTrial, ch.allowTrial}} {
		if f.in != nil {
			*f.dst = storage.Set(*f.in)
		}
	}
	setGiven(&u.TrialInterval, ch.trialInterval.ValueOK)
	if v, ok := ch.trialIntervalCount.ValueOK(); ok {
		if err := checkCount(v, "input", "trialIntervalCount"); err != nil {
			return err
		}
		u.TrialIntervalCount = storage.Set(v)
	}
	if ch.successURL != nil {
		if err := checkURL(*ch.successURL, "input", "successUrl"); err != nil {
			return err
		}
		u.SuccessURL = storage.Set(strings.ReplaceAll(*ch.successURL, "{CHECKOUT_ID}", cur.ID.String()))
	}
	for _, f := range []struct {
		dst   *storage.Omittable[storage.JSONMap]
		field string
		in    storage.JSONMap
	}{{&u.Metadata, "metadata", ch.metadata}, {&u.CustomerMetadata, "customerMetadata", ch.customerMetadata},
		{&u.CustomFieldData, "customFieldData", ch.customFieldData}} {
		if f.in == nil {
			continue
		}
		if err := checkMetadata(f.in, "input", f.field); err != nil {
			return err
		}
		*f.dst = storage.Set(f.in)
	}
	return nil
}

// createCheckout opens a checkout for products of one organization.
func (r *Resolver) createCheckout(ctx context.Context, in model.CheckoutCreateInput) (*storage.Checkout, error) {
	if len(in.Products) == 0 {
		return nil, Invalid("too_short", "List should have at least 1 item after validation, not 0", []any{}, "input", "products")
	}
	for _, v := range []struct {
		n   *int
		loc string
	}{{in.Seats, "seats"}, {in.MinSeats, "minSeats"}, {in.MaxSeats, "maxSeats"}} {
		if err := checkCount(v.n, "input", v.loc); err != nil {
			return nil, err
		}
	}
	if in.MinSeats != nil && in.MaxSeats != nil && *in.MinSeats > *in.MaxSeats {
		return nil, Invalid("value_error", "Minimum seats must be less than or equal to maximum seats.", *in.MinSeats, "input", "minSeats")
	}
	ch := checkoutChanges{productPriceID: in.ProductPriceID, amount: in.Amount, seats: in.Seats,
		email: given(in.CustomerEmail), name: given(in.CustomerName), billingName: given(in.CustomerBillingName),
		taxID: given(in.CustomerTaxID), billingAddress: given(in.CustomerBillingAddress), isBusiness: in.IsBusinessCustomer,
		allowDiscountCodes: in.AllowDiscountCodes, requireBilling: in.RequireBillingAddress, allowTrial: in.AllowTrial,
		trialInterval: given(in.TrialInterval), trialIntervalCount: given(in.TrialIntervalCount), successURL: in.SuccessURL,
		returnURL: given(in.ReturnURL), embedOrigin: given(in.EmbedOrigin), locale: given(in.Locale),
		metadata: in.Metadata, customerMetadata: in.CustomerMetadata, customFieldData: in.CustomFieldData}
	var out *storage.Checkout
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		products, orgID, err := checkoutProducts(ctx, tx, in.Products)
		if err != nil {
			return err
		}
		d, err := draftFor(ctx, tx, orgID, products, in.ProductPriceID)
		if err != nil {
			return err
		}
		d.seats, d.minSeats, d.maxSeats = in.Seats, in.MinSeats, in.MaxSeats
		d.allowTrial, d.trialInterval, d.trialIntervalCount = in.AllowTrial, in.TrialInterval, in.TrialIntervalCount
		if d.allowTrial == nil {
			d.allowTrial = ptrTo(true)
		}
		if in.Amount != nil {
			a := int64(*in.Amount)
			d.customAmount = &a
		}
		cur := &storage.Checkout{ID: uuid.New()}
		if err := r.linkCustomer(ctx, tx, orgID, cur, &ch, in.CustomerID, in.ExternalCustomerID); err != nil {
			return err
		}
		if cur.CustomerID != nil {
			d.customerID = *cur.CustomerID
		}
		switch {
		case in.DiscountID != nil:
			d.discountID = in.DiscountID
		case in.DiscountCode != nil:
			if in.AllowDiscountCodes != nil && !*in.AllowDiscountCodes {
				return codesNotAllowed(*in.DiscountCode)
			}
			d.discountCode = in.DiscountCode
		}
		w := storage.CheckoutWrite{OrganizationID: orgID, ClientSecret: auth.Generate(checkoutSecretPrefix),
			ExpiresAt: r.Now().Add(checkoutTTL), ID: storage.Set(cur.ID), MinSeats: storage.Set(in.MinSeats),
			MaxSeats: storage.Set(in.MaxSeats), PaymentProcessor: storage.Set(r.payments.Name()),
			ExternalCustomerID: storage.Set(in.ExternalCustomerID)}
		w.AllowTrial, w.CustomerID = storage.Set(*d.allowTrial), storage.Set(cur.CustomerID)
		w.SuccessURL = storage.Set(r.portalURL + "/checkout/" + "{CLIENT_SECRET}/confirmation")
		prefill(cur, &w.CheckoutUpdate)
		if err := setDetails(cur, ch, &w.CheckoutUpdate); err != nil {
			return err
		}
		if _, err := r.price(ctx, tx, d, &w.CheckoutUpdate); err != nil {
			return err
		}
		success, _ := w.SuccessURL.Get()
		w.SuccessURL = storage.Set(strings.ReplaceAll(success, "{CLIENT_SECRET}", w.ClientSecret))
		ids := make([]uuid.UUID, len(products))
		for i, p := range products {
			ids[i] = p.ID
		}
		if out, err = storage.CreateCheckout(ctx, tx, w, ids, r.Now()); err != nil {
			return err
		}
		return r.emit(ctx, tx, orgID, "checkout.created", out.ID)
	})
	return out, err
}

func ptrTo[T any](v T) *T { return &v }

// codesNotAllowed rejects a discount code on a checkout that does not take codes.
func codesNotAllowed(code string) error {
	return Invalid("value_error", "Discount codes are not allowed on this checkout.", code, "input", "discountCode")
}

// checkoutProducts loads the listed products of the caller's organizations in order, without
// duplicates, and checks they are sellable and of one organization.
func checkoutProducts(ctx context.Context, tx *sqlx.Tx, ids []uuid.UUID) ([]*storage.Product, uuid.UUID, error) {
	if n := len(uniqueIDs(ids)); n > MaxCheckoutProducts {
		return nil, uuid.Nil, tooMany(n, MaxCheckoutProducts, "input", "products")
	}
	var out []*storage.Product
	seen := map[uuid.UUID]bool{}
	for i, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		p, err := storage.GetProduct(ctx, tx, organizations(ctx), id)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, uuid.Nil, Invalid("value_error", "Product does not exist.", id.String(), "input", "products", i)
		}
		if err != nil {
			return nil, uuid.Nil, err
		}
		if p.IsArchived {
			return nil, uuid.Nil, Invalid("value_error", "Product is archived.", id.String(), "input", "products", i)
		}
		if len(out) > 0 && p.OrganizationID != out[0].OrganizationID {
			return nil, uuid.Nil, Invalid("value_error", "Products must all belong to the same organization.", nil, "input", "products")
		}
		out = append(out, p)
	}
	return out, out[0].OrganizationID, nil
}

// draftFor selects the product and price a new checkout starts on: the product of
// productPriceID when given, else the first product at its static price.
func draftFor(ctx context.Context, tx *sqlx.Tx, orgID uuid.UUID, products []*storage.Product, priceID *uuid.UUID) (*checkoutDraft, error) {
	ids := make([]uuid.UUID, len(products))
	for i, p := range products {
		ids[i] = p.ID
	}
	prices, err := storage.PricesByProducts(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	d := &checkoutDraft{orgID: orgID, product: products[0], prices: prices[0], price: staticPrice(prices[0])}
	if priceID != nil {
		d.price = nil
		for i, list := range prices {
			for _, p := range list {
				if p.ID == *priceID {
					d.product, d.prices, d.price = products[i], list, p
				}
			}
		}
		if d.price == nil {
			return nil, Invalid("value_error", "Price does not exist.", priceID.String(), "input", "productPriceId")
		}
	}
	if d.price == nil {
		return nil, Invalid("value_error", "Product has no price.", d.product.ID.String(), "input", "products", 0)
	}
	return d, nil
}

// linkCustomer attaches the customer a checkout is for: by id (which must exist), else by
// external id when such a customer exists (otherwise one is created on confirm).
func (r *Resolver) linkCustomer(ctx context.Context, tx *sqlx.Tx, orgID uuid.UUID, cur *storage.Checkout, ch *checkoutChanges,
	id *uuid.UUID, externalID *string) error {
	var (
		c   *storage.Customer
		err error
	)
	switch {
	case id != nil:
		c, err = storage.GetCustomer(ctx, tx, []uuid.UUID{orgID}, *id)
		if errors.Is(err, storage.ErrNotFound) {
			return Invalid("value_error", "Customer does not exist.", id.String(), "input", "customerId")
		}
	case externalID != nil:
		c, err = storage.GetCustomerByExternalID(ctx, tx, []uuid.UUID{orgID}, *externalID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
	default:
		return nil
	}
	if err != nil {
		return err
	}
	cur.CustomerID, cur.CustomerEmail, cur.CustomerName = &c.ID, c.Email, c.Name
	cur.CustomerBillingAddress, cur.CustomerTaxID = c.BillingAddress, c.TaxIDValue
	if c.BillingName != nil {
		cur.CustomerBillingName = c.BillingName
	}
	return nil
}

// prefill copies the linked customer's details onto a new checkout; given fields set later
// override them.
func prefill(cur *storage.Checkout, u *storage.CheckoutUpdate) {
	if cur.CustomerID == nil {
		return
	}
	u.CustomerEmail, u.CustomerName = storage.Set(cur.CustomerEmail), storage.Set(cur.CustomerName)
	u.CustomerBillingName, u.CustomerBillingAddress = storage.Set(cur.CustomerBillingName), storage.Set(cur.CustomerBillingAddress)
	u.CustomerTaxID = storage.Set(cur.CustomerTaxID)
}
