package fastapi

import (
	"strings"
)

// Body is an endpoint's JSON request body.
type Body struct {
	Var      string // GraphQL variable receiving the validated body, e.g. "input"
	Schema   Schema // usually an Object, or a Union of Objects
	Optional bool   // an empty body is allowed; otherwise it is 422 missing at ["body"]
}

// ParsedBody is a request body after FastAPI's read step, before validation. FastAPI reads
// the body before it resolves any dependency, so a JSON syntax error beats authentication;
// the caller runs its own checks between ReadBody and Validate.
type ParsedBody struct {
	value   any
	present bool // false for an empty body or JSON null, which FastAPI treats as missing
}

// Present reports whether the body counts as sent: FastAPI treats an empty body and JSON
// null as missing.
func (p ParsedBody) Present() bool { return p.present }

// ReadBody reads raw as FastAPI does before validation: as JSON when the content type is
// absent, application/json or application/*+json, and as raw text otherwise (which then
// fails model validation). A JSON syntax error is returned as its single 422 item; bytes
// json.loads cannot decode at all are ErrUnparsableBody (a 400). With s, the list field
// s names is validated item by item while it is parsed (see Stream); s may be nil.
func ReadBody(b *Body, s *Stream, contentType string, raw []byte) (ParsedBody, []ValidationError, error) {
	return parseStreamedBody(contentType, raw, newListHook(b, s))
}

// parseBody is ReadBody without a stream.
func parseBody(contentType string, raw []byte) (ParsedBody, []ValidationError, error) {
	if len(raw) == 0 {
		return ParsedBody{}, nil, nil
	}
	if contentType != "" && !isJSONContentType(contentType) {
		return ParsedBody{value: string(raw), present: true}, nil, nil
	}
	v, syntaxErr, err := decodePythonJSON(raw)
	if err != nil {
		return ParsedBody{}, nil, err
	}
	if syntaxErr != nil {
		e := newError("json_invalid", []any{"body", syntaxErr.pos}, "JSON decode error", NewDict(), "error", syntaxErr.msg)
		return ParsedBody{}, []ValidationError{e}, nil
	}
	return ParsedBody{value: v, present: v != nil}, nil, nil
}

// isJSONContentType follows email.message's get_content_type, which FastAPI
// uses: anything without exactly one "/" counts as text/plain.
func isJSONContentType(ct string) bool {
	mt := strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	if strings.Count(mt, "/") != 1 {
		return false
	}
	main, sub, _ := strings.Cut(mt, "/")
	return main == "application" && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// Validate checks a read body against b and returns the value for b.Var (nil when an
// optional body is absent).
func (b *Body) Validate(p ParsedBody) (any, []ValidationError) {
	if !p.present {
		if b.Optional {
			return nil, nil
		}
		return nil, []ValidationError{errMissing([]any{"body"}, nil)}
	}
	oc, errs := b.Schema.validate(p.value, []any{"body"})
	if len(errs) > 0 {
		return nil, errs
	}
	return oc.value, nil
}

// DecodeBody reads and validates a body in one step, as an endpoint that checks nothing in
// between would, and returns the value for b.Var (nil when an optional body is absent); s
// may be nil (see ReadBody). The error is ValidationErrors for a 422, or ErrUnparsableBody
// for a 400; a value and an error are never returned together.
func DecodeBody(b *Body, s *Stream, contentType string, raw []byte) (any, error) {
	p, errs, err := ReadBody(b, s, contentType, raw)
	if err != nil {
		return nil, err
	}
	if len(errs) == 0 {
		var v any
		if v, errs = b.Validate(p); len(errs) == 0 {
			return v, nil
		}
	}
	return nil, ValidationErrors(errs)
}
