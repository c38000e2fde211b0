package invoice

import (
	"fmt"
	"io"
	"strconv"
	"time"
)

// Item table columns, left to right; they add up to contentW.
const (
	colDesc   = 84.0
	colQty    = 16.0
	colUnit   = 35.0
	colAmount = 35.0
	// maxDescLines keeps one item row shorter than a page.
	maxDescLines = 12
	// maxBlockLines bounds each of the seller and bill-to blocks.
	maxBlockLines = 24
)

// render lays out the whole document and writes it to w. compress is off
// only in tests, which read the page content streams.
func render(w io.Writer, inv Invoice, compress bool) error {
	if err := inv.validate(); err != nil {
		return err
	}
	d := newDoc(inv, compress)
	d.pdf.AddPage()
	d.heading()
	d.parties()
	d.items()
	d.totals()
	d.notes()
	if err := d.pdf.Output(w); err != nil {
		return fmt.Errorf("invoice: writing PDF: %w", err)
	}
	return nil
}

// heading prints the title, the number and dates, and the paid marker.
func (d *doc) heading() {
	d.setFont("B", 22)
	d.setGray(false)
	d.text(marginX, marginTop, 120, 10, d.title(), "L")
	if d.inv.Paid {
		d.paidMarker()
	}
	number := d.l.invoiceNumber
	if d.inv.Kind == KindReceipt {
		number = d.l.receiptNumber
	}
	rows := [][2]string{{number, d.inv.Number}}
	for _, r := range []struct {
		label string
		at    time.Time
	}{{d.l.issued, d.inv.IssuedAt}, {d.l.due, d.inv.DueAt}, {d.l.paidOn, d.inv.PaidAt}} {
		if !r.at.IsZero() {
			rows = append(rows, [2]string{r.label, d.l.formatDate(r.at)})
		}
	}
	if d.inv.Status != "" {
		rows = append(rows, [2]string{d.l.status, d.inv.Status})
	}
	y := marginTop + 14
	for _, r := range rows {
		d.setFont("", bodySize)
		d.setGray(true)
		d.text(marginX, y, 42, lineH, r[0], "L")
		d.setFont("B", bodySize)
		d.setGray(false)
		d.text(marginX+42, y, 100, lineH, r[1], "L")
		y += lineH + 0.6
	}
	d.pdf.SetY(y + 8)
}

// paidMarker stamps a green "Paid" box in the top right corner.
func (d *doc) paidMarker() {
	const w, h = 40.0, 11.0
	d.pdf.SetDrawColor(22, 163, 74)
	d.pdf.SetLineWidth(0.6)
	d.pdf.SetTextColor(22, 163, 74)
	d.setFont("B", 14)
	d.pdf.SetXY(pageW-marginX-w, marginTop)
	d.pdf.CellFormat(w, h, winAnsi(d.l.paid), "1", 0, "C", false, 0, "")
	d.pdf.SetLineWidth(0.2)
	d.pdf.SetDrawColor(0, 0, 0)
	d.setGray(false)
}

// blockLine is one entry of an address block.
type blockLine struct {
	text  string
	style string
	gray  bool
	max   int
}

// parties prints the seller on the left and the customer on the right.
func (d *doc) parties() {
	s, c := d.inv.Seller, d.inv.Customer
	seller := []blockLine{{text: s.Name, style: "B", max: 3}}
	for _, a := range s.Address {
		seller = append(seller, blockLine{text: a, max: 2})
	}
	seller = append(seller, blockLine{text: s.Email, max: 1})
	if s.TaxID != "" {
		seller = append(seller, blockLine{text: d.l.taxID + ": " + s.TaxID, max: 2})
	}
	billTo := []blockLine{{text: d.l.billTo, style: "B", gray: true, max: 1}, {text: c.Name, style: "B", max: 3}}
	for _, a := range c.Address.lines() {
		billTo = append(billTo, blockLine{text: a, max: 2})
	}
	billTo = append(billTo, blockLine{text: c.Email, max: 1})
	if c.TaxID != "" {
		billTo = append(billTo, blockLine{text: d.taxIDLine(c), max: 2})
	}
	top := d.pdf.GetY()
	left := d.block(marginX, top, 80, seller)
	right := d.block(marginX+90, top, 80, billTo)
	d.pdf.SetY(max(left, right) + 10)
}

// taxIDLine labels the customer's tax id with its kind: "Tax ID (EU VAT): …".
func (d *doc) taxIDLine(c Customer) string {
	label := d.l.taxID
	if c.TaxIDType != "" {
		label += " (" + upperWords(c.TaxIDType) + ")"
	}
	return label + ": " + c.TaxID
}

// block prints lines from (x, y) and returns the y below the last one.
func (d *doc) block(x, y, w float64, lines []blockLine) float64 {
	printed := 0
	for _, bl := range lines {
		if bl.text == "" {
			continue
		}
		d.setFont(bl.style, bodySize)
		d.setGray(bl.gray)
		for _, line := range d.wrap(oneLine(bl.text), w, bl.max) {
			if printed == maxBlockLines {
				return y
			}
			d.put(x, y, w, lineH, line, "L")
			y += lineH
			printed++
		}
	}
	return y
}

