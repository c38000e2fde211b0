package storage

import (
	"strconv"
	"strings"
	"sync"
)

// The text of a statement that writes relations inside their parents (nestedSelect)
// depends only on the shapes it is built from: the page query's text, the record's
// columns, the fields, each nested list's text and window. It never depends on the values
// of the arguments. Building it is most of what a portal home costs the server besides
// running it, so it is built once per shape.

// memoText is a remembered statement text, and whether it could be written at all.
type memoText struct {
	text string
	ok   bool
}

// textMemo is a bounded map of statement texts by shape; past its limit it starts over, so
// a flood of distinct documents costs rebuilding, never memory (a shape's key and text are
// tens of kilobytes: 128 of them stay under ten megabytes).
type textMemo struct {
	mu    sync.RWMutex
	limit int
	texts map[string]memoText
}

// nestedTexts remembers nestedSelect's texts for the process. It caches a pure function of
// its key, as the record mapper caches struct layouts: no caller can tell it is there.
var nestedTexts = &textMemo{limit: 128, texts: map[string]memoText{}}

func (m *textMemo) get(key string) (memoText, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.texts[key]
	return t, ok
}

func (m *textMemo) put(key string, t memoText) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.texts) >= m.limit {
		clear(m.texts)
	}
	m.texts[key] = t
}

// nestedArgs appends to args the arguments of each nested list of fields, in the order the
// statement numbers them (the order renderSQL writes the fields in).
func nestedArgs(args []any, fields []RenderField) []any {
	for _, f := range fields {
		switch {
		case f.Nested != nil:
			args = append(args, f.Nested.list.Args...)
		case f.Kind == "object":
			args = nestedArgs(args, f.Fields)
		}
	}
	return args
}

// nestedKey is everything nestedSelect's text is built from, each part length-prefixed so
// that no two shapes share a key.
func nestedKey(l listSQL, w Window, query string, base int, lead string) string {
	var k keyWriter
	k.str(query)
	k.str(l.Columns)
	k.strs(w.Columns)
	k.int(base)
	k.str(lead)
	k.fields(w.Render)
	return k.String()
}

// keyWriter writes a shape's key.
type keyWriter struct{ strings.Builder }

func (k *keyWriter) str(s string) {
	k.WriteString(strconv.Itoa(len(s)))
	k.WriteByte(':')
	k.WriteString(s)
}

func (k *keyWriter) int(n int) { k.str(strconv.Itoa(n)) }

// strs tells a nil list (every column) from an empty one (none).
func (k *keyWriter) strs(list []string) {
	if list == nil {
		k.WriteByte('~')
		return
	}
	k.int(len(list))
	for _, s := range list {
		k.str(s)
	}
}

func (k *keyWriter) fields(fields []RenderField) {
	k.int(len(fields))
	for _, f := range fields {
		k.str(f.Key)
		k.str(f.Column)
		k.str(f.Kind)
		k.str(f.Literal)
		k.strs(f.Keys)
		k.fields(f.Fields)
		if o := f.One; o == nil {
			k.WriteByte('~')
		} else {
			k.str(o.table)
			k.str(o.columns)
			k.str(o.key)
			k.fields(o.Fields)
		}
		if n := f.Nested; n == nil {
			k.WriteByte('~')
		} else {
			k.list(n.list)
			k.str(n.parent)
			k.window(n.window)
			k.fields(n.Page)
		}
	}
}

func (k *keyWriter) list(l listSQL) {
	k.str(l.Columns)
	k.str(l.From)
	k.str(l.ID)
	k.strs(l.Where)
	k.int(len(l.Args))
	k.str(orderSQL(l.order(), false))
	k.strs(l.Extra)
}

func (k *keyWriter) window(w Window) {
	k.int(w.Page)
	k.int(w.Limit)
	k.int(w.Offset())
	for _, set := range []bool{w.After != nil, w.Before != nil, w.Backward} {
		k.str(strconv.FormatBool(set))
	}
	k.strs(w.Columns)
	k.fields(w.Render)
}
