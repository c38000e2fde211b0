package resolvers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// ckTypedPrices reads a checkout's prices both ways: typed, each member's fields aliased to
// the snake_case keys /v1 shows, and as the JSON the persisted documents select.
const ckTypedPrices = `query($id: UUID!) { checkout(id: $id) {
	productPrice { ...P } wireProductPrice
	products { prices { ...P } members: prices { __typename } wirePrices } } }
fragment P on CheckoutPrice {
	created_at: createdAt modified_at: modifiedAt id source amount_type: amountType
	price_currency: priceCurrency tax_behavior: taxBehavior is_archived: isArchived product_id: productId
	... on CheckoutPriceFixed { price_amount: priceAmount }
	... on CheckoutPriceCustom { minimum_amount: minimumAmount maximum_amount: maximumAmount preset_amount: presetAmount }
	... on CheckoutPriceSeatBased { seat_tiers: seatTiers { seat_tier_type: seatTierType
		tiers { min_seats: minSeats max_seats: maxSeats price_per_seat: pricePerSeat }
		minimum_seats: minimumSeats maximum_seats: maximumSeats } }
	... on CheckoutPriceMeteredUnit { unit_amount: unitAmount cap_amount: capAmount meter_id: meterId
		meter { id name unit custom_label: customLabel custom_multiplier: customMultiplier } } }`

// TestCheckoutPricesReadTypedAsTheyRenderOnV1 holds the two spellings of a checkout's prices
// together: every amount type read through its CheckoutPrice member, keys aliased as /v1
// spells them, is byte for byte the JSON that /v1 serves.
func TestCheckoutPricesReadTypedAsTheyRenderOnV1(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	var meter uuid.UUID
	s.Get(t, &meter, `INSERT INTO meters (organization_id, name, filter, aggregation, custom_label, custom_multiplier)
		VALUES ($1, 'Tokens', '{"conjunction": "and", "clauses": []}', '{"func": "count"}', 'k tokens', 1000) RETURNING id`, org.ID)
	once := ckProduct(t, s, org.Token, "Once", "", ckFixed(1000), ckCustom(100, 5000, nil))
	plan := ckProduct(t, s, org.Token, "Plan", "month", vars{"amountType": "free"},
		vars{"amountType": "metered_unit", "unitAmount": "0.25", "meterId": meter, "capAmount": 9000})
	seats := ckProduct(t, s, org.Token, "Seats", "month", ckSeats("graduated",
		vars{"minSeats": 1, "maxSeats": 4, "pricePerSeat": 900}, vars{"minSeats": 5, "pricePerSeat": 700}))
	c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{seats.ID, once.ID, plan.ID}, "seats": 3})

	res := s.Do(t, org.Token, ckTypedPrices, vars{"id": c.ID})
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %s", res.Body)
	}
	// Raw messages keep the keys in the order the response wrote them.
	var out struct {
		Checkout struct {
			ProductPrice     json.RawMessage
			WireProductPrice json.RawMessage
			Products         []struct {
				Prices  []json.RawMessage
				Members []struct {
					Typename string `json:"__typename"`
				}
				WirePrices []json.RawMessage
			}
		}
	}
	mustUnmarshal(t, res.Data, &out)
	compact := func(raw json.RawMessage) string {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got, want := compact(out.Checkout.ProductPrice), compact(out.Checkout.WireProductPrice); got != want {
		t.Errorf("productPrice:\n typed %s\n  wire %s", got, want)
	}
	members := map[string]bool{}
	for i, p := range out.Checkout.Products {
		if len(p.Prices) != len(p.WirePrices) {
			t.Fatalf("product %d: %d typed prices, %d wire prices", i, len(p.Prices), len(p.WirePrices))
		}
		for j := range p.Prices {
			members[p.Members[j].Typename] = true
			if got, want := compact(p.Prices[j]), compact(p.WirePrices[j]); got != want {
				t.Errorf("products[%d].prices[%d] (%s):\n typed %s\n  wire %s", i, j, p.Members[j].Typename, got, want)
			}
		}
	}
	for _, m := range []string{"CheckoutPriceFixed", "CheckoutPriceCustom", "CheckoutPriceFree", "CheckoutPriceSeatBased", "CheckoutPriceMeteredUnit"} {
		if !members[m] {
			t.Errorf("no price read as %s", m)
		}
	}

	t.Run("a seat-based price of more tiers than the cap is refused", func(t *testing.T) {
		tiers := make([]vars, resolvers.MaxSeatTiers+1)
		for i := range tiers {
			tiers[i] = vars{"minSeats": i + 1, "maxSeats": i + 1, "pricePerSeat": 100}
		}
		e := s.QueryError(t, org.Token, `mutation($input: ProductCreateInput!) { createProduct(input: $input) { id } }`,
			vars{"input": vars{"name": "Many tiers", "recurringInterval": "month", "prices": []vars{ckSeats("", tiers...)}}})
		wantInvalid(t, e, fieldErr{Type: "too_long", Loc: []any{"input", "prices", 0, "seatTiers", "tiers"},
			Msg:   fmt.Sprintf("List should have at most %d items after validation, not %d", resolvers.MaxSeatTiers, len(tiers)),
			Input: float64(len(tiers))})
	})
}
