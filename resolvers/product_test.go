package resolvers_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

const (
	createProductDoc         = `mutation($input: ProductCreateInput!) { createProduct(input: $input) { ` + productFields + ` } }`
	updateProductDoc         = `mutation($input: ProductUpdateInput!) { updateProduct(input: $input) { ` + productFields + ` } }`
	updateProductBenefitsDoc = `mutation($id: UUID!, $b: [UUID!]!) { updateProductBenefits(input: {id: $id, benefitIds: $b}) { ` + productFields + ` } }`
	getProductDoc            = `query($id: UUID!) { product(id: $id) { ` + productFields + ` } }`
)

// newMeter stores a meter directly: metered prices need one and meters have no API here yet.
func newMeter(tb testing.TB, s *resolverstest.Server, orgID uuid.UUID) uuid.UUID {
	tb.Helper()
	var id uuid.UUID
	if err := s.DB.Get(&id, `INSERT INTO meters (organization_id, name, filter, aggregation)
		VALUES ($1, 'API calls', '{"conjunction": "and", "clauses": []}', '{"func": "count"}') RETURNING id`, orgID); err != nil {
		tb.Fatalf("creating meter: %v", err)
	}
	return id
}

// ignoreIDs drops generated ids from price comparisons.
var ignoreIDs = cmpopts.IgnoreFields(price{}, "ID", "ProductID")

