package rest

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"till/rest/fastapi"
)

// csvOut writes CSV rows as Python's csv module does with the excel dialect, which upstream's
// exports use: comma separated, CRLF line ends, a cell quoted only when it holds a comma, a
// quote, CR or LF (quotes doubled), and the one cell of a one-column row quoted when empty.
// Unlike encoding/csv, a leading space does not quote a cell and LF inside a cell stays LF.
type csvOut struct {
	w    io.Writer
	line []byte
}

// write sends one row.
func (c *csvOut) write(cells []string) error {
	c.line = c.line[:0]
	for i, s := range cells {
		if i > 0 {
			c.line = append(c.line, ',')
		}
		if strings.ContainsAny(s, ",\"\r\n") || (s == "" && len(cells) == 1) {
			c.line = append(c.line, '"')
			c.line = append(c.line, strings.ReplaceAll(s, `"`, `""`)...)
			c.line = append(c.line, '"')
		} else {
			c.line = append(c.line, s...)
		}
	}
	c.line = append(c.line, '\r', '\n')
	_, err := c.w.Write(c.line)
	return err
}

// neutralized guards a text cell of Till's own CSV exports against formula injection: a
// spreadsheet runs a cell starting with = + - or @ as a formula, so such a cell gets a
// leading single quote, which spreadsheets show as text. Numbers and dates Till writes itself
// are never passed through it.
func neutralized(s string) string {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}

// pyISO is Python's datetime.isoformat of t in tz: microseconds only when not zero, and the
// offset as +HH:MM.
func pyISO(t time.Time, tz *time.Location) string {
	t = t.In(tz)
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000-07:00")
	}
	return t.Format("2006-01-02T15:04:05-07:00")
}

// pyISOOpt is pyISO of a time that may be absent (an empty cell).
func pyISOOpt(t *time.Time, tz *time.Location) string {
	if t == nil {
		return ""
	}
	return pyISO(*t, tz)
}

// pyCents is an amount in cents as upstream writes it, the float cents / 100 (19.99, 10.0).
func pyCents(cents int64) string { return fastapi.PyFloat(float64(cents) / 100) }

// cell is an optional string's cell, empty when absent.
func cell(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// intText is an optional integer's cell, empty when absent.
func intText(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

// jsonLine writes v as one line of JSON lines.
func jsonLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
