package resolvers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOrderNumbersAreDrawnAtCommit checks that an order's gapless numbers are drawn as its
// transaction commits: a purchase still running (its charge, say) holds no lock that another
// purchase of the organization waits for, a rolled-back purchase gives its numbers back,
// and an order created and paid in one transaction takes one number of each kind.
func TestOrderNumbersAreDrawnAtCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		// run creates orders and reports the invoice and receipt numbers they must have,
		// without the prefix and in the order the orders were written, and the counters'
		// next values.
		run func(t *testing.T, f orderFixture) (wantInvoices, wantReceipts []string, nextInvoice, nextReceipt int)
	}{
		{"a purchase in flight does not hold up another", func(t *testing.T, f orderFixture) ([]string, []string, int, int) {
			tx := f.s.DB.MustBeginTx(ctx, nil)
			defer tx.Rollback()
			slow, err := f.s.Resolver.CreateOrderInTx(ctx, tx, f.spec())
			if err != nil {
				t.Fatal(err)
			}
			if slow.InvoiceNumber != nil {
				t.Errorf("an uncommitted order has invoice number %s", *slow.InvoiceNumber)
			}
			quick, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := f.s.Resolver.CreateOrderForTest(quick, f.spec()); err != nil {
				t.Fatalf("a second purchase waited for the first: %v", err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			// Numbers follow the commits: the second purchase, written later, committed first.
			return []string{"0002", "0001"}, nil, 3, 1
		}},
		{"a rolled-back purchase gives its numbers back", func(t *testing.T, f orderFixture) ([]string, []string, int, int) {
			tx := f.s.DB.MustBeginTx(ctx, nil)
			spec := f.spec()
			spec.Status = "paid"
			if _, err := f.s.Resolver.CreateOrderInTx(ctx, tx, spec); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			f.create(t, spec)
			return []string{"0001"}, []string{"0001"}, 2, 2
		}},
		{"an order created and paid in one transaction takes one number of each", func(t *testing.T, f orderFixture) ([]string, []string, int, int) {
			tx := f.s.DB.MustBeginTx(ctx, nil)
			defer tx.Rollback()
			o, err := f.s.Resolver.CreateOrderInTx(ctx, tx, f.spec())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.Resolver.MarkOrderPaidInTx(ctx, tx, o.ID); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			return []string{"0001"}, []string{"0001"}, 2, 2
		}},
		{"a draft takes no number until it leaves draft", func(t *testing.T, f orderFixture) ([]string, []string, int, int) {
			var id string
			f.s.Get(t, &id, `INSERT INTO orders (organization_id, customer_id, status, billing_reason, currency,
				subtotal_amount, discount_amount, net_amount, tax_amount, total_amount)
				VALUES ($1, $2, 'draft', 'purchase', 'usd', 0, 0, 0, 0, 0) RETURNING id`, f.org.ID, f.customer.ID)
			var numbered bool
			f.s.Get(t, &numbered, `SELECT invoice_number IS NOT NULL FROM orders WHERE id = $1`, id)
			if numbered {
				t.Error("a draft was numbered")
			}
			f.s.Exec(t, `UPDATE orders SET status = 'pending' WHERE id = $1`, id)
			return []string{"0001"}, nil, 2, 1
		}},
		{"orders of one transaction are numbered in the order they were written", func(t *testing.T, f orderFixture) ([]string, []string, int, int) {
			tx := f.s.DB.MustBeginTx(ctx, nil)
			defer tx.Rollback()
			for range 3 {
				if _, err := f.s.Resolver.CreateOrderInTx(ctx, tx, f.spec()); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			return []string{"0001", "0002", "0003"}, nil, 4, 1
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newOrderFixture(t)
			invoices, receipts, nextInvoice, nextReceipt := tc.run(t, f)
			prefix := strings.ToUpper(f.org.Slug) + "-"
			var rows []struct {
				Invoice *string `db:"invoice_number"`
				Receipt *string `db:"receipt_number"`
			}
			if err := f.s.DB.Select(&rows, `SELECT invoice_number, receipt_number FROM orders WHERE organization_id = $1
				ORDER BY created_at, id`, f.org.ID); err != nil {
				t.Fatal(err)
			}
			var gotInvoices, gotReceipts []string
			for _, r := range rows {
				if r.Invoice == nil {
					t.Fatal("an order has no invoice number")
				}
				gotInvoices = append(gotInvoices, strings.TrimPrefix(*r.Invoice, prefix))
				if r.Receipt != nil {
					gotReceipts = append(gotReceipts, strings.TrimPrefix(*r.Receipt, "RCPT-"+prefix))
				}
			}
			if fmt.Sprint(gotInvoices) != fmt.Sprint(invoices) || fmt.Sprint(gotReceipts) != fmt.Sprint(receipts) {
				t.Errorf("invoice numbers %v, receipt numbers %v; want %v and %v", gotInvoices, gotReceipts, invoices, receipts)
			}
			var next struct {
				Invoice int `db:"invoice"`
				Receipt int `db:"receipt"`
			}
			f.s.Get(t, &next, `SELECT coalesce(max(invoice_last), 0) + 1 AS invoice, coalesce(max(receipt_last), 0) + 1 AS receipt
				FROM order_numbers WHERE organization_id = $1`, f.org.ID)
			if next.Invoice != nextInvoice || next.Receipt != nextReceipt {
				t.Errorf("next numbers %d and %d, want %d and %d", next.Invoice, next.Receipt, nextInvoice, nextReceipt)
			}
		})
	}
}