func TestCreateProduct(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	meter := newMeter(t, s, org.ID)
	first, second := newBenefit(t, s, org.Token, "First"), newBenefit(t, s, org.Token, "Second")

	t.Run("a product with every price type and ordered benefits is stored", func(t *testing.T) {
		got := createProduct(t, s, org.Token, vars{
			"name": "Everything", "description": "All the prices", "visibility": "private",
			"recurringInterval": "month", "metadata": vars{"sku": "E-1"},
			"benefitIds": []uuid.UUID{second.ID, first.ID},
			"prices": []vars{
				{"amountType": "fixed", "priceAmount": 1500, "taxBehavior": "exclusive"},
				{"amountType": "custom", "minimumAmount": 100, "maximumAmount": 10000, "presetAmount": 500, "priceCurrency": "EUR"},
				{"amountType": "custom"},
				{"amountType": "free"},
				{"amountType": "seat_based", "seatTiers": vars{"tiers": []vars{{"minSeats": 1, "maxSeats": nil, "pricePerSeat": 900}}}},
				{"amountType": "metered_unit", "unitAmount": "0.5", "capAmount": 100000, "meterId": meter},
			},
		})
		want := []price{
			{Source: "catalog", AmountType: "fixed", PriceCurrency: "usd", TaxBehavior: ptr("exclusive"), PriceAmount: ptr(1500)},
			{Source: "catalog", AmountType: "custom", PriceCurrency: "eur", MinimumAmount: ptr(100), MaximumAmount: ptr(10000), PresetAmount: ptr(500)},
			{Source: "catalog", AmountType: "custom", PriceCurrency: "usd", MinimumAmount: ptr(50)},
			{Source: "catalog", AmountType: "free", PriceCurrency: "usd"},
			{Source: "catalog", AmountType: "seat_based", PriceCurrency: "usd",
				SeatTiers: jsonOf(t, `{"seatTierType": "volume", "tiers": [{"minSeats": 1, "maxSeats": null, "pricePerSeat": 900}],
					"minimumSeats": 1, "maximumSeats": null}`)},
			{Source: "catalog", AmountType: "metered_unit", PriceCurrency: "usd", UnitAmount: ptr("0.500000000000"), CapAmount: ptr(100000), MeterID: &meter},
		}
		if diff := cmp.Diff(want, got.Prices, ignoreIDs); diff != "" {
			t.Errorf("prices (-want +got):\n%s", diff)
		}
		for _, p := range got.Prices {
			if p.ProductID != got.ID {
				t.Errorf("price %s has productId %s, want %s", p.ID, p.ProductID, got.ID)
			}
		}
		if diff := cmp.Diff([]uuid.UUID{second.ID, first.ID}, got.BenefitIDs()); diff != "" {
			t.Errorf("benefits in given order (-want +got):\n%s", diff)
		}
		if !got.IsRecurring || *got.RecurringInterval != "month" || *got.RecurringIntervalCount != 1 ||
			got.Visibility != "private" || *got.Description != "All the prices" || got.OrganizationID != org.ID {
			t.Errorf("product = %+v", got)
		}
	})

	t.Run("a one-time product defaults to public and is not recurring", func(t *testing.T) {
		got := s.NewProduct(t, org.ID, "Plain")
		if got.IsRecurring || got.RecurringInterval != nil || got.Visibility != "public" || got.IsArchived {
			t.Errorf("product = %+v", got)
		}
	})

	t.Run("a trial on a recurring product defaults its count to 1", func(t *testing.T) {
		got := createProduct(t, s, org.Token, vars{"name": "Trial", "recurringInterval": "year", "trialInterval": "day",
			"prices": []vars{{"amountType": "free"}}})
		if *got.TrialInterval != "day" || *got.TrialIntervalCount != 1 {
			t.Errorf("trial = %v × %v", *got.TrialInterval, *got.TrialIntervalCount)
		}
	})

	other := s.NewOrg(t, resolverstest.AllScopes)
	theirMeter := newMeter(t, s, other.ID)
	fixed := []vars{{"amountType": "fixed", "priceAmount": 100}}
	for _, tc := range []struct {
		name  string
		input vars
		want  fieldErr
	}{
		{"a name under 3 characters is rejected", vars{"name": "ab", "prices": fixed},
			fieldErr{Type: "string_too_short", Loc: []any{"input", "name"}, Msg: "String should have at least 3 characters", Input: "ab"}},
		{"a product without prices is rejected", vars{"name": "No prices", "prices": []vars{}},
			fieldErr{Type: "too_short", Loc: []any{"input", "prices"}, Msg: "List should have at least 1 item after validation, not 0", Input: []any{}}},
		{"a price without amount type is rejected", vars{"name": "Typeless", "prices": []vars{{"priceAmount": 100}}},
			fieldErr{Type: "missing", Loc: []any{"input", "prices", 0, "amountType"}, Msg: "Field required"}},
		{"a fixed price without amount is rejected", vars{"name": "Amountless", "prices": []vars{{"amountType": "free"}, {"amountType": "fixed"}}},
			fieldErr{Type: "missing", Loc: []any{"input", "prices", 1, "priceAmount"}, Msg: "Field required"}},
		{"a negative amount is rejected", vars{"name": "Negative", "prices": []vars{{"amountType": "fixed", "priceAmount": -1}}},
			fieldErr{Type: "less_than_equal", Loc: []any{"input", "prices", 0, "priceAmount"}, Msg: "Amount must be between 0 and 99999999 cents.", Input: float64(-1)}},
		{"an amount above the maximum is rejected", vars{"name": "Huge", "prices": []vars{{"amountType": "fixed", "priceAmount": 100_000_000}}},
			fieldErr{Type: "less_than_equal", Loc: []any{"input", "prices", 0, "priceAmount"}, Msg: "Amount must be between 0 and 99999999 cents.", Input: float64(100_000_000)}},
		{"a currency that is not ISO 4217 is rejected", vars{"name": "Money", "prices": []vars{{"amountType": "free", "priceCurrency": "dollars"}}},
			fieldErr{Type: "value_error", Loc: []any{"input", "prices", 0, "priceCurrency"}, Msg: "Currency must be a three-letter ISO 4217 code.", Input: "dollars"}},
		{"a custom maximum under the minimum is rejected", vars{"name": "Custom", "prices": []vars{{"amountType": "custom", "minimumAmount": 500, "maximumAmount": 100}}},
			fieldErr{Type: "value_error", Loc: []any{"input", "prices", 0, "maximumAmount"}, Msg: "Maximum amount must be greater than or equal to minimum amount.", Input: float64(100)}},
		{"a custom preset under the minimum is rejected", vars{"name": "Custom", "prices": []vars{{"amountType": "custom", "minimumAmount": 500, "presetAmount": 100}}},
			fieldErr{Type: "value_error", Loc: []any{"input", "prices", 0, "presetAmount"}, Msg: "Preset amount must be between the minimum and maximum amounts.", Input: float64(100)}},
		{"a custom preset above the maximum is rejected", vars{"name": "Custom", "prices": []vars{{"amountType": "custom", "minimumAmount": 500, "maximumAmount": 900, "presetAmount": 1000}}},
			fieldErr{Type: "value_error", Loc: []any{"input", "prices", 0, "presetAmount"}, Msg: "Preset amount must be between the minimum and maximum amounts.", Input: float64(1000)}},
		{"seat-based pricing without tiers is rejected", vars{"name": "Seats", "prices": []vars{{"amountType": "seat_based", "seatTiers": vars{"tiers": []vars{}}}}},
			fieldErr{Type: "value_error", Loc: []any{"input", "prices", 0, "seatTiers"}, Msg: "Seat tiers need at least one tier.", Input: map[string]any{"tiers": []any{}}}},
		{"more than 20 seat tiers are rejected", vars{"name": "Seats", "prices": []vars{{"amountType": "seat_based",
			"seatTiers": vars{"tiers": slices.Repeat([]vars{{"minSeats": 1, "pricePerSeat": 900}}, 21)}}}},
			fieldErr{Type: "too_long", Loc: []any{"input", "prices", 0, "seatTiers", "tiers"},
				Msg: "List should have at most 20 items after validation, not 21", Input: float64(21)}},
		{"a seat tier from seat 0 is rejected", vars{"name": "Seats", "prices": []vars{{"amountType": "seat_based",
			"seatTiers": vars{"tiers": []vars{{"minSeats": 0, "pricePerSeat": 900}}}}}},
			fieldErr{Type: "greater_than_equal", Loc: []any{"input", "prices", 0, "seatTiers", "tiers", 0, "minSeats"},
				Msg: "Input should be greater than or equal to 1", Input: float64(0)}},
		{"a metered price without meter is rejected", vars{"name": "Metered", "prices": []vars{{"amountType": "metered_unit", "unitAmount": "1"}}},
			fieldErr{Type: "missing", Loc: []any{"input", "prices", 0, "meterId"}, Msg: "Field required"}},
		{"a metered price with a malformed unit amount is rejected", vars{"name": "Metered", "prices": []vars{{"amountType": "metered_unit", "unitAmount": "1,5", "meterId": meter}}},
			fieldErr{Type: "string_pattern_mismatch", Loc: []any{"input", "prices", 0, "unitAmount"}, Msg: "Unit amount must be a decimal number of cents.", Input: "1,5"}},
		{"a metered price on an unknown meter is rejected", vars{"name": "Metered", "prices": []vars{{"amountType": "metered_unit", "unitAmount": "1", "meterId": uuid.Nil}}},
			fieldErr{Type: "value_error", Loc: []any{"input", "prices", 0, "meterId"}, Msg: "Meter does not exist.", Input: uuid.Nil.String()}},
		{"a metered price on another organization's meter is rejected", vars{"name": "Metered", "prices": []vars{{"amountType": "metered_unit", "unitAmount": "1", "meterId": theirMeter}}},
			fieldErr{Type: "value_error", Loc: []any{"input", "prices", 0, "meterId"}, Msg: "Meter does not exist.", Input: theirMeter.String()}},
		{"a trial on a one-time product is rejected", vars{"name": "Trial", "trialInterval": "day", "prices": fixed},
			fieldErr{Type: "value_error", Loc: []any{"input", "trialInterval"}, Msg: "Trials are only available on recurring products.", Input: "day"}},
		{"a recurring count without interval is rejected", vars{"name": "Count", "recurringIntervalCount": 2, "prices": fixed},
			fieldErr{Type: "value_error", Loc: []any{"input", "recurringInterval"}, Msg: "recurring_interval is required with recurring_interval_count."}},
		{"a recurring count of 0 is rejected", vars{"name": "Count", "recurringInterval": "month", "recurringIntervalCount": 0, "prices": fixed},
			fieldErr{Type: "greater_than_equal", Loc: []any{"input", "recurringIntervalCount"}, Msg: "Input should be greater than or equal to 1", Input: float64(0)}},
		{"a trial count of 0 is rejected", vars{"name": "Count", "recurringInterval": "month", "trialInterval": "day", "trialIntervalCount": 0, "prices": fixed},
			fieldErr{Type: "greater_than_equal", Loc: []any{"input", "trialIntervalCount"}, Msg: "Input should be greater than or equal to 1", Input: float64(0)}},
		{"an unknown tax behavior is rejected", vars{"name": "Tax", "prices": []vars{{"amountType": "free", "taxBehavior": "sometimes"}}},
			fieldErr{Type: "enum", Loc: []any{"input", "prices", 0, "taxBehavior"}, Msg: "Input should be 'inclusive' or 'exclusive'", Input: "sometimes"}},
		{"an unknown benefit is rejected", vars{"name": "Benefit", "prices": fixed, "benefitIds": []uuid.UUID{uuid.New()}},
			fieldErr{Type: "value_error", Loc: []any{"input", "benefitIds"}, Msg: "Benefit does not exist."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantInvalid(t, s.QueryError(t, org.Token, createProductDoc, vars{"input": tc.input}), tc.want)
		})
	}

	t.Run("a rejected product leaves nothing behind", func(t *testing.T) {
		var n int
		if err := s.DB.Get(&n, `SELECT count(*) FROM products WHERE name IN ('Benefit', 'Metered')`); err != nil || n != 0 {
			t.Errorf("products left by failed creates: %d, %v", n, err)
		}
	})
}

