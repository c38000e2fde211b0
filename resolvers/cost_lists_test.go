package resolvers_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// TestEveryWholeListDeclaresItsSize enumerates the schema's lists of objects: each is either
// the items of a page that only paged fields return, or declares @listSize, so a new list
// cannot be priced at a guess.
func TestEveryWholeListDeclaresItsSize(t *testing.T) {
	t.Parallel()
	schema := resolvers.New(resolvers.Deps{}).Schema().Schema()
	paged := map[string]bool{} // types every field returning them takes limit or first
	for _, typ := range schema.Types {
		for _, f := range typ.Fields {
			name := f.Type.Name()
			byPage := f.Arguments.ForName("limit") != nil || f.Arguments.ForName("first") != nil
			if prev, seen := paged[name]; !seen || prev {
				paged[name] = byPage && f.Type.Elem == nil
			}
		}
	}
	// The sizes the write caps and read limits make true: a declaration may not drift from them.
	enforced := map[string]int{
		"Product.benefits": resolvers.MaxProductBenefits, "CheckoutProduct.benefits": resolvers.MaxProductBenefits,
		"Product.prices": resolvers.MaxProductPrices, "Subscription.prices": resolvers.MaxProductPrices,
		"CheckoutProduct.prices": resolvers.MaxProductPrices, "CheckoutSeatTiers.tiers": resolvers.MaxSeatTiers,
		"Subscription.meters": resolvers.MaxProductPrices, "Order.items": resolvers.MaxProductPrices + 1,
		"Checkout.products": resolvers.MaxCheckoutProducts, "Discount.products": resolvers.MaxDiscountProducts,
		"LicenseKey.activations": resolvers.MaxLicenseKeyActivations, "Customer.paymentMethods": resolvers.MaxCustomerPaymentMethods,
		"Query.licenseSigningKeys": resolvers.MaxPublishedSigningKeys, "Job.errors": resolvers.MaxJobErrors,
		"WebhookEvent.deliveries": resolvers.MaxEventDeliveries, "CustomerSeatList.seats": resolvers.MaxSeats,
		"MeterFilterGroup.clauses": storage.MaxMeterFilterClauses, "ProductPriceSeatTiers.tiers": resolvers.MaxSeatTiers,
		"Product.wirePrices": resolvers.MaxProductPrices, "Subscription.wirePrices": resolvers.MaxProductPrices,
		"Query.userSessions": resolvers.MaxUserSessions, "Query.meterCosts": resolvers.MaxMeterCostMeters, "Viewer.organizations": resolvers.MaxViewerOrganizations,
	}
	lists := 0
	for _, typ := range schema.Types {
		if typ.Kind != ast.Object && typ.Kind != ast.Interface || strings.HasPrefix(typ.Name, "__") {
			continue
		}
		for _, f := range typ.Fields {
			elem := schema.Types[f.Type.Name()]
			if f.Type.Elem == nil || elem == nil || elem.Kind == ast.Scalar || elem.Kind == ast.Enum || strings.HasPrefix(f.Name, "__") {
				continue
			}
			lists++
			if paged[typ.Name] || f.Arguments.ForName("limit") != nil || f.Arguments.ForName("first") != nil {
				continue
			}
			d := f.Directives.ForName("listSize")
			if d == nil || d.Arguments.ForName("assumedSize") == nil {
				t.Errorf("%s.%s returns a whole list but declares no @listSize(assumedSize:)", typ.Name, f.Name)
				continue
			}
			if want, ok := enforced[typ.Name+"."+f.Name]; ok {
				if got := d.Arguments.ForName("assumedSize").Value.Raw; got != strconv.Itoa(want) {
					t.Errorf("%s.%s declares @listSize(assumedSize: %s), but its cap is %d", typ.Name, f.Name, got, want)
				}
			}
		}
	}
	if lists < 30 {
		t.Fatalf("found %d lists of objects: the enumeration is broken", lists)
	}
}

