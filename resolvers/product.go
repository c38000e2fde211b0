package resolvers

import (
	"context"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// productSorts whitelists the product list's sorting, over the list query's alias p.
var productSorts = map[string]string{"created_at": "p.created_at", "name": "p.name"}

// maxPriceAmount is upstream's MAXIMUM_PRICE_AMOUNT in cents.
const maxPriceAmount = 99_999_999

var (
	currencyCode = regexp.MustCompile(`^[a-z]{3}$`)
	decimal      = regexp.MustCompile(`^[+]?0*\d{0,5}(\.\d{0,12})?$`)
)

// priceWrite validates one price input (index i of the input list) and converts it.
func priceWrite(in *model.PriceInput, i int, currency string) (storage.ProductPriceWrite, error) {
	loc := func(f string) []any { return []any{"input", "prices", i, f} }
	if in.AmountType == nil {
		return storage.ProductPriceWrite{}, Invalid("missing", "Field required", nil, loc("amountType")...)
	}
	w := storage.ProductPriceWrite{AmountType: *in.AmountType, PriceCurrency: currency, TaxBehavior: in.TaxBehavior}
	if t := in.TaxBehavior; t != nil && *t != "inclusive" && *t != "exclusive" {
		return w, Invalid("enum", "Input should be 'inclusive' or 'exclusive'", *t, loc("taxBehavior")...)
	}
	if in.PriceCurrency != nil {
		w.PriceCurrency = strings.ToLower(*in.PriceCurrency)
	}
	if !currencyCode.MatchString(w.PriceCurrency) {
		return w, Invalid("value_error", "Currency must be a three-letter ISO 4217 code.", w.PriceCurrency, loc("priceCurrency")...)
	}
	amount := func(v *int, field string, required bool) (*int64, error) {
		if v == nil {
			if required {
				return nil, Invalid("missing", "Field required", nil, loc(field)...)
			}
			return nil, nil
		}
		if *v < 0 || *v > maxPriceAmount {
			return nil, Invalid("less_than_equal", "Amount must be between 0 and 99999999 cents.", *v, loc(field)...)
		}
		n := int64(*v)
		return &n, nil
	}
	var err error
	switch w.AmountType {
	case storage.AmountTypeFixed:
		w.PriceAmount, err = amount(in.PriceAmount, "priceAmount", true)
	case storage.AmountTypeCustom:
		if in.MinimumAmount == nil {
			fifty := 50
			in.MinimumAmount = &fifty
		}
		if w.MinimumAmount, err = amount(in.MinimumAmount, "minimumAmount", true); err != nil {
			return w, err
		}
		if w.MaximumAmount, err = amount(in.MaximumAmount, "maximumAmount", false); err != nil {
			return w, err
		}
		if w.MaximumAmount != nil && *w.MaximumAmount < *w.MinimumAmount {
			return w, Invalid("value_error", "Maximum amount must be greater than or equal to minimum amount.", *in.MaximumAmount, loc("maximumAmount")...)
		}
		if w.PresetAmount, err = amount(in.PresetAmount, "presetAmount", false); err != nil || w.PresetAmount == nil {
			return w, err
		}
		if *w.PresetAmount < *w.MinimumAmount || (w.MaximumAmount != nil && *w.PresetAmount > *w.MaximumAmount) {
			return w, Invalid("value_error", "Preset amount must be between the minimum and maximum amounts.", *in.PresetAmount, loc("presetAmount")...)
		}
	case storage.AmountTypeFree:
	case storage.AmountTypeSeatBased:
		w.SeatTiers, err = seatTiersWrite(in.SeatTiers, loc("seatTiers")...)
	case storage.AmountTypeMeteredUnit:
		if in.UnitAmount == nil || !decimal.MatchString(*in.UnitAmount) {
			return w, Invalid("string_pattern_mismatch", "Unit amount must be a decimal number of cents.", in.UnitAmount, loc("unitAmount")...)
		}
		if in.MeterID == nil {
			return w, Invalid("missing", "Field required", nil, loc("meterId")...)
		}
		w.UnitAmount, w.MeterID = in.UnitAmount, in.MeterID
		w.CapAmount, err = amount(in.CapAmount, "capAmount", false)
	}
	return w, err
}

// createProduct stores a product with its prices and benefits in one transaction.
func (r *Resolver) createProduct(ctx context.Context, in model.ProductCreateInput) (*storage.Product, error) {
	orgID, err := targetOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	if n := len([]rune(in.Name)); n < 3 {
		return nil, Invalid("string_too_short", "String should have at least 3 characters", in.Name, "input", "name")
	}
	if len(in.Prices) == 0 {
		return nil, Invalid("too_short", "List should have at least 1 item after validation, not 0", []any{}, "input", "prices")
	}
	if len(in.Prices) > MaxProductPrices {
		return nil, tooMany(len(in.Prices), MaxProductPrices, "input", "prices")
	}
	if err := checkMetadata(in.Metadata, "input", "metadata"); err != nil {
		return nil, err
	}
	if err := checkCount(in.RecurringIntervalCount, "input", "recurringIntervalCount"); err != nil {
		return nil, err
	}
	if err := checkCount(in.TrialIntervalCount, "input", "trialIntervalCount"); err != nil {
		return nil, err
	}
	if (in.RecurringInterval == nil) != (in.RecurringIntervalCount == nil) && in.RecurringIntervalCount != nil {
		return nil, Invalid("value_error", "recurring_interval is required with recurring_interval_count.", nil, "input", "recurringInterval")
	}
	w := storage.ProductWrite{Name: in.Name, Description: in.Description, Visibility: storage.ProductVisibilityPublic,
		RecurringInterval: in.RecurringInterval, RecurringIntervalCount: in.RecurringIntervalCount,
		TrialInterval: in.TrialInterval, TrialIntervalCount: in.TrialIntervalCount, Metadata: in.Metadata}
	if in.Visibility != nil {
		w.Visibility = *in.Visibility
	}
	if w.RecurringInterval != nil && w.RecurringIntervalCount == nil {
		one := 1
		w.RecurringIntervalCount = &one
	}
	if w.TrialInterval != nil && w.RecurringInterval == nil {
		return nil, Invalid("value_error", "Trials are only available on recurring products.", *in.TrialInterval, "input", "trialInterval")
	}
	if w.TrialInterval != nil && w.TrialIntervalCount == nil {
		one := 1
		w.TrialIntervalCount = &one
	}
	org, err := storage.GetOrganization(ctx, r.db, orgID)
	if err != nil {
		return nil, err
	}
	prices := make([]storage.ProductPriceWrite, len(in.Prices))
	for i, p := range in.Prices {
		if prices[i], err = priceWrite(p, i, org.DefaultPresentmentCurrency); err != nil {
			return nil, err
		}
	}
	if err := checkMeters(ctx, r.db, orgID, in.Prices); err != nil {
		return nil, err
	}
	var out *storage.Product
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		if out, err = storage.CreateProduct(ctx, tx, orgID, w); err != nil {
			return err
		}
		for _, p := range prices {
			if _, err := storage.CreatePrice(ctx, tx, orgID, out.ID, p); err != nil {
				return err
			}
		}
		return r.setBenefits(ctx, tx, orgID, out.ID, in.BenefitIds)
	})
	return out, err
}

