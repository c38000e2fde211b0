package resolvers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
)

const ckDiscountFields = `id name type basisPoints amount currency duration durationInMonths code startsAt endsAt
	maxRedemptions maxRedemptionsPerCustomer redemptionsCount metadata organizationId products { id }`

type ckDiscountRow struct {
	ID               uuid.UUID `json:"id"`
	Name             string    `json:"name"`
	Type             string    `json:"type"`
	BasisPoints      *int      `json:"basisPoints"`
	Amount           *int      `json:"amount"`
	Currency         *string   `json:"currency"`
	Duration         string    `json:"duration"`
	DurationInMonths *int      `json:"durationInMonths"`
	Code             *string   `json:"code"`
	MaxRedemptions   *int      `json:"maxRedemptions"`
	RedemptionsCount int       `json:"redemptionsCount"`
	Products         []struct {
		ID uuid.UUID `json:"id"`
	} `json:"products"`
}

const ckCreateDiscount = `mutation($in: DiscountCreateInput!) { createDiscount(input: $in) { ` + ckDiscountFields + ` } }`

func TestDiscounts(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	tok := org.Token
	prod := ckProduct(t, s, tok, "Course", "", ckFixed(5000))

	t.Run("each type and duration is created with the fields it needs", func(t *testing.T) {
		for _, in := range []vars{
			{"name": "Pct once", "type": "percentage", "basisPoints": 2500, "duration": "once", "amount": 99},
			{"name": "Pct forever", "type": "percentage", "basisPoints": 10000, "duration": "forever"},
			{"name": "Pct repeating", "type": "percentage", "basisPoints": 1, "duration": "repeating", "durationInMonths": 3},
			{"name": "Fixed once", "type": "fixed", "amount": 1000, "duration": "once", "basisPoints": 5},
			{"name": "Fixed repeating", "type": "fixed", "amount": 0, "currency": "EUR", "duration": "repeating", "durationInMonths": 12},
		} {
			var out struct{ CreateDiscount ckDiscountRow }
			s.Query(t, tok, ckCreateDiscount, vars{"in": in}, &out)
			d := out.CreateDiscount
			if d.Type == "percentage" && (d.BasisPoints == nil || d.Amount != nil || d.Currency != nil) {
				t.Errorf("%s: percentage fields %v %v %v", d.Name, d.BasisPoints, d.Amount, d.Currency)
			}
			if d.Type == "fixed" && (d.Amount == nil || d.Currency == nil || d.BasisPoints != nil) {
				t.Errorf("%s: fixed fields %v %v %v", d.Name, d.BasisPoints, d.Amount, d.Currency)
			}
			if (d.Duration == "repeating") != (d.DurationInMonths != nil) {
				t.Errorf("%s: duration %s months %v", d.Name, d.Duration, d.DurationInMonths)
			}
		}
	})

	t.Run("bad discounts are rejected", func(t *testing.T) {
		for _, tc := range []struct {
			in   vars
			want fieldErr
		}{
			{vars{"name": "x", "type": "percentage", "basisPoints": 0, "duration": "once"},
				fieldErr{Type: "less_than_equal", Loc: []any{"input", "basisPoints"}, Msg: "Basis points must be between 1 and 10000.", Input: float64(0)}},
			{vars{"name": "x", "type": "percentage", "basisPoints": 10001, "duration": "once"},
				fieldErr{Type: "less_than_equal", Loc: []any{"input", "basisPoints"}, Msg: "Basis points must be between 1 and 10000.", Input: float64(10001)}},
			{vars{"name": "x", "type": "fixed", "duration": "once"},
				fieldErr{Type: "missing", Loc: []any{"input", "amount"}, Msg: "Field required"}},
			{vars{"name": "x", "type": "fixed", "amount": 1, "duration": "repeating"},
				fieldErr{Type: "missing", Loc: []any{"input", "durationInMonths"}, Msg: "Field required"}},
			{vars{"name": "x", "type": "fixed", "amount": 1, "duration": "once", "code": "no-dash"},
				fieldErr{Type: "value_error", Loc: []any{"input", "code"}, Msg: "Value error, Code must contain only alphanumeric characters.", Input: "no-dash"}},
			{vars{"name": "x", "type": "fixed", "amount": 1, "duration": "once", "code": "ab"},
				fieldErr{Type: "value_error", Loc: []any{"input", "code"}, Msg: "Value error, Code must be between 3 and 256 characters long.", Input: "ab"}},
			{vars{"name": "x", "type": "fixed", "amount": 1, "duration": "once", "startsAt": "2030-01-02T00:00:00Z", "endsAt": "2030-01-01T00:00:00Z"},
				fieldErr{Type: "value_error", Loc: []any{"input", "endsAt"}, Msg: "Value error, starts_at must be before ends_at"}},
			{vars{"name": "x", "type": "fixed", "amount": 1, "duration": "once", "maxRedemptions": 0},
				fieldErr{Type: "greater_than_equal", Loc: []any{"input", "maxRedemptions"}, Msg: "Input should be greater than or equal to 1", Input: float64(0)}},
			{vars{"name": "x", "type": "fixed", "amount": 1, "duration": "once", "products": []uuid.UUID{uuid.New()}},
				fieldErr{Type: "value_error", Loc: []any{"input", "products"}, Msg: "Product does not exist."}},
		} {
			wantInvalid(t, s.QueryError(t, tok, ckCreateDiscount, vars{"in": tc.in}), tc.want)
		}
		if n := ckCount(t, s, `SELECT count(*) FROM discounts WHERE organization_id = $1 AND name = 'x'`, org.ID); n != 0 {
			t.Errorf("%d rejected discounts stored", n)
		}
	})

	t.Run("codes are unique per organization ignoring case, and free again once deleted", func(t *testing.T) {
		first := ckDiscount(t, s, tok, vars{"name": "A", "type": "fixed", "amount": 1, "duration": "once", "code": "Summer"})
		e := s.QueryError(t, tok, ckCreateDiscount, vars{"in": vars{"name": "B", "type": "fixed", "amount": 1, "duration": "once", "code": "SUMMER"}})
		wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "code"}, Msg: "Discount with this code already exists.", Input: "SUMMER"})
		other := s.NewOrg(t, resolverstest.AllScopes)
		ckDiscount(t, s, other.Token, vars{"name": "B", "type": "fixed", "amount": 1, "duration": "once", "code": "summer"})
		s.Query(t, tok, `mutation($id: UUID!) { deleteDiscount(id: $id) { id } }`, vars{"id": first}, nil)
		ckDiscount(t, s, tok, vars{"name": "C", "type": "fixed", "amount": 1, "duration": "once", "code": "summer"})
		e = s.QueryError(t, tok, `query($id: UUID!) { discount(id: $id) { id } }`, vars{"id": first})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
		e = s.QueryError(t, other.Token, `query($id: UUID!) { discount(id: $id) { id } }`, vars{"id": first})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
	})

	t.Run("updates change fields, products and freeze the price effect once redeemed", func(t *testing.T) {
		id := ckDiscount(t, s, tok, vars{"name": "Upd", "type": "percentage", "basisPoints": 500, "duration": "once"})
		var out struct{ UpdateDiscount ckDiscountRow }
		s.Query(t, tok, `mutation($in: DiscountUpdateInput!) { updateDiscount(input: $in) { `+ckDiscountFields+` } }`,
			vars{"in": vars{"id": id, "name": "Updated", "basisPoints": 700, "products": []uuid.UUID{prod.ID}, "code": "UPD100"}}, &out)
		d := out.UpdateDiscount
		if d.Name != "Updated" || *d.BasisPoints != 700 || len(d.Products) != 1 || *d.Code != "UPD100" {
			t.Errorf("updated = %+v", d)
		}
		s.Exec(t, `UPDATE discounts SET redemptions_count = 1 WHERE id = $1`, id)
		e := s.QueryError(t, tok, `mutation($in: DiscountUpdateInput!) { updateDiscount(input: $in) { id } }`,
			vars{"in": vars{"id": id, "basisPoints": 900}})
		if e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != "PolarRequestValidationError" {
			t.Errorf("changing a redeemed discount's amount: %s", e.Extensions.Code)
		}
		s.Query(t, tok, `mutation($in: DiscountUpdateInput!) { updateDiscount(input: $in) { id } }`,
			vars{"in": vars{"id": id, "name": "Renamed", "code": nil}}, nil)
	})

	t.Run("the list filters by query and code and pages", func(t *testing.T) {
		o := s.NewOrg(t, resolverstest.AllScopes)
		for _, n := range []string{"Black Friday", "Cyber Monday", "Friends"} {
			ckDiscount(t, s, o.Token, vars{"name": n, "type": "fixed", "amount": 1, "duration": "once", "code": "C" + n[:3]})
		}
		var out struct {
			Discounts struct {
				Items      []ckDiscountRow
				Pagination struct{ TotalCount, MaxPage int }
			}
		}
		s.Query(t, o.Token, `query { discounts(filter: {query: "fri"}, sorting: ["name"], limit: 1) { items { name } pagination { totalCount maxPage } } }`, nil, &out)
		if out.Discounts.Pagination.TotalCount != 2 || out.Discounts.Pagination.MaxPage != 2 || out.Discounts.Items[0].Name != "Black Friday" {
			t.Errorf("query list = %+v", out.Discounts)
		}
		s.Query(t, o.Token, `query { discounts(filter: {code: "ccyb"}) { items { name } pagination { totalCount maxPage } } }`, nil, &out)
		if out.Discounts.Pagination.TotalCount != 1 || out.Discounts.Items[0].Name != "Cyber Monday" {
			t.Errorf("code list = %+v", out.Discounts)
		}
	})
}

