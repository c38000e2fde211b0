package fastapi

// A usage-event batch may hold 150,000 events in its 10 MiB. Parsed into Python-shaped
// values, validated into GraphQL variables and converted for the use case, every event
// existed three times over at once, and the server grew to 40 times the body. A streamed
// body instead has each item of one top-level list validated as soon as the parser has read
// it, keeping only what the endpoint needs of it: nothing of the parsed tree outlives its item.

// Stream makes ReadBody validate a body's list field Field item by item while the body is
// parsed. Keep turns a validated item (GraphQL names, canonical values) into what the
// validated body holds in that field's list, in place of the item. It applies when the
// body is an object whose Field is a list without length limits (which would need the
// whole list); other bodies are read whole.
type Stream struct {
	Field string
	Keep  func(item map[string]any) any
}

// streamedList stands, in the parsed body, for the list a Stream consumed: the kept items,
// or the 422 items of those that failed.
type streamedList struct {
	kept []any
	errs []ValidationError
}

// listHook consumes the list under key in the top-level object as the parser reads it.
type listHook struct {
	key   string
	items Schema
	keep  func(map[string]any) any
	loc   []any
	list  *streamedList
}

// begin starts a new occurrence of the key: as in a Python dict, the last one wins.
func (h *listHook) begin() *streamedList {
	h.list = &streamedList{kept: []any{}}
	return h.list
}

func (h *listHook) item(i int, v any) {
	oc, errs := h.items.validate(v, at(h.loc, i))
	if len(errs) > 0 {
		h.list.errs = append(h.list.errs, errs...)
		return
	}
	if len(h.list.errs) == 0 {
		h.list.kept = append(h.list.kept, h.keep(oc.value.(map[string]any)))
	}
}

// newListHook builds the hook for a body, or nil without a stream or when the body is not
// an object whose Field is a plain list (a length limit would need the whole list).
func newListHook(b *Body, s *Stream) *listHook {
	obj, isObj := b.Schema.(Object)
	if s == nil || !isObj {
		return nil
	}
	for _, f := range obj.Fields {
		if l, isList := f.Schema.(List); isList && f.Name == s.Field && len(f.Aliases) == 0 && l.MinLength == 0 && l.MaxLength == 0 {
			return &listHook{key: s.Field, items: l.Items, keep: s.Keep, loc: []any{"body", s.Field}}
		}
	}
	return nil
}

// parseStreamedBody is parseBody for a streamed body: the same answers, with the list
// consumed by the hook.
func parseStreamedBody(contentType string, raw []byte, hook *listHook) (ParsedBody, []ValidationError, error) {
	if hook == nil || len(raw) == 0 || contentType != "" && !isJSONContentType(contentType) {
		return parseBody(contentType, raw)
	}
	v, syntaxErr, err := decodePythonJSONWith(raw, hook)
	if err != nil {
		return ParsedBody{}, nil, err
	}
	if syntaxErr != nil {
		e := newError("json_invalid", []any{"body", syntaxErr.pos}, "JSON decode error", NewDict(), "error", syntaxErr.msg)
		return ParsedBody{}, []ValidationError{e}, nil
	}
	return ParsedBody{value: v, present: v != nil}, nil, nil
}

// streamArray is array for the hooked list: items go to the hook instead of a slice.
func (p *pyParser) streamArray(i, depth int) (any, int, *parseErr) {
	s := p.s
	list := p.hook.begin()
	i = p.skipWS(i)
	if i < len(s) && s[i] == ']' {
		return list, i + 1, nil
	}
	for n := 0; ; n++ {
		v, next, err := p.value(i, depth+1)
		if err != nil {
			return nil, 0, err
		}
		p.hook.item(n, v)
		i = p.skipWS(next)
		if i < len(s) && s[i] == ']' {
			return list, i + 1, nil
		}
		if i >= len(s) || s[i] != ',' {
			return nil, 0, &parseErr{msg: "Expecting ',' delimiter", at: i}
		}
		comma := i
		i = p.skipWS(i + 1)
		if i < len(s) && s[i] == ']' {
			return nil, 0, &parseErr{msg: "Illegal trailing comma before end of array", at: comma}
		}
	}
}