// checkCount rejects an interval count below 1 before the table's check constraint turns it
// into a server error.
func checkCount(v *int, loc ...any) error {
	if v != nil && *v < 1 {
		return Invalid("greater_than_equal", "Input should be greater than or equal to 1", *v, loc...)
	}
	return nil
}

// checkMeters makes sure every new metered price points at a meter of the organization: the
// foreign key alone would accept another tenant's meter and turn an unknown one into a 500.
func checkMeters(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, prices []*model.PriceInput) error {
	metered := func(p *model.PriceInput) bool {
		return p.ID == nil && p.AmountType != nil && *p.AmountType == storage.AmountTypeMeteredUnit && p.MeterID != nil
	}
	var ids []uuid.UUID
	for _, p := range prices {
		if metered(p) {
			ids = append(ids, *p.MeterID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	found, err := storage.OrganizationMeterIDs(ctx, q, orgID, ids)
	if err != nil {
		return err
	}
	known := make(map[uuid.UUID]bool, len(found))
	for _, id := range found {
		known[id] = true
	}
	for i, p := range prices {
		if metered(p) && !known[*p.MeterID] {
			return Invalid("value_error", "Meter does not exist.", p.MeterID.String(), "input", "prices", i, "meterId")
		}
	}
	return nil
}

// setBenefits replaces a product's benefits after checking they all belong to its organization.
func (r *Resolver) setBenefits(ctx context.Context, tx *sqlx.Tx, orgID, productID uuid.UUID, ids []uuid.UUID) error {
	unique := uniqueIDs(ids)
	if len(unique) > MaxProductBenefits {
		return tooMany(len(unique), MaxProductBenefits, "input", "benefitIds")
	}
	n, err := storage.CountBenefits(ctx, tx, orgID, unique)
	if err != nil {
		return err
	}
	if n != len(unique) {
		return Invalid("value_error", "Benefit does not exist.", nil, "input", "benefitIds")
	}
	return storage.SetProductBenefits(ctx, tx, orgID, productID, unique)
}

// updateProduct applies the fields present in the input; a price list replaces the prices.
func (r *Resolver) updateProduct(ctx context.Context, in model.ProductUpdateInput) (*storage.Product, error) {
	var out *storage.Product
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		cur, err := storage.GetProduct(ctx, tx, organizations(ctx), in.ID)
		if err != nil {
			return notFoundOr(err, "")
		}
		var u storage.ProductUpdate
		if v, ok := in.Name.ValueOK(); ok && v != nil {
			if len([]rune(*v)) < 3 {
				return Invalid("string_too_short", "String should have at least 3 characters", *v, "input", "name")
			}
			u.Name = storage.Set(*v)
		}
		if v, ok := in.Description.ValueOK(); ok {
			u.Description = storage.Set(v)
		}
		if v, ok := in.Visibility.ValueOK(); ok && v != nil {
			u.Visibility = storage.Set(*v)
		}
		if v, ok := in.IsArchived.ValueOK(); ok && v != nil {
			u.IsArchived = storage.Set(*v)
		}
		if v, ok := in.TrialInterval.ValueOK(); ok {
			if v != nil && !cur.IsRecurring() {
				return Invalid("value_error", "Trials are only available on recurring products.", *v, "input", "trialInterval")
			}
			u.TrialInterval = storage.Set(v)
		}
		if v, ok := in.TrialIntervalCount.ValueOK(); ok {
			if err := checkCount(v, "input", "trialIntervalCount"); err != nil {
				return err
			}
			u.TrialIntervalCount = storage.Set(v)
		}
		if v, ok := in.Metadata.ValueOK(); ok {
			if err := checkMetadata(v, "input", "metadata"); err != nil {
				return err
			}
			u.Metadata = storage.Set(v)
		}
		if prices, ok := in.Prices.ValueOK(); ok {
			if err := r.replacePrices(ctx, tx, cur, prices); err != nil {
				return err
			}
		}
		out, err = storage.UpdateProduct(ctx, tx, organizations(ctx), in.ID, u)
		return err
	})
	return out, err
}

// replacePrices keeps the listed existing prices, creates the new ones and archives the rest.
func (r *Resolver) replacePrices(ctx context.Context, tx *sqlx.Tx, p *storage.Product, prices []*model.PriceInput) error {
	if len(prices) == 0 {
		return Invalid("too_short", "List should have at least 1 item after validation, not 0", []any{}, "input", "prices")
	}
	if len(prices) > MaxProductPrices {
		return tooMany(len(prices), MaxProductPrices, "input", "prices")
	}
	existing, err := storage.PricesByProducts(ctx, tx, []uuid.UUID{p.ID})
	if err != nil {
		return err
	}
	own := map[uuid.UUID]bool{}
	for _, e := range existing[0] {
		own[e.ID] = true
	}
	org, err := storage.GetOrganization(ctx, tx, p.OrganizationID)
	if err != nil {
		return err
	}
	if err := checkMeters(ctx, tx, p.OrganizationID, prices); err != nil {
		return err
	}
	var keep []uuid.UUID
	for i, in := range prices {
		if in.ID != nil {
			if !own[*in.ID] {
				return Invalid("value_error", "Price does not exist.", in.ID.String(), "input", "prices", i, "id")
			}
			keep = append(keep, *in.ID)
			continue
		}
		w, err := priceWrite(in, i, org.DefaultPresentmentCurrency)
		if err != nil {
			return err
		}
		created, err := storage.CreatePrice(ctx, tx, p.OrganizationID, p.ID, w)
		if err != nil {
			return err
		}
		keep = append(keep, created.ID)
	}
	return storage.ArchivePricesExcept(ctx, tx, p.ID, keep)
}

// updateProductBenefits replaces a product's benefits.
func (r *Resolver) updateProductBenefits(ctx context.Context, in model.ProductBenefitsInput) (*storage.Product, error) {
	var out *storage.Product
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		p, err := storage.GetProduct(ctx, tx, organizations(ctx), in.ID)
		if err != nil {
			return notFoundOr(err, "")
		}
		if err := r.setBenefits(ctx, tx, p.OrganizationID, p.ID, in.BenefitIds); err != nil {
			return err
		}
		out, err = storage.UpdateProduct(ctx, tx, organizations(ctx), p.ID, storage.ProductUpdate{})
		return err
	})
	return out, err
}