func TestDiscountRules(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	tok := org.Token
	usd := ckProduct(t, s, tok, "Usd thing", "", ckFixed(1000))
	eur := ckProduct(t, s, tok, "Eur thing", "", vars{"amountType": "fixed", "priceAmount": 1000, "priceCurrency": "eur"})
	other := ckProduct(t, s, tok, "Other thing", "", ckFixed(1000))
	now := time.Now().UTC()
	for _, tc := range []struct {
		name     string
		discount vars
		product  uuid.UUID
		msg      string
	}{
		{"a discount that has not started", vars{"startsAt": now.Add(time.Hour)}, usd.ID, "Discount is not redeemable yet."},
		{"a discount that has ended", vars{"startsAt": now.Add(-2 * time.Hour), "endsAt": now.Add(-time.Hour)}, usd.ID, "Discount has expired."},
		{"a discount limited to other products", vars{"products": []uuid.UUID{other.ID}}, usd.ID, "Discount is not applicable to this product."},
		{"a fixed discount in another currency", vars{}, eur.ID, "Discount is not applicable to this currency."},
		{"a repeating discount on a one-time product", vars{"duration": "repeating", "durationInMonths": 2}, usd.ID, "Discount is not applicable to this product."},
	} {
		t.Run(tc.name+" does not apply", func(t *testing.T) {
			in := vars{"name": "Rule", "type": "fixed", "amount": 100, "duration": "once"}
			for k, v := range tc.discount {
				in[k] = v
			}
			id := ckDiscount(t, s, tok, in)
			e := s.QueryError(t, tok, ckCreate, vars{"in": vars{"products": []uuid.UUID{tc.product}, "discountId": id}})
			if (e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != "PolarRequestValidationError") || e.Message != tc.msg {
				t.Errorf("got %s %q, want %q", e.Extensions.Code, e.Message, tc.msg)
			}
		})
	}

	t.Run("a discount within its window applies", func(t *testing.T) {
		id := ckDiscount(t, s, tok, vars{"name": "Window", "type": "fixed", "amount": 100, "duration": "once",
			"startsAt": now.Add(-time.Hour), "endsAt": now.Add(time.Hour), "products": []uuid.UUID{usd.ID}})
		if c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{usd.ID}, "discountId": id}); c.DiscountAmount != 100 {
			t.Errorf("discount amount = %d, want 100", c.DiscountAmount)
		}
	})

	t.Run("the per-customer limit counts the customer's redemptions", func(t *testing.T) {
		id := ckDiscount(t, s, tok, vars{"name": "Per customer", "type": "fixed", "amount": 100, "duration": "once",
			"maxRedemptionsPerCustomer": 1})
		buyer := s.NewCustomer(t, org.ID, "")
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{usd.ID}, "discountId": id, "customerId": buyer.ID})
		s.Query(t, tok, ckConfirm, vars{"in": vars{"id": c.ID, "paymentToken": "tok_visa"}}, nil)
		e := s.QueryError(t, tok, ckCreate, vars{"in": vars{"products": []uuid.UUID{usd.ID}, "discountId": id, "customerId": buyer.ID}})
		if e.Message != "Discount has already been redeemed the maximum number of times by this customer." {
			t.Errorf("second use by the customer: %q", e.Message)
		}
		var count int
		s.Get(t, &count, `SELECT redemptions_count FROM discounts WHERE id = $1`, id)
		if count != 1 {
			t.Errorf("redemptions_count = %d, want 1", count)
		}
		ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{usd.ID}, "discountId": id, "customerEmail": "new@example.com"})
	})
}

