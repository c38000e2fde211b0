package resolvers_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
)

// tiedOrders makes 14 orders of which 8 share one created_at, the rest one each, and a
// second customer with 3 orders: ties are where offset pages used to skip and repeat.
func tiedOrders(t *testing.T) (orderFixture, customer) {
	t.Helper()
	f := newOrderFixture(t)
	second := f.s.NewCustomer(t, f.org.ID, "ext-tied")
	for i := range 17 {
		spec := f.spec()
		if i >= 14 {
			spec.CustomerID = second.ID
		}
		o := f.create(t, spec)
		at := "2026-01-01T00:00:00Z"
		if i%2 == 1 || i >= 14 {
			at = fmt.Sprintf("2026-01-0%dT00:00:00Z", 2+i%7)
		}
		f.s.Exec(t, `UPDATE orders SET created_at = $2::timestamptz WHERE id = $1`, o.ID, at)
	}
	return f, second
}

type orderWindow struct {
	Items      []struct{ ID uuid.UUID }
	Pagination struct{ TotalCount, MaxPage int }
	PageInfo   struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

const windowDoc = `query($page: Int, $limit: Int, $sorting: [String!], $first: Int, $after: String, $last: Int, $before: String, $filter: OrderFilter) {
	orders(page: $page, limit: $limit, sorting: $sorting, first: $first, after: $after, last: $last, before: $before, filter: $filter) {
		items { id } pagination { totalCount maxPage }
		pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`

func listWindow(t *testing.T, f orderFixture, v vars) orderWindow {
	t.Helper()
	var out struct{ Orders orderWindow }
	f.s.Query(t, f.org.Token, windowDoc, v, &out)
	return out.Orders
}

func TestPagesNeverSkipOrRepeatRowsWithEqualSortKeys(t *testing.T) {
	t.Parallel()
	f, second := tiedOrders(t)
	filter := vars{"customerId": []uuid.UUID{f.customer.ID}}
	for _, sorting := range [][]string{{"-created_at"}, {"created_at"}, {"status", "-amount"}, {"-product"}} {
		t.Run(fmt.Sprint("sorted by ", sorting), func(t *testing.T) {
			var byOffset []uuid.UUID
			for page := 1; page <= 5; page++ {
				w := listWindow(t, f, vars{"page": page, "limit": 3, "sorting": sorting, "filter": filter})
				byOffset = append(byOffset, itemIDs(w.Items)...)
				if w.Pagination.TotalCount != 14 || w.Pagination.MaxPage != 5 {
					t.Fatalf("page %d: pagination %+v, want 14 rows on 5 pages", page, w.Pagination)
				}
			}
			requireEachOnce(t, "offset pages", byOffset, 14)

			var forward []uuid.UUID
			var after *string
			for range 10 {
				w := listWindow(t, f, vars{"first": 3, "after": after, "sorting": sorting, "filter": filter})
				forward = append(forward, itemIDs(w.Items)...)
				if !w.PageInfo.HasNextPage {
					break
				}
				after = w.PageInfo.EndCursor
			}
			if !slices.Equal(forward, byOffset) {
				t.Errorf("first/after walked %v, offset pages %v", forward, byOffset)
			}

			var backward []uuid.UUID
			var before *string
			for range 10 {
				w := listWindow(t, f, vars{"last": 4, "before": before, "sorting": sorting, "filter": filter})
				backward = append(append([]uuid.UUID{}, itemIDs(w.Items)...), backward...)
				if !w.PageInfo.HasPreviousPage {
					break
				}
				before = w.PageInfo.StartCursor
			}
			if !slices.Equal(backward, byOffset) {
				t.Errorf("last/before walked %v, offset pages %v", backward, byOffset)
			}
		})
	}
	t.Run("a window past the last row is empty and still counts the list", func(t *testing.T) {
		last := listWindow(t, f, vars{"last": 1, "filter": filter})
		for _, v := range []vars{{"first": 3, "after": last.PageInfo.EndCursor}, {"page": 6, "limit": 3}} {
			v["filter"] = filter
			w := listWindow(t, f, v)
			if len(w.Items) != 0 || w.Pagination.TotalCount != 14 {
				t.Errorf("%v: %d items of %d, want none of 14", v, len(w.Items), w.Pagination.TotalCount)
			}
		}
	})
	t.Run("a cursor window is stable when rows are added before it", func(t *testing.T) {
		w := listWindow(t, f, vars{"first": 5, "filter": filter})
		next := listWindow(t, f, vars{"first": 5, "after": w.PageInfo.EndCursor, "filter": filter})
		f.create(t, f.spec()) // newest: sorts first under -created_at
		again := listWindow(t, f, vars{"first": 5, "after": w.PageInfo.EndCursor, "filter": filter})
		if !slices.Equal(itemIDs(next.Items), itemIDs(again.Items)) {
			t.Errorf("the window after a cursor moved when a row was added before it")
		}
	})
	t.Run("a customer's orders page the same way, per customer", func(t *testing.T) {
		var out struct {
			Customers struct {
				Items []struct {
					ID     uuid.UUID
					Orders orderWindow
				}
			}
		}
		f.s.Query(t, f.org.Token, `{ customers(limit: 10, sorting: ["email"]) { items { id
			orders(first: 2, sorting: ["created_at"]) { items { id } pagination { totalCount }
				pageInfo { hasNextPage endCursor } } } } }`, nil, &out)
		totals := map[uuid.UUID]int{}
		for _, c := range out.Customers.Items {
			totals[c.ID] = c.Orders.Pagination.TotalCount
			if len(c.Orders.Items) != min(2, c.Orders.Pagination.TotalCount) || c.Orders.PageInfo.HasNextPage != (c.Orders.Pagination.TotalCount > 2) {
				t.Errorf("customer %s: window %+v", c.ID, c.Orders)
			}
		}
		if totals[f.customer.ID] != 15 || totals[second.ID] != 3 {
			t.Errorf("per-customer totals %v, want 15 and 3", totals)
		}
	})
}

func requireEachOnce(t *testing.T, what string, ids []uuid.UUID, want int) {
	t.Helper()
	seen := map[uuid.UUID]int{}
	for _, id := range ids {
		seen[id]++
	}
	if len(ids) != want || len(seen) != want {
		t.Errorf("%s: %d rows, %d distinct, want %d each once", what, len(ids), len(seen), want)
	}
}

func TestCursorsFromElsewhereAreRefused(t *testing.T) {
	t.Parallel()
	f, _ := tiedOrders(t)
	w := listWindow(t, f, vars{"first": 2, "sorting": []string{"-created_at"}})
	for _, c := range []struct {
		name string
		v    vars
	}{
		{"a cursor of another sorting", vars{"first": 2, "after": w.PageInfo.EndCursor, "sorting": []string{"status"}}},
		{"a forged cursor", vars{"first": 2, "after": "eyJvIjoxLCJrIjpbMV19"}},
		{"garbage", vars{"first": 2, "after": "%%%"}},
		{"a cursor with a value of the wrong type", vars{"first": 2, "after": forgeCursor(t, w.PageInfo.EndCursor)}},
		{"first above 100", vars{"first": 101}},
		{"first and last", vars{"first": 2, "last": 2}},
		{"a page past the first with a cursor", vars{"page": 2, "after": w.PageInfo.EndCursor}},
	} {
		t.Run(c.name+" is the client's error", func(t *testing.T) {
			res := f.s.Do(t, f.org.Token, windowDoc, c.v)
			if len(res.Errors) == 0 || res.Errors[0].Extensions.Code != "BAD_USER_INPUT" {
				t.Fatalf("want the client's error, got %s", res.Body)
			}
		})
	}
}

// forgeCursor keeps a real cursor's order signature but puts text where its timestamp was.
func forgeCursor(t *testing.T, real *string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(*real)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		O uint32 `json:"o"`
		K []any  `json:"k"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	c.K[0] = "not a time"
	b, _ = json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}
