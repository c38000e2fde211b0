package resolvers_test

import (
	"strings"
	"testing"
	"time"

	"till/internal/ratelimit"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// TestOperationCostIsPricedBeforeAnySQL pins the cost model (list sizes and aliases
// multiply) and that a refusal comes before any resolver reads the database: each refused
// operation sends exactly the statements of a trivial one (the token lookup). Not parallel,
// like the other statement counts.
func TestOperationCostIsPricedBeforeAnySQL(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	statements := func(query string) (*resolverstest.Response, int64) {
		counter.Reset()
		res := s.Do(t, org.Token, query, nil)
		return res, counter.Snapshot().Statements()
	}
	_, trivial := statements("{ __typename }")

	for _, c := range []struct {
		name, query, code, reason string
		cost                      int // extensions.cost.requested, when priced
	}{
		{"1,250 aliases of customers(limit: 100), the reported attack",
			repeat(1250, "c%d: customers(limit: 100) { items { id email } }"), "COST_LIMIT_EXCEEDED", "", 0},
		{"250 aliases of customers(limit: 100) cost 250 × 101",
			repeat(250, "c%d: customers(limit: 100) { items { id email } }"), "COST_LIMIT_EXCEEDED", "", 25_250},
		{"nested lists multiply: 25 × (1 + 100 × (1 + 20 declared payment methods))",
			repeat(25, "c%d: customers(limit: 100) { items { paymentMethods { id } } }"), "COST_LIMIT_EXCEEDED", "", 52_525},
		{"a limit from a variable counts",
			`query($n: Int) { ` + strings.TrimSuffix(strings.TrimPrefix(repeat(250, "c%d: customers(limit: $n) { items { id } }"), "{"), "}") + `}`,
			"COST_LIMIT_EXCEEDED", "", 25_250},
		{"a limit above 100 is refused", "{ customers(limit: 101) { items { id } } }", "BAD_USER_INPUT", "RequestValidationError", 0},
		{"a nested first above 100 is refused before any statement, once",
			"{ customers(first: 100) { items { orders(first: 1000) { items { id } } } } }", "BAD_USER_INPUT", "RequestValidationError", 0},
		{"first counts in place of the default limit: 250 × (1 + 100)",
			repeat(250, "c%d: orders(first: 100) { items { id } }"), "COST_LIMIT_EXCEEDED", "", 25_250},
		{"last counts the same way",
			repeat(250, "c%d: orders(last: 100) { items { id } }"), "COST_LIMIT_EXCEEDED", "", 25_250},
		{"a cursor-only list without first holds 100: 250 × (1 + 100)",
			repeat(250, "c%d: usageEvents { items { id } }"), "COST_LIMIT_EXCEEDED", "", 25_250},
	} {
		t.Run(c.name, func(t *testing.T) {
			query := c.query
			res, n := func() (*resolverstest.Response, int64) {
				if strings.Contains(query, "$n") {
					counter.Reset()
					res := s.Do(t, org.Token, query, resolverstest.Vars{"n": 100})
					return res, counter.Snapshot().Statements()
				}
				return statements(query)
			}()
			if len(res.Errors) != 1 || res.Errors[0].Extensions.Code != c.code || res.Errors[0].Extensions.Reason != c.reason {
				t.Fatalf("want one %s (%s) error: HTTP %d %.300s", c.code, c.reason, res.Status, res.Body)
			}
			if n != trivial {
				t.Errorf("%d statements before the refusal, want the trivial query's %d", n, trivial)
			}
			if c.cost != 0 && (res.Cost == nil || res.Cost.Requested != c.cost) {
				t.Errorf("extensions.cost = %+v, want requested %d", res.Cost, c.cost)
			}
		})
	}

	t.Run("an operation within the ceiling runs and reports its price", func(t *testing.T) {
		res, n := statements("{ a: customers(limit: 100) { items { id } pagination { totalCount } } b: customers { items { id } } }")
		if len(res.Errors) > 0 || n <= trivial {
			t.Fatalf("%d statements: %.300s", n, res.Body)
		}
		if want := (1 + 100 + 1) + (1 + 10); res.Cost == nil || res.Cost.Requested != want || res.Cost.Remaining != nil {
			t.Fatalf("extensions.cost = %+v, want requested %d and no budget", res.Cost, want)
		}
	})
}

func TestCostBudgetIsSpentPerPrincipal(t *testing.T) {
	t.Parallel()
	budget, err := ratelimit.NewLimiter(ratelimit.Limit{Rate: 250, Interval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s := resolverstest.New(t, func(d *resolvers.Deps) { d.CostBudget = budget })
	a, b := s.NewOrg(t, resolverstest.AllScopes), s.NewOrg(t, resolverstest.AllScopes)
	const page = "{ customers(limit: 100) { items { id } } }" // 101 points

	for i, want := range []int{149, 48} {
		res := s.Do(t, a.Token, page, nil)
		if len(res.Errors) > 0 || res.Cost == nil || res.Cost.Remaining == nil || *res.Cost.Remaining != want {
			t.Fatalf("query %d: cost %+v, want %d remaining: %.300s", i+1, res.Cost, want, res.Body)
		}
		reset, err := time.Parse(time.RFC3339, res.Cost.Reset)
		if err != nil || reset.Before(time.Now().Add(-time.Second)) || reset.After(time.Now().Add(time.Minute+time.Second)) {
			t.Fatalf("reset %q is not an RFC 3339 time within the minute", res.Cost.Reset)
		}
	}
	t.Run("the spent budget refuses the next operation before it runs", func(t *testing.T) {
		res := s.Do(t, a.Token, page, nil)
		if len(res.Errors) != 1 || res.Errors[0].Extensions.Code != "RATE_LIMITED" || res.Errors[0].Extensions.RetryAfter < 1 ||
			string(res.Data) != "null" && len(res.Data) > 0 {
			t.Fatalf("want RATE_LIMITED with retryAfter: %.300s", res.Body)
		}
		if res.Cost == nil || res.Cost.Remaining == nil || *res.Cost.Remaining != 48 {
			t.Fatalf("extensions.cost = %+v, want 48 remaining, untouched by the refusal", res.Cost)
		}
	})
	t.Run("another principal has its own budget", func(t *testing.T) {
		if res := s.Do(t, b.Token, page, nil); len(res.Errors) > 0 {
			t.Fatalf("%.300s", res.Body)
		}
	})
	t.Run("a cheap operation still fits the rest of the budget", func(t *testing.T) {
		if res := s.Do(t, a.Token, "{ customers { items { id } } }", nil); len(res.Errors) > 0 || *res.Cost.Remaining != 37 {
			t.Fatalf("%.300s", res.Body)
		}
	})
}
