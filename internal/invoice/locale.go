package invoice

import (
	"strings"
	"time"
)

// labels holds the fixed wording of the document in one language. Invoices
// go to the customer, so they follow the customer's locale; languages
// without a translation here fall back to English.
type labels struct {
	invoice, receipt             string
	invoiceNumber, receiptNumber string
	issued, due, paidOn, status  string
	billTo, taxID                string
	description, qty, unitPrice  string
	amount, subtotal, discount   string
	net, tax, total, paid        string
	// page is a fmt layout taking the page number and the total-pages alias.
	page string
	// date is the time.Format layout for dates.
	date string
}

// labelsFor returns the wording for a locale tag such as "fr-CA".
func labelsFor(locale string) labels {
	switch language(locale) {
	case "de":
		return labels{
			invoice: "Rechnung", receipt: "Quittung",
			invoiceNumber: "Rechnungsnummer", receiptNumber: "Quittungsnummer",
			issued: "Rechnungsdatum", due: "Fällig am", paidOn: "Bezahlt am", status: "Status",
			billTo: "Rechnung an", taxID: "Steuernummer",
			description: "Beschreibung", qty: "Menge", unitPrice: "Einzelpreis",
			amount: "Betrag", subtotal: "Zwischensumme", discount: "Rabatt",
			net: "Gesamt ohne Steuern", tax: "Steuern", total: "Gesamt", paid: "Bezahlt",
			page: "Seite %d von %s", date: "02.01.2006",
		}
	case "fr":
		return labels{
			invoice: "Facture", receipt: "Reçu",
			invoiceNumber: "Numéro de facture", receiptNumber: "Numéro de reçu",
			issued: "Date d'émission", due: "Date d'échéance", paidOn: "Date de paiement", status: "Statut",
			billTo: "Facturé à", taxID: "Numéro fiscal",
			description: "Description", qty: "Qté", unitPrice: "Prix unitaire",
			amount: "Montant", subtotal: "Sous-total", discount: "Remise",
			net: "Total hors taxes", tax: "Taxes", total: "Total", paid: "Payé",
			page: "Page %d sur %s", date: "02/01/2006",
		}
	case "es":
		return labels{
			invoice: "Factura", receipt: "Recibo",
			invoiceNumber: "Número de factura", receiptNumber: "Número de recibo",
			issued: "Fecha de emisión", due: "Fecha de vencimiento", paidOn: "Fecha de pago", status: "Estado",
			billTo: "Facturar a", taxID: "Número fiscal",
			description: "Descripción", qty: "Cant.", unitPrice: "Precio unitario",
			amount: "Importe", subtotal: "Subtotal", discount: "Descuento",
			net: "Total sin impuestos", tax: "Impuestos", total: "Total", paid: "Pagado",
			page: "Página %d de %s", date: "02/01/2006",
		}
	case "it":
		return labels{
			invoice: "Fattura", receipt: "Ricevuta",
			invoiceNumber: "Numero fattura", receiptNumber: "Numero ricevuta",
			issued: "Data di emissione", due: "Data di scadenza", paidOn: "Data di pagamento", status: "Stato",
			billTo: "Intestata a", taxID: "Codice fiscale",
			description: "Descrizione", qty: "Qtà", unitPrice: "Prezzo unitario",
			amount: "Importo", subtotal: "Subtotale", discount: "Sconto",
			net: "Totale imponibile", tax: "Imposte", total: "Totale", paid: "Pagato",
			page: "Pagina %d di %s", date: "02/01/2006",
		}
	case "nl":
		return labels{
			invoice: "Factuur", receipt: "Ontvangstbewijs",
			invoiceNumber: "Factuurnummer", receiptNumber: "Bonnummer",
			issued: "Factuurdatum", due: "Vervaldatum", paidOn: "Betaaldatum", status: "Status",
			billTo: "Factuur aan", taxID: "Btw-nummer",
			description: "Omschrijving", qty: "Aantal", unitPrice: "Stukprijs",
			amount: "Bedrag", subtotal: "Subtotaal", discount: "Korting",
			net: "Totaal excl. belasting", tax: "Belasting", total: "Totaal", paid: "Betaald",
			page: "Pagina %d van %s", date: "02-01-2006",
		}
	}
	return labels{
		invoice: "Invoice", receipt: "Receipt",
		invoiceNumber: "Invoice number", receiptNumber: "Receipt number",
		issued: "Date of issue", due: "Date due", paidOn: "Date paid", status: "Status",
		billTo: "Bill to", taxID: "Tax ID",
		description: "Description", qty: "Qty", unitPrice: "Unit price",
		amount: "Amount", subtotal: "Subtotal", discount: "Discount",
		net: "Total excluding tax", tax: "Tax", total: "Total", paid: "Paid",
		page: "Page %d of %s", date: "January 2, 2006",
	}
}

// formatDate renders a date in the label set's layout, in the time's own
// location: the caller decides which zone the seller's calendar uses.
func (l labels) formatDate(t time.Time) string {
	return t.Format(l.date)
}

// CountryName returns the English name of an ISO 3166-1 alpha-2 country
// code for the address block, or the upper-cased code itself when the
// small built-in table does not know it: a code is still a valid postal
// line, an empty line is not.
func CountryName(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	switch code {
	case "AR":
		return "Argentina"
	case "AT":
		return "Austria"
	case "AU":
		return "Australia"
	case "BE":
		return "Belgium"
	case "BG":
		return "Bulgaria"
	case "BR":
		return "Brazil"
	case "CA":
		return "Canada"
	case "CH":
		return "Switzerland"
	case "CL":
		return "Chile"
	case "CN":
		return "China"
	case "CO":
		return "Colombia"
	case "CY":
		return "Cyprus"
	case "CZ":
		return "Czechia"
	case "DE":
		return "Germany"
	case "DK":
		return "Denmark"
	case "EE":
		return "Estonia"
	case "ES":
		return "Spain"
	case "FI":
		return "Finland"
	case "FR":
		return "France"
	case "GB":
		return "United Kingdom"
	case "GR":
		return "Greece"
	case "HK":
		return "Hong Kong"
	case "HR":
		return "Croatia"
	case "HU":
		return "Hungary"
	case "ID":
		return "Indonesia"
	case "IE":
		return "Ireland"
	case "IL":
		return "Israel"
	case "IN":
		return "India"
	case "IS":
		return "Iceland"
	case "IT":
		return "Italy"
	case "JP":
		return "Japan"
	case "KR":
		return "South Korea"
	case "LT":
		return "Lithuania"
	case "LU":
		return "Luxembourg"
	case "LV":
		return "Latvia"
	case "MT":
		return "Malta"
	case "MX":
		return "Mexico"
	case "MY":
		return "Malaysia"
	case "NL":
		return "Netherlands"
	case "NO":
		return "Norway"
	case "NZ":
		return "New Zealand"
	case "PH":
		return "Philippines"
	case "PL":
		return "Poland"
	case "PT":
		return "Portugal"
	case "RO":
		return "Romania"
	case "SE":
		return "Sweden"
	case "SG":
		return "Singapore"
	case "SI":
		return "Slovenia"
	case "SK":
		return "Slovakia"
	case "TH":
		return "Thailand"
	case "TR":
		return "Türkiye"
	case "TW":
		return "Taiwan"
	case "UA":
		return "Ukraine"
	case "US":
		return "United States"
	case "VN":
		return "Vietnam"
	case "ZA":
		return "South Africa"
	}
	return code
}