// tableHeader prints the shaded column titles of the item table.
func (d *doc) tableHeader() {
	const h = 7.0
	y := d.pdf.GetY()
	d.pdf.SetFillColor(243, 244, 246)
	d.pdf.Rect(marginX, y, contentW, h, "F")
	d.setFont("B", 8.5)
	d.setGray(true)
	x := marginX
	for _, c := range []struct {
		w     float64
		label string
		align string
	}{{colDesc, d.l.description, "L"}, {colQty, d.l.qty, "R"}, {colUnit, d.l.unitPrice, "R"}, {colAmount, d.l.amount, "R"}} {
		d.text(x, y, c.w, h, c.label, c.align)
		x += c.w
	}
	d.pdf.SetY(y + h + 1)
}

// items prints the item table, breaking pages between rows.
func (d *doc) items() {
	d.inTable = true
	defer func() { d.inTable = false }()
	d.ensure(30)
	d.tableHeader()
	grouping := styleFor(d.inv.Locale).group
	for _, it := range d.inv.Items {
		d.setFont("", bodySize)
		lines := d.wrap(it.Description, colDesc, maxDescLines)
		h := float64(len(lines))*lineH + 2
		d.ensure(h)
		y := d.pdf.GetY()
		d.setFont("", bodySize) // a page break leaves the header's font set
		d.setGray(false)
		for i, line := range lines {
			d.put(marginX, y+1+float64(i)*lineH, colDesc, lineH, line, "L")
		}
		x := marginX + colDesc
		if it.Quantity > 0 {
			d.amount(x, y+1, colQty, lineH, group(strconv.FormatInt(it.Quantity, 10), grouping), "R")
			d.amount(x+colQty, y+1, colUnit, lineH, d.money(it.UnitAmount), "R")
		}
		d.amount(x+colQty+colUnit, y+1, colAmount, lineH, d.money(it.Amount), "R")
		d.pdf.SetDrawColor(229, 231, 235)
		d.pdf.Line(marginX, y+h, marginX+contentW, y+h)
		d.pdf.SetY(y + h)
	}
}

// totals prints the summary under the table, right-aligned.
func (d *doc) totals() {
	inv := d.inv
	rows := [][2]string{{d.l.subtotal, d.money(inv.SubtotalAmount)}}
	if inv.DiscountAmount != 0 {
		label := d.l.discount
		if inv.DiscountName != "" {
			label += " (" + inv.DiscountName + ")"
		}
		rows = append(rows, [2]string{label, d.money(-abs(inv.DiscountAmount))})
	}
	if inv.TaxAmount != 0 || inv.TaxRate != "" {
		label := d.l.tax
		if inv.TaxName != "" {
			label = inv.TaxName
		}
		if inv.TaxRate != "" {
			label += " (" + inv.TaxRate + ")"
		}
		rows = append(rows, [2]string{d.l.net, d.money(inv.NetAmount)}, [2]string{label, d.money(inv.TaxAmount)})
	}
	const labelX, labelW, valueW, rowH = marginX + 60, 70.0, 40.0, 6.0
	d.pdf.SetY(d.pdf.GetY() + 4)
	d.ensure(float64(len(rows)+1)*rowH + 2)
	y := d.pdf.GetY()
	d.setFont("", bodySize)
	d.setGray(false)
	for _, r := range rows {
		d.text(labelX, y, labelW, rowH, r[0], "L")
		d.amount(labelX+labelW, y, valueW, rowH, r[1], "R")
		y += rowH
	}
	d.pdf.SetDrawColor(17, 24, 39)
	d.pdf.Line(labelX, y+0.5, marginX+contentW, y+0.5)
	d.setFont("B", 11)
	d.text(labelX, y+1, labelW, rowH+1, d.l.total, "L")
	d.amount(labelX+labelW, y+1, valueW, rowH+1, d.money(inv.TotalAmount), "R")
	d.pdf.SetY(y + rowH + 2)
}

// notes prints the caller's notes under the totals, across pages if long.
func (d *doc) notes() {
	if d.inv.Notes == "" {
		return
	}
	d.pdf.SetY(d.pdf.GetY() + 8)
	d.setFont("", 9)
	d.setGray(true)
	for _, line := range d.wrap(d.inv.Notes, contentW, 400) {
		d.ensure(lineH)
		d.setFont("", 9)
		d.setGray(true)
		d.put(marginX, d.pdf.GetY(), contentW, lineH, line, "L")
		d.pdf.SetY(d.pdf.GetY() + lineH)
	}
}

// abs returns |n|, saturating at math.MaxInt64 for math.MinInt64.
func abs(n int64) int64 {
	if n >= 0 {
		return n
	}
	if -n < 0 {
		return 1<<63 - 1
	}
	return -n
}