// redeem runs one redemption in its own transaction, as a purchase does.
func ckRedeem(db *sqlx.DB, r storage.Redemption) error {
	return storage.InTx(context.Background(), db, func(tx *sqlx.Tx) error {
		return storage.RedeemDiscount(context.Background(), tx, r, time.Now())
	})
}

func TestDiscountRedemptionRaces(t *testing.T) {
	t.Parallel()

	t.Run("fifty concurrent redemptions of a discount limited to ten redeem exactly ten", func(t *testing.T) {
		s := resolverstest.New(t)
		org := s.NewOrg(t, resolverstest.AllScopes)
		id := ckDiscount(t, s, org.Token, vars{"name": "Ten", "type": "percentage", "basisPoints": 100, "duration": "once", "maxRedemptions": 10})
		var mu sync.Mutex
		outcomes := map[string]int{}
		race(50, func(int) {
			err := ckRedeem(s.DB, storage.Redemption{DiscountID: id})
			key := "ok"
			if errors.Is(err, storage.ErrNotRedeemable) {
				key = "exhausted"
			} else if err != nil {
				key = err.Error()
			}
			mu.Lock()
			outcomes[key]++
			mu.Unlock()
		})
		if outcomes["ok"] != 10 || outcomes["exhausted"] != 40 {
			t.Errorf("outcomes = %v, want 10 ok and 40 exhausted", outcomes)
		}
		var count int
		s.Get(t, &count, `SELECT redemptions_count FROM discounts WHERE id = $1`, id)
		if rows := ckCount(t, s, `SELECT count(*) FROM discount_redemptions WHERE discount_id = $1`, id); count != 10 || rows != 10 {
			t.Errorf("redemptions_count = %d, rows = %d; want 10 and 10", count, rows)
		}
	})

	t.Run("concurrent redemptions by one customer stop at the per-customer limit", func(t *testing.T) {
		s := resolverstest.New(t)
		org := s.NewOrg(t, resolverstest.AllScopes)
		id := ckDiscount(t, s, org.Token, vars{"name": "Three each", "type": "fixed", "amount": 1, "duration": "once", "maxRedemptionsPerCustomer": 3})
		cust := s.NewCustomer(t, org.ID, "")
		var ok ckCounter
		race(20, func(int) {
			if ckRedeem(s.DB, storage.Redemption{DiscountID: id, CustomerID: &cust.ID}) == nil {
				ok.add()
			}
		})
		var count int
		s.Get(t, &count, `SELECT redemptions_count FROM discounts WHERE id = $1`, id)
		if ok.n != 3 || count != 3 {
			t.Errorf("%d succeeded, redemptions_count = %d; want 3 and 3", ok.n, count)
		}
	})

	t.Run("a deleted or ended discount cannot be redeemed", func(t *testing.T) {
		s := resolverstest.New(t)
		org := s.NewOrg(t, resolverstest.AllScopes)
		id := ckDiscount(t, s, org.Token, vars{"name": "Gone", "type": "fixed", "amount": 1, "duration": "once",
			"endsAt": time.Now().Add(time.Hour)})
		if err := ckRedeem(s.DB, storage.Redemption{DiscountID: id}); err != nil {
			t.Fatalf("live discount: %v", err)
		}
		s.Exec(t, `UPDATE discounts SET ends_at = now() - interval '1 second', starts_at = NULL WHERE id = $1`, id)
		if err := ckRedeem(s.DB, storage.Redemption{DiscountID: id}); !errors.Is(err, storage.ErrNotRedeemable) {
			t.Errorf("ended discount: %v", err)
		}
	})
}

// ckCounter is a mutex-guarded counter for race callbacks.
type ckCounter struct {
	mu sync.Mutex
	n  int
}

func (a *ckCounter) add() { a.mu.Lock(); a.n++; a.mu.Unlock() }
