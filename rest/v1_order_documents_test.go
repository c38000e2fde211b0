package rest_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"till/internal/blob"
	"till/internal/jobs"
	"till/resolvers"
	"till/storage"
)

// documentWorld is the order world with a local blob store whose links are served by its
// own handler, and a way to run the document jobs as the worker would.
type documentWorld struct {
	orderWorld
	blobs *blob.Local
}

func newDocumentWorld(t *testing.T) documentWorld {
	t.Helper()
	s := newV1(t)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	l, err := blob.NewLocal(blob.LocalConfig{Dir: t.TempDir(), BaseURL: "http://till.test/blob/", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	s.rebuild(t, func(d *resolvers.Deps) { d.Blobs = l })
	return documentWorld{orderWorld: newOrderWorld(t, s), blobs: l}
}

// billed is an order of status with billing details (or none), one line of 1,000.
func (w documentWorld) billed(t *testing.T, status storage.OrderStatus, details bool) *storage.Order {
	t.Helper()
	o := storage.OrderWrite{CustomerID: w.alice.ID, Status: status, BillingReason: "purchase"}
	if details {
		o.BillingName = ptr("Ada Ltd")
		o.BillingAddress = &storage.Address{Line1: ptr("1 Main St"), City: ptr("Paris"), Country: "FR"}
	}
	stored := w.order(t, o, 1000, 200)
	w.s.Exec(t, `UPDATE orders SET invoice_number = 'INV-' || substr(id::text, 1, 8) WHERE id = $1`, stored.ID)
	return stored
}

// runJobs runs the due document jobs and returns how many ran.
func (w documentWorld) runJobs(t *testing.T) int {
	t.Helper()
	worker := &jobs.Worker{DB: w.s.DB, Handlers: w.s.Resolver.JobHandlers()}
	n, err := worker.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (w documentWorld) pendingJobs(t *testing.T, orderID uuid.UUID) int {
	t.Helper()
	var n int
	if err := w.s.DB.Get(&n, `SELECT count(*) FROM jobs WHERE args->>'order_id' = $1 AND state = 'available'`, orderID.String()); err != nil {
		t.Fatal(err)
	}
	return n
}

// download follows a document link through the blob handler and returns the bytes.
func (w documentWorld) download(t *testing.T, body []byte) []byte {
	t.Helper()
	var link struct{ URL string }
	decodeJSON(t, body, &link)
	u, err := url.Parse(link.URL)
	if err != nil || u.Host != "till.test" {
		t.Fatalf("link %q: %v", link.URL, err)
	}
	rec := httptest.NewRecorder()
	w.blobs.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/pdf" {
		t.Fatalf("download: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	return rec.Body.Bytes()
}

// TestOrderInvoiceServesTheContract walks an invoice from request to download: the
// preconditions and their exact errors, 202 null, InvoiceDoesNotExist until the job ran,
// then a link to a PDF; order.updated is recorded and is_invoice_generated turns true; an
// unchanged request schedules nothing and a billing change schedules a new rendering.
func TestOrderInvoiceServesTheContract(t *testing.T) {
	t.Parallel()
	w := newDocumentWorld(t)
	for _, tt := range []struct {
		name  string
		order *storage.Order
		token string
		want  want
	}{
		{"a draft order is not eligible", w.billed(t, "draft", true), w.org.Token, want{status: 409, error: "OrderNotEligibleForInvoice"}},
		{"a void order is not eligible", w.billed(t, "void", true), w.org.Token, want{status: 409, error: "OrderNotEligibleForInvoice"}},
		{"billing details are required", w.billed(t, "paid", false), w.org.Token, want{status: 422,
			body: `{"error":"MissingInvoiceBillingDetails","detail":"Billing name and address are required to generate an invoice for this order."}`}},
		{"another organization's order is not found", w.billed(t, "paid", true), w.s.NewOrg(t, "orders:read").Token,
			want{status: 404, body: resourceNotFoundBody}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := w.s.do(t, call{method: http.MethodPost, target: "/v1/orders/" + tt.order.ID.String() + "/invoice", token: tt.token})
			tt.want.check(t, rec)
			if tt.want.status == 409 {
				want{detail: "Order " + tt.order.ID.String() + " is not eligible for invoice generation (current status: " +
					string(tt.order.Status) + ")."}.check(t, rec)
			}
			if n := w.pendingJobs(t, tt.order.ID); n != 0 {
				t.Errorf("%d jobs scheduled by a refused request", n)
			}
		})
	}

	o := w.billed(t, "pending", true)
	target := "/v1/orders/" + o.ID.String() + "/invoice"
	reader := w.s.NewToken(t, w.org.ID, "orders:read")
	want{status: 404, body: `{"error":"InvoiceDoesNotExist","detail":"No invoice exists for order ` + o.ID.String() + `."}`}.
		check(t, w.s.do(t, call{target: target, token: reader}))
	want{status: 202, body: `null`}.check(t, w.s.do(t, call{method: http.MethodPost, target: target, token: reader}))
	want{status: 202, body: `null`}.check(t, w.s.do(t, call{method: http.MethodPost, target: target, token: reader}))
	if n := w.pendingJobs(t, o.ID); n != 1 {
		t.Fatalf("%d jobs scheduled by two requests, want 1", n)
	}
	if n := w.runJobs(t); n != 1 {
		t.Fatalf("ran %d jobs, want 1", n)
	}
	rec := w.s.do(t, call{target: target, token: reader})
	want{status: 200}.check(t, rec)
	if pdf := w.download(t, rec.Body.Bytes()); !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Errorf("the invoice link serves %.20q, not a PDF", pdf)
	}
	want{status: 200, has: []string{`"is_invoice_generated":true`}}.check(t, w.s.do(t, call{target: "/v1/orders/" + o.ID.String(), token: reader}))
	var updates int
	if err := w.s.DB.Get(&updates, `SELECT count(*) FROM domain_events WHERE object_id = $1 AND type = 'order.updated'`, o.ID); err != nil || updates != 1 {
		t.Errorf("%d order.updated events after rendering (%v), want 1", updates, err)
	}

	want{status: 202}.check(t, w.s.do(t, call{method: http.MethodPost, target: target, token: reader}))
	if n := w.pendingJobs(t, o.ID); n != 0 {
		t.Errorf("an invoice showing the current details was scheduled again (%d jobs)", n)
	}
	want{status: 200}.check(t, w.s.do(t, call{method: http.MethodPatch, target: "/v1/orders/" + o.ID.String(),
		token: w.org.Token, body: `{"billing_name":"Ada Lovelace Ltd"}`}))
	want{status: 202}.check(t, w.s.do(t, call{method: http.MethodPost, target: target, token: reader}))
	if n := w.pendingJobs(t, o.ID); n != 1 {
		t.Errorf("a billing change scheduled %d renderings, want 1", n)
	}
}

// TestPortalOrderInvoice: the portal twins work on the session customer's orders only.
func TestPortalOrderInvoice(t *testing.T) {
	t.Parallel()
	w := newDocumentWorld(t)
	mine := w.billed(t, "paid", true)
	session := w.s.NewCustomerSession(t, w.org.ID, w.alice.ID)
	other := w.s.NewCustomerSession(t, w.org.ID, w.bob.ID)
	target := "/v1/customer-portal/orders/" + mine.ID.String() + "/invoice"
	want{status: 404, body: resourceNotFoundBody}.check(t, w.s.do(t, call{method: http.MethodPost, target: target, token: other}))
	want{status: 404, error: "InvoiceDoesNotExist"}.check(t, w.s.do(t, call{target: target, token: session}))
	want{status: 202, body: `null`}.check(t, w.s.do(t, call{method: http.MethodPost, target: target, token: session}))
	w.runJobs(t)
	rec := w.s.do(t, call{target: target, token: session})
	want{status: 200}.check(t, rec)
	w.download(t, rec.Body.Bytes())
	want{status: 404, body: resourceNotFoundBody}.check(t, w.s.do(t, call{target: target, token: other}))
}

// TestOrderReceipt: unpaid orders have no receipt; a paid one's is rendered on first read
// (202, empty body) and linked afterwards.
func TestOrderReceipt(t *testing.T) {
	t.Parallel()
	w := newDocumentWorld(t)
	unpaid := w.billed(t, "pending", true)
	want{status: 404, body: `{"error":"ReceiptNotAllocated","detail":"No receipt allocated for order ` + unpaid.ID.String() + `."}`}.
		check(t, w.s.do(t, call{target: "/v1/orders/" + unpaid.ID.String() + "/receipt", token: w.org.Token}))
	paid := w.billed(t, "paid", true)
	w.s.Exec(t, `UPDATE orders SET receipt_number = 'R-0001' WHERE id = $1`, paid.ID)
	target := "/v1/orders/" + paid.ID.String() + "/receipt"
	rec := w.s.do(t, call{target: target, token: w.org.Token})
	if rec.Code != http.StatusAccepted || rec.Body.Len() != 0 {
		t.Fatalf("first read = %d %q, want 202 with an empty body", rec.Code, rec.Body)
	}
	if n := w.runJobs(t); n != 1 {
		t.Fatalf("ran %d jobs, want the receipt's", n)
	}
	rec = w.s.do(t, call{target: target, token: w.org.Token})
	want{status: 200}.check(t, rec)
	if pdf := w.download(t, rec.Body.Bytes()); !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Errorf("the receipt link serves %.20q, not a PDF", pdf)
	}
}
