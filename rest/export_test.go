package rest

// DecodeParams runs a route's parameters through the router's decoding, with every path
// parameter set to path as chi hands it over and the raw query string rawQuery.
func DecodeParams(params []Param, path, rawQuery string) (map[string]any, ValidationErrors) {
	vars := map[string]any{}
	errs := decodeParams(params, func(string) string { return pathParamValue(path, false) }, parseQuery(rawQuery), vars)
	return vars, errs
}

// DecodeStreamed is DecodeBody through the streaming parse of a route with s.
func DecodeStreamed(b *Body, s *Stream, contentType string, raw []byte) (any, error) {
	p, errs, err := parseStreamedBody(contentType, raw, newListHook(b, s))
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
