package invoice_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"till/internal/invoice"
)

func TestRenderShowsTheInvoice(t *testing.T) {
	pdf, texts := renderText(t, sampleInvoice())
	assertValidPDF(t, pdf)
	for _, want := range []string{
		"Invoice", "ACME-0042", "January 2, 2026",
		"Acme Software Ltd", "1 Market Street", "Tax ID: GB123456789",
		"Bill to", "Jane Doe", "500 Howard Street", "Suite 3", "San Francisco, CA 94105", "United States",
		"jane@example.com", "Tax ID (EU VAT): DE999999999",
		"Description", "Qty", "Unit price", "Amount",
		"Pro plan (monthly)", "Extra seats", "3", "$10.00", "$30.00",
		"Subtotal", "$59.00", "Discount (LAUNCH20)", "-$11.80",
		"Total excluding tax", "$47.20", "VAT (20%)", "$9.44", "Total", "$56.64",
		"Paid", "Thank you for your business.", "Questions? Write to billing@acme.example.",
		"Acme Software Ltd, registered in England and Wales, no. 01234567", "Page 1 of 1",
	} {
		if !contains(texts, want) {
			t.Errorf("the PDF does not show %q; it shows %q", want, texts)
		}
	}
	if n := pageCount(pdf); n != 1 {
		t.Errorf("pages = %d, want 1", n)
	}
	if !bytes.Contains(pdf, []byte("/Title (\xfe\xff")) {
		t.Errorf("document has no UTF-16 title")
	}
}

func TestRenderPaidMarker(t *testing.T) {
	tests := []struct {
		name string
		paid bool
	}{
		{"a paid invoice carries the Paid marker", true},
		{"an unpaid invoice has no Paid marker", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := sampleInvoice()
			inv.Paid = tt.paid
			_, texts := renderText(t, inv)
			if got := contains(texts, "Paid"); got != tt.paid {
				t.Errorf("shows Paid = %v, want %v", got, tt.paid)
			}
		})
	}
}

func TestRenderOmitsEmptyLines(t *testing.T) {
	inv := sampleInvoice()
	inv.DiscountAmount, inv.DiscountName = 0, ""
	inv.TaxAmount, inv.TaxRate, inv.TaxName = 0, "", ""
	inv.Items = []invoice.Item{{Description: "Setup fee", Amount: 5000}}
	_, texts := renderText(t, inv)
	for _, absent := range []string{"Discount", "Total excluding tax", "Tax", "$0.00"} {
		if contains(texts, absent) {
			t.Errorf("the PDF shows %q although it has no such line", absent)
		}
	}
	if !contains(texts, "Setup fee") || !contains(texts, "$50.00") {
		t.Errorf("the item without quantity is missing: %q", texts)
	}
}

