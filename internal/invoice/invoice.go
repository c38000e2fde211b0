// Package invoice renders order invoices and receipts as PDF documents.
//
// It is a leaf: callers convert their order records into an Invoice and
// store the bytes wherever they like. Rendering is deterministic (the same
// Invoice always yields the same bytes), so callers can fingerprint the
// output or skip re-uploading an unchanged document, and it takes a few
// milliseconds, so it can run inside a request as well as in a job.
package invoice

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// TemplateVersion identifies the current layout. Callers include it in the
// checksum that decides whether a stored invoice is stale, so that a
// layout change re-renders documents on their next generate request.
const TemplateVersion = 1

// ErrInvalid reports an Invoice that cannot be rendered; it is the
// caller's data that is wrong, not the renderer.
var ErrInvalid = errors.New("invoice: invalid input")

// Kind selects the document title and wording.
type Kind string

// The two kinds of document an order produces.
const (
	// KindInvoice requests payment (or documents it, once paid).
	KindInvoice Kind = "invoice"
	// KindReceipt confirms a payment that has been made.
	KindReceipt Kind = "receipt"
)

// Invoice is everything printed on one document. Amounts are in the
// currency's minor units, as stored on orders; the renderer prints them
// as given and does not recompute totals, so the PDF always agrees with
// the order record it came from.
type Invoice struct {
	// Kind defaults to KindInvoice.
	Kind Kind
	// Number is the invoice or receipt number, e.g. "ACME-0042". Required.
	Number string
	// IssuedAt is the date of issue; it also becomes the PDF's creation
	// date, which keeps the output byte-for-byte reproducible.
	IssuedAt time.Time
	// DueAt and PaidAt are printed when set.
	DueAt, PaidAt time.Time
	// Paid adds a "Paid" marker to the first page.
	Paid bool
	// Status is optional free text under the dates, e.g. "Refunded".
	Status string

	Seller   Seller
	Customer Customer

	// Currency is an ISO 4217 code in either case ("usd", "EUR").
	Currency string
	Items    []Item

	// The totals block mirrors the order's amount fields.
	SubtotalAmount int64
	// DiscountAmount is what the discount took off the subtotal; a
	// non-zero amount is printed as a negative line labelled with
	// DiscountName.
	DiscountAmount int64
	DiscountName   string
	// NetAmount is the total before tax, printed whenever the tax line is.
	NetAmount int64
	// TaxAmount is printed as "<TaxName> (<TaxRate>)" when it is non-zero
	// or TaxRate is set.
	TaxAmount int64
	// TaxName overrides the locale's word for tax, e.g. "VAT".
	TaxName string
	// TaxRate is the rate as it should read, e.g. "20%" or "7,7 %".
	TaxRate     string
	TotalAmount int64

	// Notes is printed below the totals; newlines are kept.
	Notes string
	// Footer is printed at the bottom of every page; newlines are kept.
	Footer string
	// Locale selects wording, date and money format ("en", "de-AT", …).
	// Empty or unknown locales render in English.
	Locale string
}

// Seller is the organization issuing the document.
type Seller struct {
	Name string
	// Address holds preformatted postal lines, printed in order.
	Address []string
	Email   string
	TaxID   string
}

// Customer is whom the document is billed to.
type Customer struct {
	// Name is the billing name.
	Name    string
	Email   string
	Address Address
	TaxID   string
	// TaxIDType is the upstream tax id kind, e.g. "eu_vat"; printed
	// next to TaxID when set.
	TaxIDType string
}

// Address is a billing address in the upstream API's shape.
type Address struct {
	Line1, Line2 string
	PostalCode   string
	City         string
	// State may be bare ("CA") or in the API's "US-CA" form.
	State string
	// Country is an ISO 3166-1 alpha-2 code.
	Country string
}

// Item is one row of the item table.
type Item struct {
	Description string
	// Quantity is printed when positive, together with UnitAmount.
	Quantity   int64
	UnitAmount int64
	// Amount is the row total in minor units.
	Amount int64
}

// Render writes inv as a PDF to w. The output depends only on inv.
func Render(w io.Writer, inv Invoice) error {
	return render(w, inv, true)
}

// RenderBytes returns inv as a PDF document.
func RenderBytes(inv Invoice) ([]byte, error) {
	var buf bytes.Buffer
	if err := Render(&buf, inv); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// validate rejects input that would print a misleading document rather
// than guessing: an invoice without a number or a currency is not one.
func (inv Invoice) validate() error {
	switch inv.Kind {
	case "", KindInvoice, KindReceipt:
	default:
		return fmt.Errorf("%w: unknown kind %q", ErrInvalid, inv.Kind)
	}
	if strings.TrimSpace(inv.Number) == "" {
		return fmt.Errorf("%w: number is required", ErrInvalid)
	}
	if !isCurrencyCode(inv.Currency) {
		return fmt.Errorf("%w: currency %q is not an ISO 4217 code", ErrInvalid, inv.Currency)
	}
	return nil
}

// isCurrencyCode reports whether s looks like an ISO 4217 code.
func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, c := range []byte(strings.ToUpper(s)) {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// lines formats the address for the bill-to block in the order the
// destination country's post expects, ending with the country name.
func (a Address) lines() []string {
	country := strings.ToUpper(strings.TrimSpace(a.Country))
	state := strings.TrimPrefix(strings.TrimSpace(a.State), country+"-")
	var out []string
	add := func(parts ...string) {
		if s := strings.TrimSpace(strings.Join(nonEmpty(parts), " ")); s != "" {
			out = append(out, s)
		}
	}
	add(a.Line1)
	add(a.Line2)
	switch country {
	case "US", "CA", "AU":
		city := a.City
		if city != "" && (state != "" || a.PostalCode != "") {
			city += ","
		}
		add(city, state, a.PostalCode)
	case "GB", "IE":
		add(a.City)
		add(state)
		add(a.PostalCode)
	default:
		add(a.PostalCode, a.City)
		add(state)
	}
	if country != "" {
		out = append(out, CountryName(country))
	}
	return out
}

// nonEmpty drops blank strings so joined address parts get no stray
// spaces.
func nonEmpty(parts []string) []string {
	out := parts[:0:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
