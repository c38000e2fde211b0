package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// commerceWindow is one window of a list, wherever it sits in a response.
type commerceWindow struct {
	Items      []struct{ ID uuid.UUID }
	Pagination struct{ TotalCount int }
	PageInfo   struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

// commerceListWindow runs field (a root list, or me's through path "me") with pagination
// arguments and returns its window.
func commerceListWindow(t *testing.T, s *resolverstest.Server, token, field, sorting string, v vars) commerceWindow {
	t.Helper()
	list := fmt.Sprintf(`%s(page: $page, limit: $limit, first: $first, after: $after, last: $last, before: $before%s) {
		items { id } pagination { totalCount } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }`, field, sorting)
	doc := `query($page: Int, $limit: Int, $first: Int, $after: String, $last: Int, $before: String) { ` + list + ` }`
	if field == "me { subscriptions" {
		doc = `query($page: Int, $limit: Int, $first: Int, $after: String, $last: Int, $before: String) { me { subscriptions` +
			list[len(field):] + ` } }`
	}
	res := s.Do(t, token, doc, v)
	if len(res.Errors) > 0 {
		t.Fatalf("%s: %s", field, res.Body)
	}
	var out map[string]json.RawMessage
	mustUnmarshal(t, res.Data, &out)
	raw := out[field]
	if field == "me { subscriptions" {
		var me map[string]json.RawMessage
		mustUnmarshal(t, out["me"], &me)
		raw = me["subscriptions"]
	}
	var w commerceWindow
	mustUnmarshal(t, raw, &w)
	return w
}

// TestCommerceListsNeverSkipOrRepeatRows walks each list of the commerce domain over rows
// that all share their sort key, by offset pages, by first/after and by last/before: every
// walk sees every row once, in the same order.
func TestCommerceListsNeverSkipOrRepeatRows(t *testing.T) {
	t.Parallel()
	const n = 7
	w := newCommerceWorld(t)
	tied := commerceBase.Add(-24 * time.Hour)
	ctx := context.Background()
	err := storage.InTx(ctx, w.s.DB, func(tx *sqlx.Tx) error {
		for i := range n {
			if _, err := storage.CreateDiscount(ctx, tx, w.org.ID, storage.DiscountWrite{Name: fmt.Sprintf("Tied %d", i),
				Type: "percentage", BasisPoints: ptr(100), Duration: "once"}); err != nil {
				return err
			}
			p, err := storage.CreateProduct(ctx, tx, w.org.ID, storage.ProductWrite{Name: "Tied", Visibility: "public"})
			if err != nil {
				return err
			}
			if _, err := seedPurchase(ctx, tx, w.org.ID, w.bob.ID, p.ID, tied); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE products SET created_at = $2 WHERE organization_id = $1`, w.org.ID, tied)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	bob := w.s.NewCustomerSession(t, w.org.ID, w.bob.ID)
	for _, l := range []struct {
		field, sorting, token string
		rows                  int
	}{
		{"products", "", w.org.Token, n + 2},
		{"products", `, sorting: ["name"]`, w.org.Token, n + 2},
		{"discounts", "", w.org.Token, n},
		{"checkouts", `, sorting: ["status", "created_at"]`, w.org.Token, n + 4},
		{"subscriptions", `, sorting: ["customer"]`, w.org.Token, n + 3},
		{"me { subscriptions", `, sorting: ["product"]`, bob, n + 1},
	} {
		t.Run(l.field+l.sorting+" walks every row once by pages and by cursors both ways", func(t *testing.T) {
			var byOffset []uuid.UUID
			for page := 1; page <= (l.rows+2)/3; page++ {
				got := commerceListWindow(t, w.s, l.token, l.field, l.sorting, vars{"page": page, "limit": 3})
				if got.Pagination.TotalCount != l.rows {
					t.Fatalf("page %d: totalCount %d, want %d", page, got.Pagination.TotalCount, l.rows)
				}
				byOffset = append(byOffset, itemIDs(got.Items)...)
			}
			requireEachOnce(t, "offset pages", byOffset, l.rows)
			var forward, backward []uuid.UUID
			var after, before *string
			for range l.rows {
				got := commerceListWindow(t, w.s, l.token, l.field, l.sorting, vars{"first": 3, "after": after})
				forward = append(forward, itemIDs(got.Items)...)
				if after = got.PageInfo.EndCursor; !got.PageInfo.HasNextPage {
					break
				}
			}
			for range l.rows {
				got := commerceListWindow(t, w.s, l.token, l.field, l.sorting, vars{"last": 3, "before": before})
				backward = append(itemIDs(got.Items), backward...)
				if before = got.PageInfo.StartCursor; !got.PageInfo.HasPreviousPage {
					break
				}
			}
			if !slices.Equal(forward, byOffset) || !slices.Equal(backward, byOffset) {
				t.Errorf("offset %v\nforward %v\nbackward %v", byOffset, forward, backward)
			}
		})
	}
	t.Run("a cursor of another list's sorting is the client's error", func(t *testing.T) {
		got := commerceListWindow(t, w.s, w.org.Token, "products", "", vars{"first": 1})
		res := w.s.Do(t, w.org.Token, `query($a: String) { products(first: 1, after: $a, sorting: ["name"]) { items { id } } }`,
			vars{"a": got.PageInfo.EndCursor})
		if len(res.Errors) == 0 || res.Errors[0].Extensions.Code != "BAD_USER_INPUT" {
			t.Errorf("want the client's error, got %s", res.Body)
		}
	})
}

// TestCommerceRelationsCostConstantStatements proves that a dashboard page through the
// commerce relations (customers with their subscriptions, each with its orders and their
// checkouts, its product with the product's orders and subscriptions, and the customers'
// checkouts with their order, subscription and customer) costs the same statements for 10
// customers as for 100.
//
// Not parallel, like the other statement-count tests.
func TestCommerceRelationsCostConstantStatements(t *testing.T) {
	const rows = 110
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	ctx := context.Background()
	err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
		month := storage.IntervalMonth
		for i := range rows {
			c, err := storage.CreateCustomer(ctx, tx, org.ID, storage.CustomerWrite{Email: ptr(fmt.Sprintf("c%03d@example.com", i))})
			if err != nil {
				return err
			}
			p, err := storage.CreateProduct(ctx, tx, org.ID, storage.ProductWrite{Name: fmt.Sprintf("Plan %03d", i),
				Visibility: "public", RecurringInterval: &month, RecurringIntervalCount: ptr(1)})
			if err != nil {
				return err
			}
			for j := range 2 {
				if _, err := seedPurchase(ctx, tx, org.ID, c.ID, p.ID, commerceBase.Add(time.Duration(j)*time.Hour)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	const doc = `query($n: Int) { customers(limit: $n) { items { id
		subscriptions(limit: 3) { items { id
			orders(first: 2) { items { id checkout { id } } pagination { totalCount } }
			product { id orders(limit: 3) { pagination { totalCount } } subscriptions(limit: 3) { items { id } } } } }
		checkouts(limit: 3, sorting: ["created_at"]) { items { id order { id } subscription { id } customer { id } }
			pageInfo { hasNextPage } } } } }`
	counts := requireConstantStatements(t, counter, func(n int) *resolverstest.Response {
		return s.Do(t, org.Token, doc, vars{"n": n})
	}, func(t *testing.T, data []byte, n int) {
		var out struct {
			Customers struct {
				Items []struct {
					ID            uuid.UUID
					Subscriptions struct {
						Items []struct {
							Orders struct {
								Items []struct {
									Checkout struct{ ID uuid.UUID }
								}
								Pagination struct{ TotalCount int }
							}
							Product struct {
								Orders        struct{ Pagination struct{ TotalCount int } }
								Subscriptions struct{ Items []struct{ ID uuid.UUID } }
							}
						}
					}
					Checkouts struct {
						Items []struct {
							ID                            uuid.UUID
							Order, Subscription, Customer struct{ ID uuid.UUID }
						}
						PageInfo struct{ HasNextPage bool }
					}
				}
			}
		}
		mustUnmarshal(t, data, &out)
		if len(out.Customers.Items) != n {
			t.Fatalf("N=%d: %d customers", n, len(out.Customers.Items))
		}
		for _, c := range out.Customers.Items {
			subs, cks := c.Subscriptions.Items, c.Checkouts.Items
			if len(subs) != 2 || len(cks) != 2 || cks[0].Customer.ID != c.ID || cks[0].Order.ID == uuid.Nil ||
				cks[1].Subscription.ID == uuid.Nil || c.Checkouts.PageInfo.HasNextPage {
				t.Fatalf("customer %s: %d subscriptions, checkouts %+v", c.ID, len(subs), c.Checkouts)
			}
			for _, s := range subs {
				if len(s.Orders.Items) != 1 || s.Orders.Pagination.TotalCount != 1 || s.Orders.Items[0].Checkout.ID == uuid.Nil ||
					s.Product.Orders.Pagination.TotalCount != 2 || len(s.Product.Subscriptions.Items) != 2 {
					t.Fatalf("customer %s: subscription %+v", c.ID, s)
				}
			}
		}
	})
	t.Logf("statements: N=10 %s; N=100 %s", counts[10], counts[100])
	if counts[100].Begins != 0 {
		t.Errorf("a read opened %d transactions", counts[100].Begins)
	}
}
