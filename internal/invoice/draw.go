package invoice

import (
	"fmt"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
)

// Page geometry in millimetres (A4 portrait). The body stops at
// bodyBottom; the footer owns the space below it on every page.
const (
	pageW      = 210.0
	pageH      = 297.0
	marginX    = 20.0
	marginTop  = 20.0
	contentW   = pageW - 2*marginX
	bodyBottom = pageH - 32
	cellMargin = 1.0
	lineH      = 4.6
	fontFamily = "Helvetica"
	bodySize   = 9.5
	// minAmountSize is how far amounts shrink before they may overflow;
	// money is never truncated.
	minAmountSize = 4.0
	// maxFieldBytes bounds the text any one field contributes to layout
	// (about two pages of notes).
	maxFieldBytes = 12000
	// producer is fixed so output does not depend on the library version
	// string.
	producer = "Till"
)

// doc is one rendering in progress.
type doc struct {
	pdf *fpdf.Fpdf
	inv Invoice
	l   labels
	// inTable makes page breaks repeat the item table header.
	inTable bool
}

// newDoc prepares an empty A4 document whose metadata depends only on
// inv, so identical input gives identical bytes.
func newDoc(inv Invoice, compress bool) *doc {
	pdf := fpdf.New("P", "mm", "A4", "")
	d := &doc{pdf: pdf, inv: inv, l: labelsFor(inv.Locale)}
	stamp := time.Unix(0, 0).UTC()
	if !inv.IssuedAt.IsZero() {
		stamp = inv.IssuedAt.UTC()
	}
	pdf.SetCreationDate(stamp)
	pdf.SetModificationDate(stamp)
	pdf.SetProducer(producer, false)
	pdf.SetCreator(producer, false)
	pdf.SetTitle(fromWinAnsi(truncateBytes(winAnsi(oneLine(d.title()+" "+inv.Number)), 200)), true)
	pdf.SetCompression(compress)
	pdf.SetCatalogSort(true)
	pdf.SetMargins(marginX, marginTop, marginX)
	pdf.SetCellMargin(cellMargin)
	pdf.SetAutoPageBreak(false, 0)
	pdf.AliasNbPages("{nb}")
	pdf.SetHeaderFunc(d.runningHeader)
	pdf.SetFooterFunc(d.footer)
	return d
}

// title is the document heading for the invoice's kind.
func (d *doc) title() string {
	if d.inv.Kind == KindReceipt {
		return d.l.receipt
	}
	return d.l.invoice
}

// setFont selects the body family in a style ("", "B") and size.
func (d *doc) setFont(style string, size float64) {
	d.pdf.SetFont(fontFamily, style, size)
}

// setGray switches text between the muted gray used for labels and black.
func (d *doc) setGray(gray bool) {
	if gray {
		d.pdf.SetTextColor(107, 114, 128)
		return
	}
	d.pdf.SetTextColor(17, 24, 39)
}

// put prints one already encoded line at (x, y) in a w-wide cell.
func (d *doc) put(x, y, w, h float64, encoded, align string) {
	d.pdf.SetXY(x, y)
	d.pdf.CellFormat(w, h, encoded, "", 0, align, false, 0, "")
}

// text prints s on one line, cut with an ellipsis if it does not fit.
func (d *doc) text(x, y, w, h float64, s, align string) {
	enc := truncateBytes(winAnsi(oneLine(s)), maxFieldBytes)
	avail := w - 2*cellMargin
	if d.pdf.GetStringWidth(enc) > avail {
		enc = d.ellipsis(enc, avail)
	}
	d.put(x, y, w, h, enc, align)
}

// amount prints a formatted amount on one line, shrinking the font rather
// than cutting digits when a huge number does not fit the column.
func (d *doc) amount(x, y, w, h float64, s, align string) {
	enc := winAnsi(s)
	size, _ := d.pdf.GetFontSize()
	for fit := size; d.pdf.GetStringWidth(enc) > w-2*cellMargin && fit > minAmountSize; {
		fit -= 0.5
		d.pdf.SetFontSize(fit)
	}
	d.put(x, y, w, h, enc, align)
	d.pdf.SetFontSize(size)
}

// money formats an amount in the invoice's currency and locale.
func (d *doc) money(amount int64) string {
	return FormatMoney(amount, d.inv.Currency, d.inv.Locale)
}

// wrap breaks s into encoded lines no wider than w in the current font,
// keeping its newlines. Text beyond maxLines or maxFieldBytes is cut and
// the last line ends in an ellipsis, so a cut is visible.
func (d *doc) wrap(s string, w float64, maxLines int) []string {
	avail := w - 2*cellMargin
	enc := winAnsi(s)
	cut := len(enc) > maxFieldBytes
	var out []string
	for para := range strings.SplitSeq(truncateBytes(enc, maxFieldBytes), "\n") {
		out = append(out, d.wrapLine(para, avail)...)
		if len(out) > maxLines {
			out, cut = out[:maxLines], true
			break
		}
	}
	if cut {
		out[len(out)-1] = d.ellipsis(out[len(out)-1], avail)
	}
	return out
}

// wrapLine breaks one encoded paragraph at spaces, or inside a word that
// is wider than the whole line.
func (d *doc) wrapLine(p string, avail float64) []string {
	p = strings.TrimRight(p, " ")
	if p == "" {
		return []string{""}
	}
	var out []string
	for p != "" {
		n := d.fits(p, avail)
		if n >= len(p) {
			return append(out, p)
		}
		if sp := strings.LastIndexByte(p[:n+1], ' '); sp > 0 {
			n = sp
		}
		n = max(n, 1)
		out = append(out, strings.TrimRight(p[:n], " "))
		p = strings.TrimLeft(p[n:], " ")
	}
	return out
}

// fits returns how many leading bytes of encoded s fit in avail.
// Core fonts have no kerning, so widths add up glyph by glyph.
func (d *doc) fits(s string, avail float64) int {
	total := 0.0
	for i := range len(s) {
		total += d.pdf.GetStringWidth(s[i : i+1])
		if total > avail {
			return i
		}
	}
	return len(s)
}

// ellipsis cuts encoded s so that it and a trailing "…" fit in avail.
func (d *doc) ellipsis(s string, avail float64) string {
	const dots = "\x85" // "…" in Windows-1252
	n := d.fits(s, avail-d.pdf.GetStringWidth(dots))
	return strings.TrimRight(s[:n], " ") + dots
}

// ensure starts a new page when h more millimetres do not fit, repeating
// the table header when a table is being drawn.
func (d *doc) ensure(h float64) {
	if d.pdf.GetY()+h <= bodyBottom {
		return
	}
	d.pdf.AddPage()
	if d.inTable {
		d.tableHeader()
	}
}

// runningHeader names the document at the top of continuation pages, so
// a loose page can still be matched to its invoice.
func (d *doc) runningHeader() {
	if d.pdf.PageNo() == 1 {
		return
	}
	d.setFont("", 8)
	d.setGray(true)
	d.text(marginX, marginTop-8, contentW, lineH, d.title()+" "+d.inv.Number, "L")
	d.pdf.SetY(marginTop)
}

// footer prints the caller's footer text and the page count.
func (d *doc) footer() {
	d.setFont("", 8)
	d.setGray(true)
	y := bodyBottom + 8
	for _, line := range d.wrap(d.inv.Footer, contentW, 2) {
		d.put(marginX, y, contentW, 4, line, "C")
		y += 4
	}
	page := winAnsi(fmt.Sprintf(d.l.page, d.pdf.PageNo(), "{nb}"))
	d.put(marginX, pageH-14, contentW, 4, page, "R")
}