func TestRenderLocalized(t *testing.T) {
	const nbsp = "\u00A0"
	tests := []struct {
		name   string
		locale string
		kind   invoice.Kind
		want   []string
	}{
		{"a German invoice", "de-DE", invoice.KindInvoice,
			[]string{"Rechnung", "Rechnungsnummer", "02.01.2026", "Rechnung an", "Zwischensumme", "59,00" + nbsp + "€", "Bezahlt", "Seite 1 von 1"}},
		{"a French receipt", "fr", invoice.KindReceipt,
			[]string{"Reçu", "Numéro de reçu", "02/01/2026", "Facturé à", "Sous-total", "56,64" + nbsp + "€", "Payé", "Page 1 sur 1"}},
		{"a Dutch invoice", "nl", invoice.KindInvoice,
			[]string{"Factuur", "02-01-2026", "€" + nbsp + "-11,80", "Totaal"}},
		{"an English receipt", "", invoice.KindReceipt,
			[]string{"Receipt", "Receipt number", "Date paid", "€56.64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" uses its own wording and formats", func(t *testing.T) {
			inv := sampleInvoice()
			inv.Locale, inv.Kind, inv.Currency = tt.locale, tt.kind, "eur"
			_, texts := renderText(t, inv)
			for _, want := range tt.want {
				if !contains(texts, want) {
					t.Errorf("missing %q in %q", want, texts)
				}
			}
		})
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	first, err := invoice.RenderBytes(sampleInvoice())
	if err != nil {
		t.Fatal(err)
	}
	const renders = 8
	done := make(chan []byte, renders)
	for range renders {
		go func() {
			again, _ := invoice.RenderBytes(sampleInvoice())
			done <- again
		}()
	}
	for range renders {
		if again := <-done; !bytes.Equal(first, again) {
			t.Errorf("the same invoice rendered concurrently to different bytes (%d vs %d)", len(first), len(again))
		}
	}
	other := sampleInvoice()
	other.Number = "ACME-0043"
	if b, _ := invoice.RenderBytes(other); bytes.Equal(first, b) {
		t.Errorf("a different invoice rendered to the same bytes")
	}
	pdf, _ := renderText(t, sampleInvoice())
	if !bytes.Contains(pdf, []byte("/CreationDate (D:20260102150405)")) {
		t.Errorf("creation date does not come from the date of issue")
	}
}

func TestRenderSpillsOntoPages(t *testing.T) {
	inv := sampleInvoice()
	inv.Items = nil
	for i := range 200 {
		inv.Items = append(inv.Items, invoice.Item{
			Description: fmt.Sprintf("Usage line %03d", i), Quantity: int64(i + 1), UnitAmount: 10, Amount: int64(i+1) * 10,
		})
	}
	pdf, texts := renderText(t, inv)
	assertValidPDF(t, pdf)
	pages := pageCount(pdf)
	if pages < 4 {
		t.Fatalf("200 items fit on %d pages, want several", pages)
	}
	headers := 0
	for _, s := range texts {
		if s == "Description" {
			headers++
		}
	}
	if headers != pages {
		t.Errorf("table header printed %d times on %d pages", headers, pages)
	}
	fonts := fontsByText(pdf)
	bodyFont := fonts["Usage line 000"]
	if !strings.HasSuffix(bodyFont, " 9.50") {
		t.Errorf("items are set in %q, want 9.5 pt", bodyFont)
	}
	for i := range 200 {
		want := fmt.Sprintf("Usage line %03d", i)
		if !contains(texts, want) {
			t.Errorf("item %q is missing", want)
			continue
		}
		if font := fonts[want]; font != bodyFont {
			t.Errorf("item %q is set in %q, want the body font %q like the first item", want, font, bodyFont)
		}
	}
	for p := 1; p <= pages; p++ {
		if want := fmt.Sprintf("Page %d of %d", p, pages); !contains(texts, want) {
			t.Errorf("page label %q is missing", want)
		}
	}
	if !contains(texts, "Invoice ACME-0042") {
		t.Errorf("continuation pages do not name the invoice")
	}
	if !contains(texts, "Total") || !contains(texts, "Paid") {
		t.Errorf("totals or marker lost on a long invoice")
	}
}

func TestRenderRejectsInvalidInput(t *testing.T) {
	tests := []struct {
		name   string
		change func(*invoice.Invoice)
	}{
		{"a missing number", func(inv *invoice.Invoice) { inv.Number = " " }},
		{"a missing currency", func(inv *invoice.Invoice) { inv.Currency = "" }},
		{"a currency that is not a code", func(inv *invoice.Invoice) { inv.Currency = "u$d" }},
		{"an unknown kind", func(inv *invoice.Invoice) { inv.Kind = "quote" }},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is rejected", func(t *testing.T) {
			inv := sampleInvoice()
			tt.change(&inv)
			var buf bytes.Buffer
			err := invoice.Render(&buf, inv)
			if !errors.Is(err, invoice.ErrInvalid) {
				t.Errorf("Render error = %v, want ErrInvalid", err)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes for an invalid invoice", buf.Len())
			}
		})
	}
}

