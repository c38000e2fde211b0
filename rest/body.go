package rest

import (
	"strings"
)

// parsedBody is a request body after FastAPI's read step.
type parsedBody struct {
	value   any
	present bool // false for an empty body or JSON null, which FastAPI treats as missing
}

// parseBody reads raw as FastAPI does before validation: as JSON when the
// content type is absent, application/json or application/*+json, and as
// raw text otherwise (which then fails model validation). A JSON syntax
// error is returned as its single 422 item.
func parseBody(contentType string, raw []byte) (parsedBody, []ValidationError, error) {
	if len(raw) == 0 {
		return parsedBody{}, nil, nil
	}
	if contentType != "" && !isJSONContentType(contentType) {
		return parsedBody{value: string(raw), present: true}, nil, nil
	}
	v, syntaxErr, err := decodePythonJSON(raw)
	if err != nil {
		return parsedBody{}, nil, err
	}
	if syntaxErr != nil {
		e := newError("json_invalid", []any{"body", syntaxErr.pos}, "JSON decode error", newPyObject(), "error", syntaxErr.msg)
		return parsedBody{}, []ValidationError{e}, nil
	}
	return parsedBody{value: v, present: v != nil}, nil, nil
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

// validate checks a parsed body against the spec.
func (b *Body) validate(p parsedBody) (any, []ValidationError) {
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

// DecodeBody validates a request body as the router does for a route taking
// b, and returns the value for b.Var (nil when an optional body is absent).
// The error is ValidationErrors for a 422, or ErrUnparsableBody for a 400;
// a value and an error are never returned together.
func DecodeBody(b *Body, contentType string, raw []byte) (any, error) {
	p, errs, err := parseBody(contentType, raw)
	if err != nil {
		return nil, err
	}
	if len(errs) == 0 {
		var v any
		if v, errs = b.validate(p); len(errs) == 0 {
			return v, nil
		}
	}
	return nil, ValidationErrors(errs)
}