// TestWholeListAttacksArePricedAtTheirCaps prices the documents of the outside attack: a
// list without a page argument counts its cap, so the aliases that read 69.5 MB for 5,550
// points are now over the ceiling, refused before any resolver runs.
func TestWholeListAttacksArePricedAtTheirCaps(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	checkout := "checkoutByClientSecret(clientSecret: $c) { products { benefits { id description } } }"
	perCheckout := 1 + resolvers.MaxCheckoutProducts*(1+resolvers.MaxProductBenefits)
	products := "products(limit: 100) { items { id benefits { id description properties metadata } } }"
	meter := "meterQuantities(id: $m, startTimestamp: $from, endTimestamp: $to, interval: $i) { ...Q }"
	costs := "meterCosts(ids: $ids, startTimestamp: $from, endTimestamp: $to, interval: $i) { meter { id } costs { timestamp costs events } total }"
	for _, c := range []struct {
		name, token, field, vars string
		values                   resolverstest.Vars
		aliases, cost            int
		refused                  bool
	}{
		{"one anonymous checkout alias counts 10 products of 20 benefits", "", checkout, "$c: String!",
			resolverstest.Vars{"c": "nope"}, 1, perCheckout, false},
		{"200 anonymous checkout aliases are over the ceiling", "", checkout, "$c: String!",
			resolverstest.Vars{"c": "nope"}, 200, 200 * perCheckout, true},
		{"22 aliases of a product page with benefits are over the ceiling", org.Token, products, "",
			nil, 22, 22 * (1 + 100*(1+resolvers.MaxProductBenefits)), true},
		{"a day's meter quantities over a year count 366 buckets", org.Token, meter,
			"$m: UUID!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!",
			resolverstest.Vars{"m": uuid.New(), "from": "2025-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "i": "day"}, 1, 1 + 366, false},
		{"150 aliases of a year of days are over the ceiling", org.Token, meter,
			"$m: UUID!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!",
			resolverstest.Vars{"m": uuid.New(), "from": "2025-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "i": "day"}, 150, 150 * 367, true},
		{"seven days of hours count 168 buckets", org.Token, meter,
			"$m: UUID!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!",
			resolverstest.Vars{"m": uuid.New(), "from": "2026-03-02T00:00:00Z", "to": "2026-03-09T00:00:00Z", "i": "hour"}, 1, 1 + 168, false},
		{"a window too long for its interval counts the interval's most buckets", org.Token, meter,
			"$m: UUID!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!",
			resolverstest.Vars{"m": uuid.New(), "from": "2020-01-01T00:00:00Z", "to": "2026-01-01T00:00:00Z", "i": "hour"}, 1, 1 + 8*24, false},
		{"a year of days for 50 meters counts 366 buckets each", org.Token, costs,
			"$ids: [UUID!]!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!",
			resolverstest.Vars{"ids": meterIDs(50), "from": "2025-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "i": "day"}, 1, 50 * (1 + 1 + 366), false},
		{"two such aliases are over the ceiling", org.Token, costs,
			"$ids: [UUID!]!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!",
			resolverstest.Vars{"ids": meterIDs(50), "from": "2025-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "i": "day"}, 2, 2 * 50 * (1 + 1 + 366), true},
		{"three meters' week of hours counts 168 buckets each", org.Token, costs,
			"$ids: [UUID!]!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!",
			resolverstest.Vars{"ids": meterIDs(3), "from": "2026-03-02T00:00:00Z", "to": "2026-03-09T00:00:00Z", "i": "hour"}, 1, 3 * (1 + 1 + 168), false},
		{"more ids than the field answers count its cap", org.Token, costs,
			"$ids: [UUID!]!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!",
			resolverstest.Vars{"ids": meterIDs(500), "from": "2026-03-02T00:00:00Z", "to": "2026-03-03T00:00:00Z", "i": "day"}, 1,
			resolvers.MaxMeterCostMeters * (1 + 1 + 1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.TrimSuffix(strings.TrimPrefix(repeat(c.aliases, "a%d: "+c.field), "{"), "}")
			if c.vars != "" {
				doc = "query(" + c.vars + ") {" + doc + "}"
				if strings.Contains(doc, "...Q") {
					doc += " fragment Q on MeterQuantities { quantities { timestamp quantity } total }"
				}
			} else {
				doc = "{" + doc + "}"
			}
			res := s.Do(t, c.token, doc, c.values)
			if res.Cost == nil || res.Cost.Requested != c.cost {
				t.Fatalf("extensions.cost = %+v, want requested %d: %.300s", res.Cost, c.cost, res.Body)
			}
			refused := len(res.Errors) == 1 && res.Errors[0].Extensions.Code == "COST_LIMIT_EXCEEDED"
			if refused != c.refused {
				t.Fatalf("refused %v, want %v: %.300s", refused, c.refused, res.Body)
			}
		})
	}
}

// TestWholeListsAreCappedWhereTheyAreWritten refuses, with a 422 naming the input, the write
// that would take a list past the size the schema declares for it.
func TestWholeListsAreCappedWhereTheyAreWritten(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	ids := func(n int) []uuid.UUID {
		out := make([]uuid.UUID, n)
		for i := range out {
			out[i] = uuid.New()
		}
		return out
	}
	prices := func(n int) []vars {
		out := make([]vars, n)
		for i := range out {
			out[i] = vars{"amountType": "fixed", "priceAmount": 1000 + i}
		}
		return out
	}
	p := createProduct(t, s, org.Token, vars{"name": "Capped", "prices": prices(1)})
	seated := createProduct(t, s, org.Token, vars{"name": "Open seats",
		"prices": []vars{ckSeats("", vars{"minSeats": 1, "maxSeats": nil, "pricePerSeat": 1})}})
	for _, c := range []struct {
		name, doc string
		values    vars
		loc       string
		typ       string
	}{
		{"a product with 21 benefits", `mutation($in: ProductCreateInput!) { createProduct(input: $in) { id } }`,
			vars{"in": vars{"name": "Many", "prices": prices(1), "benefitIds": ids(resolvers.MaxProductBenefits + 1)}}, "benefitIds", "too_long"},
		{"21 benefits set on a product", `mutation($in: ProductBenefitsInput!) { updateProductBenefits(input: $in) { id } }`,
			vars{"in": vars{"id": p.ID, "benefitIds": ids(resolvers.MaxProductBenefits + 1)}}, "benefitIds", "too_long"},
		{"a product with 21 prices", `mutation($in: ProductCreateInput!) { createProduct(input: $in) { id } }`,
			vars{"in": vars{"name": "Many", "prices": prices(resolvers.MaxProductPrices + 1)}}, "prices", "too_long"},
		{"21 prices set on a product", `mutation($in: ProductUpdateInput!) { updateProduct(input: $in) { id } }`,
			vars{"in": vars{"id": p.ID, "prices": prices(resolvers.MaxProductPrices + 1)}}, "prices", "too_long"},
		{"a checkout of 11 products", `mutation($in: CheckoutCreateInput!) { createCheckout(input: $in) { id } }`,
			vars{"in": vars{"products": append([]uuid.UUID{p.ID}, ids(resolvers.MaxCheckoutProducts)...)}}, "products", "too_long"},
		{"a discount limited to 101 products", `mutation($in: DiscountCreateInput!) { createDiscount(input: $in) { id } }`,
			vars{"in": vars{"name": "Many", "type": "percentage", "basisPoints": 1000, "duration": "once",
				"products": ids(resolvers.MaxDiscountProducts + 1)}}, "products", "too_long"},
		{"a checkout of 10,001 seats at an open-ended tier", `mutation($in: CheckoutCreateInput!) { createCheckout(input: $in) { id } }`,
			vars{"in": vars{"products": []uuid.UUID{seated.ID}, "seats": resolvers.MaxSeats + 1}}, "seats", "less_than_equal"},
	} {
		t.Run(c.name+" is refused as bad input", func(t *testing.T) {
			t.Parallel()
			e := s.QueryError(t, org.Token, c.doc, c.values)
			if e.Extensions.Code != "BAD_USER_INPUT" || len(e.Extensions.Fields) != 1 || e.Extensions.Fields[0].Type != c.typ ||
				e.Extensions.Fields[0].Loc[len(e.Extensions.Fields[0].Loc)-1] != c.loc {
				t.Fatalf("error = %+v, want BAD_USER_INPUT %s at %s", e, c.typ, c.loc)
			}
		})
	}
	t.Run("a customer's 21st saved payment method is refused as bad input", func(t *testing.T) {
		t.Parallel()
		c := s.NewCustomer(t, org.ID, "")
		for range resolvers.MaxCustomerPaymentMethods {
			s.Query(t, org.Token, ckSaveMethod, vars{"in": vars{"customerId": c.ID, "token": "tok_visa"}}, nil)
		}
		e := s.QueryError(t, org.Token, ckSaveMethod, vars{"in": vars{"customerId": c.ID, "token": "tok_visa"}})
		if e.Extensions.Code != "BAD_USER_INPUT" || len(e.Extensions.Fields) != 1 || e.Extensions.Fields[0].Type != "too_long" {
			t.Fatalf("error = %+v, want BAD_USER_INPUT too_long", e)
		}
		var live int
		s.Get(t, &live, `SELECT count(*) FROM payment_methods WHERE customer_id = $1 AND deleted_at IS NULL`, c.ID)
		if live != resolvers.MaxCustomerPaymentMethods {
			t.Errorf("%d live methods, want %d", live, resolvers.MaxCustomerPaymentMethods)
		}
	})
}

// meterIDs is n random ids: the cost of an operation is priced before any is looked up.
func meterIDs(n int) []uuid.UUID {
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = uuid.New()
	}
	return ids
}