func TestRenderReportsWriteErrors(t *testing.T) {
	want := errors.New("disk full")
	if err := invoice.Render(failingWriter{want}, sampleInvoice()); !errors.Is(err, want) {
		t.Errorf("Render error = %v, want %v", err, want)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestRenderSurvivesHostileText(t *testing.T) {
	long := strings.Repeat("Supercalifragilistic", 500)
	tests := []struct {
		name   string
		change func(*invoice.Invoice)
		want   []string
	}{
		{"emoji", func(inv *invoice.Invoice) { inv.Customer.Name = "Jane 🚀 Doe 👩🏽‍💻" }, []string{"Jane ? Doe ??"}},
		{"CJK text", func(inv *invoice.Invoice) { inv.Items[0].Description = "年間プラン 中文 한국어" }, nil},
		{"Central European letters lose only their accents", func(inv *invoice.Invoice) { inv.Customer.Name = "Łukasz Żółć, Dvořák & Ștefan" },
			[]string{"Lukasz Zólc, Dvorák & Stefan"}},
		{"typographic punctuation", func(inv *invoice.Invoice) { inv.Seller.Name = "Acme’s “Pro” – 5 €" }, []string{"Acme’s “Pro” – 5 €"}},
		{"very long names", func(inv *invoice.Invoice) {
			inv.Customer.Name, inv.Seller.Name, inv.Number, inv.DiscountName = long, long, long, long
			inv.Items[0].Description = long
		}, nil},
		{"newlines and control characters", func(inv *invoice.Invoice) {
			inv.Customer.Name = "Jane\r\nDoe\x00\x1b[31m"
			inv.Items[0].Description = "line one\nline two\n\n\tindented"
			inv.Footer = "a\nb\nc\nd"
		}, []string{"Jane Doe[31m", "line one", "line two"}},
		{"PDF syntax in text", func(inv *invoice.Invoice) { inv.Customer.Name = `Evil) Tj ET (\` }, []string{`Evil) Tj ET (\`}},
		{"invalid UTF-8", func(inv *invoice.Invoice) { inv.Customer.Name = "bad \xff\xfe\xe2 bytes"; inv.Number = "\xe2" }, []string{"bad ??? bytes"}},
		{"right-to-left and combining marks", func(inv *invoice.Invoice) { inv.Customer.Name = "שלום e\u0301te\u200f" }, []string{"???? ete"}},
		{"extreme amounts", func(inv *invoice.Invoice) {
			inv.Items[0].Quantity, inv.Items[0].UnitAmount, inv.Items[0].Amount = math.MaxInt64, math.MinInt64, math.MinInt64
			inv.TotalAmount, inv.DiscountAmount = math.MaxInt64, math.MinInt64
		}, []string{"-$92,233,720,368,547,758.08"}},
		{"an empty invoice", func(inv *invoice.Invoice) {
			*inv = invoice.Invoice{Number: "1", Currency: "eur"}
		}, []string{"Invoice", "Total"}},
		{"many address lines", func(inv *invoice.Invoice) {
			for range 500 {
				inv.Seller.Address = append(inv.Seller.Address, long)
			}
			inv.Notes = strings.Repeat(long+"\n", 50)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name+" render a valid PDF", func(t *testing.T) {
			inv := sampleInvoice()
			tt.change(&inv)
			pdf, texts := renderText(t, inv)
			assertValidPDF(t, pdf)
			for _, want := range tt.want {
				if !contains(texts, want) {
					t.Errorf("missing %q in %q", want, texts)
				}
			}
			compressed, err := invoice.RenderBytes(inv)
			if err != nil {
				t.Fatal(err)
			}
			assertValidPDF(t, compressed)
		})
	}
}

func FuzzRender(f *testing.F) {
	f.Add("Jane Doe", "Pro plan", "Thanks", "US-CA")
	f.Add("🚀\x00\xff", "年間\n\n(x)\\", "\r\n", "")
	f.Add(strings.Repeat("W", 3000), strings.Repeat("a b ", 2000), "", "zz")
	f.Fuzz(func(t *testing.T, name, desc, notes, state string) {
		inv := sampleInvoice()
		inv.Customer.Name, inv.Items[0].Description, inv.Notes = name, desc, notes
		inv.Customer.Address.State, inv.Seller.Address = state, []string{name, desc}
		pdf, err := invoice.RenderBytes(inv)
		if err != nil {
			t.Fatal(err)
		}
		assertValidPDF(t, pdf)
	})
}

// BenchmarkRender renders one invoice again and again: time and memory per document.
func BenchmarkRender(b *testing.B) {
	inv := sampleInvoice()
	b.ReportAllocs()
	for b.Loop() {
		if err := invoice.Render(io.Discard, inv); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRenderAddressBlock(t *testing.T) {
	tests := []struct {
		name    string
		address invoice.Address
		want    []string
	}{
		{"a US address puts city, state and ZIP on one line",
			invoice.Address{Line1: "1 Main St", PostalCode: "10001", City: "New York", State: "US-NY", Country: "us"},
			[]string{"1 Main St", "New York, NY 10001", "United States"}},
		{"a Canadian address drops the country prefix of the province",
			invoice.Address{Line1: "1 King St W", PostalCode: "M5V 2T6", City: "Toronto", State: "CA-ON", Country: "CA"},
			[]string{"Toronto, ON M5V 2T6", "Canada"}},
		{"a German address puts the postal code before the city",
			invoice.Address{Line1: "Unter den Linden 1", PostalCode: "10117", City: "Berlin", Country: "DE"},
			[]string{"Unter den Linden 1", "10117 Berlin", "Germany"}},
		{"a British address puts the postcode on its own line",
			invoice.Address{Line1: "10 Downing Street", PostalCode: "SW1A 2AA", City: "London", Country: "GB"},
			[]string{"London", "SW1A 2AA", "United Kingdom"}},
		{"an unknown country prints its code",
			invoice.Address{City: "Somewhere", Country: "zz"},
			[]string{"Somewhere", "ZZ"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := sampleInvoice()
			inv.Customer.Address = tt.address
			_, texts := renderText(t, inv)
			for _, want := range tt.want {
				if !contains(texts, want) {
					t.Errorf("missing %q in %q", want, texts)
				}
			}
		})
	}
}

func TestRenderCutsOverlongText(t *testing.T) {
	inv := sampleInvoice()
	inv.Number = strings.Repeat("INV-", 100)
	inv.Items[0].Description = strings.Repeat("word ", 2000)
	_, texts := renderText(t, inv)
	var number, lastDesc string
	for _, s := range texts {
		if strings.HasPrefix(s, "INV-INV-") && number == "" {
			number = s
		}
		if strings.HasPrefix(s, "word word") {
			lastDesc = s
		}
	}
	if !strings.HasSuffix(number, "…") || len(number) >= len(inv.Number) {
		t.Errorf("overlong number shown as %q, want it cut with an ellipsis", number)
	}
	if !strings.HasSuffix(lastDesc, "…") {
		t.Errorf("overlong description ends with %q, want an ellipsis", lastDesc)
	}
	if !contains(texts, inv.Items[1].Description) {
		t.Errorf("the item after an overlong one is missing")
	}
}