// productsPage lists products, noting them as read together so their relations load in
// one statement each.
func (r *Resolver) productsPage(ctx context.Context, a listArgs, f *model.ProductFilter) (*model.ProductPage, error) {
	w, sorts, err := a.windowAndSorts(productSorts)
	if err != nil {
		return nil, err
	}
	p, err := storage.ListProducts(ctx, r.db, organizations(ctx), productFilterOf(f), sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	record(ctx, p.Items)
	return &model.ProductPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// productFilterOf turns the GraphQL filter into the storage one.
func productFilterOf(f *model.ProductFilter) storage.ProductListFilter {
	if f == nil {
		return storage.ProductListFilter{}
	}
	return storage.ProductListFilter{IsArchived: f.IsArchived, IsRecurring: f.IsRecurring, Query: f.Query,
		BenefitIDs: f.BenefitID, Visibility: f.Visibility, Metadata: metadataOf(f.Metadata)}
}

// archiveProduct hides a product from new sales; existing orders and subscriptions keep it.
func (r *Resolver) archiveProduct(ctx context.Context, id uuid.UUID) (*storage.Product, error) {
	p, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.Product, error) {
		return storage.UpdateProduct(ctx, q, organizations(ctx), id, storage.ProductUpdate{IsArchived: storage.Set(true)})
	})
	return p, notFoundOr(err, "")
}