func TestUpdateProduct(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	update := func(t *testing.T, input vars) product {
		t.Helper()
		var out struct{ UpdateProduct product }
		s.Query(t, org.Token, updateProductDoc, vars{"input": input}, &out)
		return out.UpdateProduct
	}
	base := func(t *testing.T) product {
		t.Helper()
		return createProduct(t, s, org.Token, vars{"name": "Base", "description": "Desc", "recurringInterval": "month",
			"metadata": vars{"a": "1"}, "prices": []vars{{"amountType": "fixed", "priceAmount": 100}, {"amountType": "free"}}})
	}

	t.Run("absent fields are left alone", func(t *testing.T) {
		p := base(t)
		if diff := cmp.Diff(p, update(t, vars{"id": p.ID})); diff != "" {
			t.Errorf("product changed by an empty update (-before +after):\n%s", diff)
		}
	})

	t.Run("given fields are replaced and a null description cleared", func(t *testing.T) {
		p := base(t)
		got := update(t, vars{"id": p.ID, "name": "Renamed", "description": nil, "visibility": "draft",
			"metadata": vars{"b": true}, "trialInterval": "week", "trialIntervalCount": 2})
		want := p
		want.Name, want.Description, want.Visibility, want.Metadata = "Renamed", nil, "draft", map[string]any{"b": true}
		want.TrialInterval, want.TrialIntervalCount = ptr("week"), ptr(2)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("product (-want +got):\n%s", diff)
		}
	})

	t.Run("a price list keeps listed prices, creates new ones and archives the rest", func(t *testing.T) {
		p := base(t)
		kept, dropped := p.Prices[0], p.Prices[1]
		got := update(t, vars{"id": p.ID, "prices": []vars{{"id": kept.ID}, {"amountType": "custom", "minimumAmount": 200}}})
		live := map[uuid.UUID]price{}
		for _, pr := range got.Prices {
			if pr.ID == dropped.ID || pr.IsArchived {
				t.Errorf("archived price %s is still listed on the product", pr.ID)
			}
			live[pr.ID] = pr
		}
		if _, ok := live[kept.ID]; !ok || len(live) != 2 {
			t.Errorf("live prices = %+v, want the kept one and one new", live)
		}
		var archived bool
		if err := s.DB.Get(&archived, `SELECT is_archived FROM product_prices WHERE id = $1`, dropped.ID); err != nil || !archived {
			t.Errorf("dropped price is_archived = %v, %v", archived, err)
		}
	})

	t.Run("a price id of another product is rejected", func(t *testing.T) {
		p, q := base(t), base(t)
		got := s.QueryError(t, org.Token, updateProductDoc, vars{"input": vars{"id": p.ID, "prices": []vars{{"id": q.Prices[0].ID}}}})
		wantInvalid(t, got, fieldErr{Type: "value_error", Loc: []any{"input", "prices", 0, "id"}, Msg: "Price does not exist.",
			Input: q.Prices[0].ID.String()})
	})

	t.Run("an empty price list is rejected", func(t *testing.T) {
		p := base(t)
		got := s.QueryError(t, org.Token, updateProductDoc, vars{"input": vars{"id": p.ID, "prices": []vars{}}})
		wantInvalid(t, got, fieldErr{Type: "too_short", Loc: []any{"input", "prices"},
			Msg: "List should have at least 1 item after validation, not 0", Input: []any{}})
	})

	t.Run("an invalid new price rolls the whole update back", func(t *testing.T) {
		p := base(t)
		got := s.QueryError(t, org.Token, updateProductDoc, vars{"input": vars{"id": p.ID, "name": "Changed",
			"prices": []vars{{"id": p.Prices[0].ID}, {"amountType": "fixed"}}}})
		wantInvalid(t, got, fieldErr{Type: "missing", Loc: []any{"input", "prices", 1, "priceAmount"}, Msg: "Field required"})
		var after struct{ Product product }
		s.Query(t, org.Token, getProductDoc, vars{"id": p.ID}, &after)
		if diff := cmp.Diff(p, after.Product); diff != "" {
			t.Errorf("product changed by a failed update (-before +after):\n%s", diff)
		}
	})

	t.Run("a short name is rejected", func(t *testing.T) {
		p := base(t)
		wantInvalid(t, s.QueryError(t, org.Token, updateProductDoc, vars{"input": vars{"id": p.ID, "name": "x"}}),
			fieldErr{Type: "string_too_short", Loc: []any{"input", "name"}, Msg: "String should have at least 3 characters", Input: "x"})
	})

	t.Run("a trial on a one-time product is rejected", func(t *testing.T) {
		p := s.NewProduct(t, org.ID, "One-time")
		wantInvalid(t, s.QueryError(t, org.Token, updateProductDoc, vars{"input": vars{"id": p.ID, "trialInterval": "day"}}),
			fieldErr{Type: "value_error", Loc: []any{"input", "trialInterval"}, Msg: "Trials are only available on recurring products.", Input: "day"})
	})

	t.Run("a trial count of 0 is rejected", func(t *testing.T) {
		p := base(t)
		wantInvalid(t, s.QueryError(t, org.Token, updateProductDoc, vars{"input": vars{"id": p.ID, "trialIntervalCount": 0}}),
			fieldErr{Type: "greater_than_equal", Loc: []any{"input", "trialIntervalCount"}, Msg: "Input should be greater than or equal to 1", Input: float64(0)})
	})

	t.Run("archiving sets isArchived and unarchiving clears it", func(t *testing.T) {
		p := base(t)
		var out struct{ ArchiveProduct product }
		s.Query(t, org.Token, `mutation($id: UUID!) { archiveProduct(id: $id) { `+productFields+` } }`, vars{"id": p.ID}, &out)
		if !out.ArchiveProduct.IsArchived {
			t.Error("archived product is not archived")
		}
		if got := update(t, vars{"id": p.ID, "isArchived": false}); got.IsArchived {
			t.Error("unarchived product is still archived")
		}
	})

	t.Run("an unknown product is ResourceNotFound", func(t *testing.T) {
		wantError(t, s.QueryError(t, org.Token, updateProductDoc, vars{"input": vars{"id": uuid.New(), "name": "Nope"}}), "NOT_FOUND", "ResourceNotFound")
		wantError(t, s.QueryError(t, org.Token, `mutation($id: UUID!) { archiveProduct(id: $id) { id } }`, vars{"id": uuid.New()}), "NOT_FOUND", "ResourceNotFound")
		wantError(t, s.QueryError(t, org.Token, getProductDoc, vars{"id": uuid.New()}), "NOT_FOUND", "ResourceNotFound")
	})
}

