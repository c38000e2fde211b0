package invoice_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"till/internal/invoice"
)

// sampleInvoice is a realistic paid invoice with a discount and VAT.
func sampleInvoice() invoice.Invoice {
	return invoice.Invoice{
		Kind:     invoice.KindInvoice,
		Number:   "ACME-0042",
		IssuedAt: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC),
		PaidAt:   time.Date(2026, 1, 2, 15, 5, 0, 0, time.UTC),
		Paid:     true,
		Seller: invoice.Seller{
			Name:    "Acme Software Ltd",
			Address: []string{"1 Market Street", "London EC1A 1AA", "United Kingdom"},
			Email:   "billing@acme.example",
			TaxID:   "GB123456789",
		},
		Customer: invoice.Customer{
			Name:  "Jane Doe",
			Email: "jane@example.com",
			Address: invoice.Address{
				Line1: "500 Howard Street", Line2: "Suite 3",
				PostalCode: "94105", City: "San Francisco", State: "US-CA", Country: "US",
			},
			TaxID: "DE999999999", TaxIDType: "eu_vat",
		},
		Currency: "usd",
		Items: []invoice.Item{
			{Description: "Pro plan (monthly)", Quantity: 1, UnitAmount: 2900, Amount: 2900},
			{Description: "Extra seats", Quantity: 3, UnitAmount: 1000, Amount: 3000},
		},
		SubtotalAmount: 5900,
		DiscountAmount: 1180,
		DiscountName:   "LAUNCH20",
		NetAmount:      4720,
		TaxAmount:      944,
		TaxName:        "VAT",
		TaxRate:        "20%",
		TotalAmount:    5664,
		Notes:          "Thank you for your business.\nQuestions? Write to billing@acme.example.",
		Footer:         "Acme Software Ltd, registered in England and Wales, no. 01234567",
		Locale:         "en",
	}
}

// renderText renders inv uncompressed and returns the PDF and the strings
// shown by its text operators, decoded to UTF-8.
func renderText(tb testing.TB, inv invoice.Invoice) ([]byte, []string) {
	tb.Helper()
	var buf bytes.Buffer
	if err := invoice.RenderUncompressed(&buf, inv); err != nil {
		tb.Fatalf("render: %v", err)
	}
	return buf.Bytes(), shownText(buf.Bytes())
}

var tjOperand = regexp.MustCompile(`\(((?:[^\\()]|\\.)*)\)\s*Tj`)

// shownText extracts the operands of every Tj operator in page order.
func shownText(pdf []byte) []string {
	var out []string
	for _, m := range tjOperand.FindAllSubmatch(pdf, -1) {
		out = append(out, decodeWinAnsi(unescapePDF(m[1])))
	}
	return out
}

// unescapePDF undoes the backslash escapes of a PDF literal string.
func unescapePDF(s []byte) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'r':
				out = append(out, '\r')
			case 'n':
				out = append(out, '\n')
			default:
				out = append(out, s[i])
			}
			continue
		}
		out = append(out, s[i])
	}
	return out
}

// decodeWinAnsi maps Windows-1252 bytes to UTF-8.
func decodeWinAnsi(b []byte) string {
	high := []rune("€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008DŽ\u008F\u0090‘’“”•–—˜™š›œ\u009DžŸ")
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x80 && c < 0xA0 {
			sb.WriteRune(high[c-0x80])
			continue
		}
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// pageCount counts page objects (not the /Pages tree node).
func pageCount(pdf []byte) int {
	return len(regexp.MustCompile(`/Type /Page\b[^s]`).FindAll(pdf, -1))
}

var fontOrText = regexp.MustCompile(`(/F\w+ [\d.]+) Tf|\(((?:[^\\()]|\\.)*)\)\s*Tj`)

// fontsByText maps each shown string to the font and size ("/Fxx 9.50")
// in force where it first appears.
func fontsByText(pdf []byte) map[string]string {
	fonts := map[string]string{}
	current := ""
	for _, m := range fontOrText.FindAllSubmatch(pdf, -1) {
		if m[1] != nil {
			current = string(m[1])
			continue
		}
		text := decodeWinAnsi(unescapePDF(m[2]))
		if _, seen := fonts[text]; !seen {
			fonts[text] = current
		}
	}
	return fonts
}

// assertValidPDF checks the file framing every reader relies on.
func assertValidPDF(tb testing.TB, pdf []byte) {
	tb.Helper()
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		tb.Errorf("document starts with %q, want %%PDF-", pdf[:min(len(pdf), 8)])
	}
	if !bytes.HasSuffix(bytes.TrimSpace(pdf), []byte("%%EOF")) {
		tb.Errorf("document does not end with %%%%EOF")
	}
	if !bytes.Contains(pdf, []byte("startxref")) {
		tb.Errorf("document has no cross-reference table")
	}
}

// contains reports whether want is one of the shown strings.
func contains(texts []string, want string) bool {
	for _, s := range texts {
		if s == want {
			return true
		}
	}
	return false
}

// containsSub reports whether some shown string contains want.
func containsSub(texts []string, want string) bool {
	for _, s := range texts {
		if strings.Contains(s, want) {
			return true
		}
	}
	return false
}
