package resolvers_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

func TestCheckoutAmounts(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	tok := org.Token
	fixed := ckProduct(t, s, tok, "Fixed", "", ckFixed(2500))
	custom := ckProduct(t, s, tok, "Custom", "", ckCustom(500, 10000, 1500))
	customBare := ckProduct(t, s, tok, "Custom bare", "", ckCustom(0, nil, nil))
	free := ckProduct(t, s, tok, "Free", "", vars{"amountType": "free"})
	volume := ckProduct(t, s, tok, "Volume seats", "month", ckSeats("",
		vars{"minSeats": 1, "maxSeats": 4, "pricePerSeat": 1000}, vars{"minSeats": 5, "pricePerSeat": 800}))
	graduated := ckProduct(t, s, tok, "Graduated seats", "month", ckSeats("graduated",
		vars{"minSeats": 1, "maxSeats": 4, "pricePerSeat": 1000}, vars{"minSeats": 5, "pricePerSeat": 800}))
	pct := ckDiscount(t, s, tok, vars{"name": "Third off", "type": "percentage", "basisPoints": 3333, "duration": "once"})
	flat := ckDiscount(t, s, tok, vars{"name": "Five off", "type": "fixed", "amount": 500, "duration": "forever"})
	huge := ckDiscount(t, s, tok, vars{"name": "Huge", "type": "fixed", "amount": 100000, "duration": "once"})
	ckDiscount(t, s, tok, vars{"name": "Welcome", "type": "fixed", "amount": 300, "duration": "once", "code": "Welcome10"})

	for _, tc := range []struct {
		name string
		in   vars
		want ckAmounts
	}{
		{"a fixed price costs its amount", vars{"products": []uuid.UUID{fixed.ID}}, ckAmounts{2500, 0, 2500, 2500}},
		{"a custom price starts at its preset", vars{"products": []uuid.UUID{custom.ID}}, ckAmounts{1500, 0, 1500, 1500}},
		{"a custom price takes the buyer's amount", vars{"products": []uuid.UUID{custom.ID}, "amount": 7000},
			ckAmounts{7000, 0, 7000, 7000}},
		{"a custom price without preset or minimum falls back to 1000", vars{"products": []uuid.UUID{customBare.ID}},
			ckAmounts{1000, 0, 1000, 1000}},
		{"a free price costs nothing", vars{"products": []uuid.UUID{free.ID}}, ckAmounts{0, 0, 0, 0}},
		{"volume seats price every seat at the tier of the count", vars{"products": []uuid.UUID{volume.ID}, "seats": 6},
			ckAmounts{4800, 0, 4800, 4800}},
		{"graduated seats price each tier's range at its own rate",
			vars{"products": []uuid.UUID{graduated.ID}, "seats": 6}, ckAmounts{5600, 0, 5600, 5600}},
		{"a percentage discount rounds half up", vars{"products": []uuid.UUID{fixed.ID}, "discountId": pct},
			ckAmounts{2500, 833, 1667, 1667}},
		{"a fixed discount takes its amount off", vars{"products": []uuid.UUID{fixed.ID}, "discountId": flat},
			ckAmounts{2500, 500, 2000, 2000}},
		{"a fixed discount larger than the price stops at zero", vars{"products": []uuid.UUID{fixed.ID}, "discountId": huge},
			ckAmounts{2500, 2500, 0, 0}},
		{"a discount code applies case-insensitively", vars{"products": []uuid.UUID{fixed.ID}, "discountCode": "WELCOME10"},
			ckAmounts{2500, 300, 2200, 2200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ckNewCheckout(t, s, tok, tc.in)
			if diff := cmp.Diff(tc.want, c.amounts()); diff != "" {
				t.Errorf("amounts (-want +got):\n%s", diff)
			}
			if c.TaxAmount == nil || *c.TaxAmount != 0 {
				t.Errorf("taxAmount = %v, want 0 (no tax engine)", c.TaxAmount)
			}
			if c.Status != "open" || c.Currency != "usd" {
				t.Errorf("status %q currency %q, want open usd", c.Status, c.Currency)
			}
		})
	}

	t.Run("flags follow the price, the total and the trial", func(t *testing.T) {
		trial := createProduct(t, s, tok, vars{"name": "Trial sub", "recurringInterval": "month",
			"trialInterval": "day", "trialIntervalCount": 7, "prices": []vars{ckFixed(900)}})
		monthly := ckProduct(t, s, tok, "Monthly", "month", ckFixed(900))
		type flags struct{ Applicable, Free, Payment, Setup, Form bool }
		for _, tc := range []struct {
			name string
			in   vars
			want flags
		}{
			{"one-time paid", vars{"products": []uuid.UUID{fixed.ID}}, flags{true, false, true, false, true}},
			{"free", vars{"products": []uuid.UUID{free.ID}}, flags{false, true, false, false, false}},
			{"fully discounted one-time", vars{"products": []uuid.UUID{fixed.ID}, "discountId": huge}, flags{true, false, false, false, false}},
			{"recurring", vars{"products": []uuid.UUID{monthly.ID}}, flags{true, false, true, true, true}},
			{"recurring with a trial needs only a payment setup", vars{"products": []uuid.UUID{trial.ID}}, flags{true, false, false, true, true}},
			{"trial disallowed", vars{"products": []uuid.UUID{trial.ID}, "allowTrial": false}, flags{true, false, true, true, true}},
		} {
			c := ckNewCheckout(t, s, tok, tc.in)
			got := flags{c.IsDiscountApplicable, c.IsFreeProductPrice, c.IsPaymentRequired, c.IsPaymentSetupRequired, c.IsPaymentFormRequired}
			if got != tc.want {
				t.Errorf("%s: flags = %+v, want %+v", tc.name, got, tc.want)
			}
		}
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{trial.ID}})
		if c.TrialEnd == nil || c.ActiveTrialInterval == nil || *c.ActiveTrialInterval != "day" || *c.ActiveTrialIntervalCount != 7 {
			t.Fatalf("trial = %v %v %v, want 7 days", c.TrialEnd, c.ActiveTrialInterval, c.ActiveTrialIntervalCount)
		}
		end, _ := time.Parse(time.RFC3339Nano, *c.TrialEnd)
		if d := time.Until(end); d < 6*24*time.Hour || d > 8*24*time.Hour {
			t.Errorf("trialEnd %s is not about 7 days away", *c.TrialEnd)
		}
		o := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{trial.ID}, "trialInterval": "month", "trialIntervalCount": 1})
		if *o.ActiveTrialInterval != "month" || *o.ActiveTrialIntervalCount != 1 {
			t.Errorf("override trial = %v×%v, want month×1", *o.ActiveTrialInterval, *o.ActiveTrialIntervalCount)
		}
	})

	t.Run("bad amounts and seats are rejected and store nothing", func(t *testing.T) {
		before := ckCount(t, s, `SELECT count(*) FROM checkouts WHERE organization_id = $1`, org.ID)
		for _, tc := range []struct {
			name string
			in   vars
			want fieldErr
		}{
			{"below the minimum", vars{"products": []uuid.UUID{custom.ID}, "amount": 100},
				fieldErr{Type: "greater_than_equal", Loc: []any{"input", "amount"}, Msg: "Amount is below minimum.", Input: float64(100)}},
			{"above the maximum", vars{"products": []uuid.UUID{custom.ID}, "amount": 20000},
				fieldErr{Type: "less_than_equal", Loc: []any{"input", "amount"}, Msg: "Amount is above maximum.", Input: float64(20000)}},
			{"seats missing on a seat price", vars{"products": []uuid.UUID{volume.ID}},
				fieldErr{Type: "missing", Loc: []any{"input", "seats"}, Msg: "Seats is required for seat-based pricing.", Input: nil}},
			{"seats on a fixed price", vars{"products": []uuid.UUID{fixed.ID}, "seats": 2},
				fieldErr{Type: "value_error", Loc: []any{"input", "seats"}, Msg: "Seats can only be set for seat-based pricing.", Input: float64(2)}},
			{"seats above the checkout's maximum", vars{"products": []uuid.UUID{volume.ID}, "seats": 9, "maxSeats": 8},
				fieldErr{Type: "value_error", Loc: []any{"input", "seats"}, Msg: "Seats must be between 1 and 8.", Input: float64(9)}},
			{"seats below the checkout's minimum", vars{"products": []uuid.UUID{volume.ID}, "seats": 2, "minSeats": 3},
				fieldErr{Type: "value_error", Loc: []any{"input", "seats"}, Msg: "Seats must be at least 3.", Input: float64(2)}},
			{"another organization's product", vars{"products": []uuid.UUID{uuid.New()}},
				fieldErr{Type: "value_error", Loc: []any{"input", "products", 0}, Msg: "Product does not exist.", Input: nil}},
			{"a discount code on a checkout without codes", vars{"products": []uuid.UUID{fixed.ID}, "discountCode": "WELCOME10",
				"allowDiscountCodes": false},
				fieldErr{Type: "value_error", Loc: []any{"input", "discountCode"}, Msg: "Discount codes are not allowed on this checkout.", Input: "WELCOME10"}},
			{"an unknown discount code", vars{"products": []uuid.UUID{fixed.ID}, "discountCode": "NOPE123"},
				fieldErr{Type: "value_error", Loc: []any{"input", "discountCode"}, Msg: "Discount does not exist.", Input: "NOPE123"}},
			{"a discount of a free price", vars{"products": []uuid.UUID{free.ID}, "discountId": flat},
				fieldErr{Type: "value_error", Loc: []any{"input", "discountId"}, Msg: "Discounts are not applicable to this product.", Input: nil}},
		} {
			e := s.QueryError(t, tok, ckCreate, vars{"in": tc.in})
			if tc.want.Input == nil && len(e.Extensions.Fields) == 1 {
				e.Extensions.Fields[0].Input = nil
			}
			wantInvalid(t, e, tc.want)
		}
		if after := ckCount(t, s, `SELECT count(*) FROM checkouts WHERE organization_id = $1`, org.ID); after != before {
			t.Errorf("%d checkouts stored by failed creates", after-before)
		}
	})
}