func TestUpdateProductBenefits(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	a, b, c := newBenefit(t, s, org.Token, "Benefit A"), newBenefit(t, s, org.Token, "Benefit B"), newBenefit(t, s, org.Token, "Benefit C")
	p := s.NewProduct(t, org.ID, "Bundle", a.ID, b.ID)
	set := func(t *testing.T, ids ...uuid.UUID) []uuid.UUID {
		t.Helper()
		var out struct{ UpdateProductBenefits product }
		s.Query(t, org.Token, updateProductBenefitsDoc, vars{"id": p.ID, "b": ids}, &out)
		return out.UpdateProductBenefits.BenefitIDs()
	}

	for _, tc := range []struct {
		name string
		set  []uuid.UUID
		want []uuid.UUID
	}{
		{"the list replaces the benefits in its order", []uuid.UUID{c.ID, a.ID}, []uuid.UUID{c.ID, a.ID}},
		{"duplicates are kept once", []uuid.UUID{b.ID, b.ID, a.ID}, []uuid.UUID{b.ID, a.ID}},
		{"an empty list removes every benefit", []uuid.UUID{}, []uuid.UUID{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, set(t, tc.set...)); diff != "" {
				t.Errorf("benefits (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a deleted benefit is rejected", func(t *testing.T) {
		gone := newBenefit(t, s, org.Token, "Gone")
		s.Query(t, org.Token, `mutation($id: UUID!) { deleteBenefit(id: $id) { id } }`, vars{"id": gone.ID}, nil)
		got := s.QueryError(t, org.Token, updateProductBenefitsDoc, vars{"id": p.ID, "b": []uuid.UUID{a.ID, gone.ID}})
		wantInvalid(t, got, fieldErr{Type: "value_error", Loc: []any{"input", "benefitIds"}, Msg: "Benefit does not exist."})
	})
}

func TestListProducts(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "products:read products:write benefits:write")
	perk := newBenefit(t, s, org.Token, "Perk")
	seed := []vars{
		{"name": "Alpha one-time", "visibility": "public", "metadata": vars{"line": "a"}},
		{"name": "Beta monthly", "recurringInterval": "month", "visibility": "private", "benefitIds": []uuid.UUID{perk.ID}},
		{"name": "Gamma yearly", "recurringInterval": "year", "visibility": "draft", "metadata": vars{"line": "b"}},
		{"name": "Delta archived", "visibility": "public"},
	}
	ids := map[string]string{}
	for i, in := range seed {
		in["prices"] = []vars{{"amountType": "free"}}
		p := createProduct(t, s, org.Token, in)
		ids[p.Name] = p.ID.String()
		s.Exec(t, `UPDATE products SET created_at = now() - make_interval(mins => $2) WHERE id = $1`, p.ID, 10-i)
	}
	s.Query(t, org.Token, `mutation($id: UUID!) { archiveProduct(id: $id) { id } }`, vars{"id": ids["Delta archived"]}, nil)

	for _, tc := range []struct {
		name  string
		vars  vars
		want  []string
		total int
	}{
		{"the default order is newest first", nil, []string{"Delta archived", "Gamma yearly", "Beta monthly", "Alpha one-time"}, 4},
		{"sorting by name", vars{"sorting": []string{"name"}}, []string{"Alpha one-time", "Beta monthly", "Delta archived", "Gamma yearly"}, 4},
		{"sorting by name descending", vars{"sorting": []string{"-name"}}, []string{"Gamma yearly", "Delta archived", "Beta monthly", "Alpha one-time"}, 4},
		{"archived products only", vars{"filter": vars{"isArchived": true}}, []string{"Delta archived"}, 1},
		{"live products only", vars{"filter": vars{"isArchived": false}}, []string{"Gamma yearly", "Beta monthly", "Alpha one-time"}, 3},
		{"recurring products only", vars{"filter": vars{"isRecurring": true}}, []string{"Gamma yearly", "Beta monthly"}, 2},
		{"one-time products only", vars{"filter": vars{"isRecurring": false}}, []string{"Delta archived", "Alpha one-time"}, 2},
		{"a name query ignores case", vars{"filter": vars{"query": "ALPHA"}}, []string{"Alpha one-time"}, 1},
		{"products with a benefit", vars{"filter": vars{"benefitId": []string{perk.ID.String()}}}, []string{"Beta monthly"}, 1},
		{"visibilities are OR-ed", vars{"filter": vars{"visibility": []string{"private", "draft"}}}, []string{"Gamma yearly", "Beta monthly"}, 2},
		{"a metadata filter", vars{"filter": vars{"metadata": []vars{{"key": "line", "values": []string{"b"}}}}}, []string{"Gamma yearly"}, 1},
		{"filters are AND-ed", vars{"filter": vars{"isRecurring": true, "visibility": []string{"public", "draft"}}}, []string{"Gamma yearly"}, 1},
		{"a page of one", vars{"limit": 1, "page": 2}, []string{"Gamma yearly"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out struct {
				Products struct {
					Items      []struct{ Name string }
					Pagination struct{ TotalCount, MaxPage int }
				}
			}
			s.Query(t, org.Token, `query($page: Int, $limit: Int, $sorting: [String!], $filter: ProductFilter) {
				products(page: $page, limit: $limit, sorting: $sorting, filter: $filter) { items { name } pagination { totalCount maxPage } } }`,
				tc.vars, &out)
			got := []string{}
			for _, it := range out.Products.Items {
				got = append(got, it.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if out.Products.Pagination.TotalCount != tc.total {
				t.Errorf("totalCount = %d, want %d", out.Products.Pagination.TotalCount, tc.total)
			}
		})
	}

	t.Run("an unknown sorting criterion is rejected", func(t *testing.T) {
		got := s.QueryError(t, org.Token, `{ products(sorting: ["price"]) { items { id } } }`, nil)
		wantError(t, got, "BAD_USER_INPUT", "RequestValidationError",
			fieldErr{Type: "enum", Loc: []any{"query", "sorting"}, Msg: "Invalid sorting criterion.", Input: "price"})
	})
}
