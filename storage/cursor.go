package storage

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// ErrInvalidCursor reports a cursor that this list did not issue, or issued under another
// sorting: the client's mistake, never a server fault.
var ErrInvalidCursor = errors.New("invalid cursor")

// Cursor is a row's position in a sorted list: the values of the row's sort criteria and its
// id, as PostgreSQL rendered them, plus a signature of the order they belong to. Clients see
// it as an opaque string; it positions a window and grants nothing, since every list still
// filters by the caller's organizations.
type Cursor struct {
	order uint32
	key   string
}

// String is the opaque form handed to clients: base64 of {"o":order,"k":key}, the bytes
// json.Marshal writes for them (key compacted, HTML characters escaped), without the
// reflection: every window's page info asks for two.
func (c Cursor) String() string {
	var b bytes.Buffer
	b.WriteString(`{"o":`)
	b.WriteString(strconv.FormatUint(uint64(c.order), 10))
	b.WriteString(`,"k":`)
	var key bytes.Buffer
	if err := json.Compact(&key, []byte(c.key)); err != nil {
		key.Reset()
		key.WriteString("null")
	}
	json.HTMLEscape(&b, key.Bytes())
	b.WriteByte('}')
	return base64.RawURLEncoding.EncodeToString(b.Bytes())
}

// ParseCursor reads a cursor a client sends back; its fit with the list's order is checked
// when the list runs.
func ParseCursor(s string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(s) > 4096 {
		return nil, ErrInvalidCursor
	}
	var c struct {
		O uint32          `json:"o"`
		K json.RawMessage `json:"k"`
	}
	if err := json.Unmarshal(b, &c); err != nil || len(c.K) == 0 {
		return nil, ErrInvalidCursor
	}
	return &Cursor{order: c.O, key: string(c.K)}, nil
}

// orderSignature identifies an order, so a cursor of one sorting is refused by another.
func orderSignature(order []Sort) uint32 {
	h := fnv.New32a()
	for _, s := range order {
		fmt.Fprintf(h, "%s %t;", s.Column, s.Desc)
	}
	return h.Sum32()
}

// values decodes the cursor's key into one bind value per criterion: nil, a string (text,
// timestamps and uuids, which PostgreSQL casts to the column's type), a number kept as its
// decimal text, or a bool. The last value must be a uuid: the id.
func (c Cursor) values(order []Sort) ([]any, error) {
	if c.order != orderSignature(order) {
		return nil, ErrInvalidCursor
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(c.key)))
	dec.UseNumber()
	var raw []any
	if err := dec.Decode(&raw); err != nil || len(raw) != len(order) {
		return nil, ErrInvalidCursor
	}
	out := make([]any, len(raw))
	for i, v := range raw {
		switch v := v.(type) {
		case nil, string, bool:
			out[i] = v
		case json.Number:
			out[i] = v.String()
		default:
			return nil, ErrInvalidCursor
		}
	}
	if id, ok := out[len(out)-1].(string); !ok || uuid.Validate(id) != nil {
		return nil, ErrInvalidCursor
	}
	return out, nil
}

// condition is the WHERE condition admitting the rows that come after the cursor in order
// (or, reversed, before it), with its bind values numbered from n+1. Rows after (a, b, id)
// are those greater on a, or equal on a and greater on b, and so on down to the id; nulls
// sort last ascending and first descending, as PostgreSQL orders them.
func (c Cursor) condition(order []Sort, reverse bool, n int) (string, []any, error) {
	vals, err := c.values(order)
	if err != nil {
		return "", nil, err
	}
	var args []any
	bind := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", n+len(args))
	}
	var ors, eqs []string
	for i, s := range order {
		desc := s.Desc != reverse
		var after string
		switch {
		case vals[i] == nil && desc:
			after = s.Column + " IS NOT NULL"
		case vals[i] == nil:
			after = "false"
		case desc:
			after = s.Column + " < " + bind(vals[i])
		default:
			after = "(" + s.Column + " > " + bind(vals[i]) + " OR " + s.Column + " IS NULL)"
		}
		ors = append(ors, "("+strings.Join(append(append([]string{}, eqs...), after), " AND ")+")")
		if i == len(order)-1 {
			break
		}
		if vals[i] == nil {
			eqs = append(eqs, s.Column+" IS NULL")
		} else {
			eqs = append(eqs, s.Column+" = "+bind(vals[i]))
		}
	}
	return "(" + strings.Join(ors, " OR ") + ")", args, nil
}