func TestCheckoutShapes(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	a := ckProduct(t, s, org.Token, "Alpha", "", ckFixed(1000))
	b := ckProduct(t, s, org.Token, "Beta", "", ckCustom(100, nil, nil))
	code := ckDiscount(t, s, org.Token, vars{"name": "Code", "type": "percentage", "basisPoints": 1000,
		"duration": "once", "code": "SPRING25"})

	t.Run("several products offer their prices in union shapes and the first is selected", func(t *testing.T) {
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{a.ID, b.ID}, "discountCode": "spring25",
			"successUrl": "https://shop.example/ok?c={CHECKOUT_ID}", "metadata": vars{"ref": "x"}})
		if *c.ProductID != a.ID || *c.ProductPriceID != a.Prices[0].ID || len(c.Products) != 2 {
			t.Fatalf("selected %v/%v of %d products", c.ProductID, c.ProductPriceID, len(c.Products))
		}
		if c.DiscountID == nil || *c.DiscountID != code || c.Discount.Typename != "CheckoutDiscountPercentageOnceForeverDuration" {
			t.Errorf("discount = %v %+v, want the SPRING25 percentage discount", c.DiscountID, c.Discount)
		}
		if c.SuccessURL != "https://shop.example/ok?c="+c.ID.String() {
			t.Errorf("successUrl = %s", c.SuccessURL)
		}
		if !strings.HasPrefix(c.ClientSecret, "till_c_") || c.URL != resolverstest.PortalURL+"/checkout/"+c.ClientSecret {
			t.Errorf("client secret %q, url %q", c.ClientSecret, c.URL)
		}
		var fixed map[string]any
		_ = json.Unmarshal(c.ProductPrice, &fixed)
		if fixed["amount_type"] != "fixed" || fixed["price_amount"] != float64(1000) || len(fixed) != 10 {
			t.Errorf("productPrice = %s, want the 10 fields of ProductPriceFixed", c.ProductPrice)
		}
		var custom map[string]any
		_ = json.Unmarshal(c.Products[1].Prices[0], &custom)
		if _, has := custom["price_amount"]; has || custom["minimum_amount"] != float64(100) || len(custom) != 12 {
			t.Errorf("custom price = %s, want the 12 fields of ProductPriceCustom", c.Products[1].Prices[0])
		}
		var byProduct map[string][]map[string]any
		_ = json.Unmarshal(c.Prices, &byProduct)
		if len(byProduct[a.ID.String()]) != 1 || len(byProduct[b.ID.String()]) != 1 {
			t.Errorf("prices = %s, want one price per product", c.Prices)
		}
		want := map[string]string{"country": "required", "state": "disabled", "city": "disabled",
			"postalCode": "disabled", "line1": "disabled", "line2": "disabled"}
		if diff := cmp.Diff(want, c.BillingAddressFields); diff != "" {
			t.Errorf("billing address fields (-want +got):\n%s", diff)
		}
	})

	t.Run("a metered price embeds its meter and adds nothing to the amount", func(t *testing.T) {
		var meter uuid.UUID
		s.Get(t, &meter, `INSERT INTO meters (organization_id, name, filter, aggregation)
			VALUES ($1, 'API calls', '{"conjunction": "and", "clauses": []}', '{"func": "count"}') RETURNING id`, org.ID)
		p := ckProduct(t, s, org.Token, "Metered", "month", ckFixed(500),
			vars{"amountType": "metered_unit", "unitAmount": "0.5", "meterId": meter})
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{p.ID}})
		var metered map[string]any
		_ = json.Unmarshal(c.Products[0].Prices[1], &metered)
		m, _ := metered["meter"].(map[string]any)
		if metered["amount_type"] != "metered_unit" || len(metered) != 13 || m["name"] != "API calls" || m["unit"] != "scalar" {
			t.Errorf("metered price = %s, want the 13 fields of ProductPriceMeteredUnit with its meter", c.Products[0].Prices[1])
		}
		if c.Amount != 500 || !c.IsPaymentSetupRequired {
			t.Errorf("amount %d, setup required %v; want the fixed part and a setup", c.Amount, c.IsPaymentSetupRequired)
		}
	})

	t.Run("a checkout with a required billing address asks for the full address", func(t *testing.T) {
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{a.ID}, "requireBillingAddress": true,
			"customerBillingAddress": vars{"country": "US"}})
		want := map[string]string{"country": "required", "state": "required", "city": "required",
			"postalCode": "required", "line1": "required", "line2": "optional"}
		if diff := cmp.Diff(want, c.BillingAddressFields); diff != "" {
			t.Errorf("billing address fields (-want +got):\n%s", diff)
		}
	})

	t.Run("a linked customer prefills the buyer's details", func(t *testing.T) {
		cust := createCustomer(t, s, org.Token, vars{"email": "pre@example.com", "name": "Pre Fill", "externalId": "ext-9"})
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{a.ID}, "externalCustomerId": "ext-9"})
		if c.CustomerID == nil || *c.CustomerID != cust.ID || *c.CustomerEmail != "pre@example.com" || *c.CustomerName != "Pre Fill" {
			t.Errorf("customer %v %v %v, want the linked customer's", c.CustomerID, c.CustomerEmail, c.CustomerName)
		}
		e := s.QueryError(t, org.Token, ckCreate, vars{"in": vars{"products": []uuid.UUID{a.ID}, "customerId": uuid.New()}})
		if (e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != "PolarRequestValidationError") || e.Message != "Customer does not exist." {
			t.Errorf("unknown customer: %s %q", e.Extensions.Code, e.Message)
		}
	})

	t.Run("another organization cannot read or update the checkout", func(t *testing.T) {
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{a.ID}})
		other := s.NewOrg(t, resolverstest.AllScopes)
		e := s.QueryError(t, other.Token, `query($id: UUID!) { checkout(id: $id) { id } }`, vars{"id": c.ID})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
		e = s.QueryError(t, other.Token, ckUpdate, vars{"in": vars{"id": c.ID, "seats": 2}})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
	})
}

func TestCheckoutUpdates(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	a := ckProduct(t, s, org.Token, "Alpha", "", ckFixed(1000))
	seats := ckProduct(t, s, org.Token, "Seats", "month", ckSeats("", vars{"minSeats": 1, "pricePerSeat": 300}))
	limited := ckDiscount(t, s, org.Token, vars{"name": "Alpha only", "type": "fixed", "amount": 200,
		"duration": "once", "products": []uuid.UUID{a.ID}})

	t.Run("switching product re-prices and drops a discount that no longer applies", func(t *testing.T) {
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{a.ID, seats.ID}, "discountId": limited})
		if c.DiscountAmount != 200 {
			t.Fatalf("discount amount = %d, want 200", c.DiscountAmount)
		}
		var out struct{ UpdateCheckout ckCheckout }
		s.Query(t, org.Token, ckUpdate, vars{"in": vars{"id": c.ID, "productId": seats.ID, "seats": 3}}, &out)
		u := out.UpdateCheckout
		if *u.ProductID != seats.ID || u.Amount != 900 || u.DiscountID != nil || *u.Seats != 3 {
			t.Errorf("after switch: product %v amount %d discount %v seats %v", u.ProductID, u.Amount, u.DiscountID, u.Seats)
		}
	})

	t.Run("changing seats of a seat-based checkout re-prices it", func(t *testing.T) {
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{seats.ID}, "seats": 2})
		var out struct{ UpdateCheckout ckCheckout }
		s.Query(t, org.Token, ckUpdate, vars{"in": vars{"id": c.ID, "seats": 5, "customerEmail": "b@example.com",
			"metadata": vars{"k": "v"}}}, &out)
		if u := out.UpdateCheckout; u.Amount != 1500 || *u.CustomerEmail != "b@example.com" || u.Metadata["k"] != "v" {
			t.Errorf("after update: amount %d email %v metadata %v", u.Amount, u.CustomerEmail, u.Metadata)
		}
		e := s.QueryError(t, org.Token, ckUpdate, vars{"in": vars{"id": c.ID, "seats": 0}})
		wantInvalid(t, e, fieldErr{Type: "greater_than_equal", Loc: []any{"input", "seats"},
			Msg: "Input should be greater than or equal to 1", Input: float64(0)})
	})

	t.Run("an expired checkout reads as expired and cannot change", func(t *testing.T) {
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{a.ID}})
		s.Exec(t, `UPDATE checkouts SET expires_at = now() - interval '1 second' WHERE id = $1`, c.ID)
		if got := ckGet(t, s, org.Token, c.ID); got.Status != "expired" {
			t.Errorf("status = %s, want expired", got.Status)
		}
		e := s.QueryError(t, org.Token, ckUpdate, vars{"in": vars{"id": c.ID, "customerName": "Late"}})
		wantError(t, e, "CONFLICT", "ExpiredCheckoutError")
		n, err := s.Resolver.ExpireCheckouts(t.Context(), time.Now())
		if err != nil || n != 1 {
			t.Fatalf("ExpireCheckouts = %d, %v; want 1", n, err)
		}
		var stored string
		s.Get(t, &stored, `SELECT status FROM checkouts WHERE id = $1`, c.ID)
		if stored != "expired" || ckCount(t, s, `SELECT count(*) FROM domain_events WHERE object_id = $1 AND type = 'checkout.expired'`, c.ID) != 1 {
			t.Errorf("stored status %s, or no checkout.expired event", stored)
		}
		if n, _ := s.Resolver.ExpireCheckouts(t.Context(), time.Now()); n != 0 {
			t.Errorf("second sweep expired %d, want 0", n)
		}
	})

	t.Run("a checkout a crash left confirmed is reopened and can be bought", func(t *testing.T) {
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{a.ID}, "customerEmail": "crash@example.com"})
		fresh := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{a.ID}, "customerEmail": "slow@example.com"})
		s.Exec(t, `UPDATE checkouts SET status = 'confirmed', modified_at = now() - interval '10 minutes' WHERE id = $1`, c.ID)
		s.Exec(t, `UPDATE checkouts SET status = 'confirmed' WHERE id = $1`, fresh.ID)
		n, err := s.Resolver.ReopenStaleCheckouts(t.Context(), time.Now())
		if err != nil || n != 1 {
			t.Fatalf("ReopenStaleCheckouts = %d, %v; want 1 (a recent confirm is left alone)", n, err)
		}
		if got := ckGet(t, s, org.Token, c.ID); got.Status != "open" {
			t.Fatalf("status = %s, want open", got.Status)
		}
		var out struct{ ConfirmCheckout struct{ Status string } }
		s.Query(t, org.Token, `mutation($id: UUID!) { confirmCheckout(input: {id: $id, paymentToken: "tok_visa"}) { status } }`,
			vars{"id": c.ID}, &out)
		if out.ConfirmCheckout.Status != "succeeded" {
			t.Errorf("confirming the reopened checkout: %s", out.ConfirmCheckout.Status)
		}
		if got := ckGet(t, s, org.Token, fresh.ID); got.Status != "confirmed" {
			t.Errorf("a checkout confirmed a moment ago was touched: %s", got.Status)
		}
	})

	t.Run("a purchase still running past the lease keeps its checkout", func(t *testing.T) {
		c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{a.ID}, "customerEmail": "slowpay@example.com"})
		s.Exec(t, `UPDATE checkouts SET status = 'confirmed', modified_at = now() - interval '1 minute' WHERE id = $1`, c.ID)
		tx, err := s.DB.BeginTxx(t.Context(), nil) // the purchase step, waiting on the processor
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`SELECT id FROM checkouts WHERE id = $1 FOR UPDATE`, c.ID); err != nil {
			t.Fatal(err)
		}
		n, err := s.Resolver.ReopenStaleCheckouts(t.Context(), time.Now())
		_ = tx.Rollback() // the step dies without committing
		if err != nil || n != 0 {
			t.Fatalf("while the purchase held its checkout: reopened %d, %v; want 0", n, err)
		}
		if n, err := s.Resolver.ReopenStaleCheckouts(t.Context(), time.Now()); err != nil || n != 1 {
			t.Fatalf("once it died: reopened %d, %v; want 1", n, err)
		}
		if got := ckGet(t, s, org.Token, c.ID); got.Status != "open" {
			t.Errorf("status = %s, want open", got.Status)
		}
	})
}
