package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/internal/ratelimit"
	"till/internal/rawjson"
	"till/resolvers"
	"till/rest/fastapi"
)

// writeResult turns an operation's result into the route's HTTP answer.
func (rt *router) writeResult(ctx context.Context, w http.ResponseWriter, route Route, resp *graphql.Response) {
	if resp == nil {
		rt.logger.ErrorContext(ctx, "rest: executor returned no response", "operation", route.Operation)
		writeInternal(w)
		return
	}
	if len(resp.Errors) > 0 {
		rt.writeGraphQLErrors(ctx, w, route, resp.Errors)
		return
	}
	switch route.status() {
	case http.StatusNoContent:
		// FastAPI keeps the JSON content type on an empty 204.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNoContent)
		return
	case http.StatusAccepted:
		writeJSON(w, http.StatusAccepted, []byte("null"))
		return
	}
	data := dataReader{data: resp.Data}
	if route.Problem != "" {
		if p, err := data.field(route.Problem); err == nil && string(p) != "null" {
			rt.writeProblem(ctx, w, route, p)
			return
		}
	}
	body, err := data.field(route.Field)
	for _, name := range route.Append {
		if err != nil {
			break
		}
		var extra json.RawMessage
		if extra, err = data.field(name); err == nil {
			body, err = appendKey(body, name[strings.LastIndex(name, ".")+1:], extra)
		}
	}
	if err == nil && route.ExcludeNone {
		body, err = excludeNone(body)
	}
	if err != nil {
		rt.logger.ErrorContext(ctx, "rest: unusable data", "operation", route.Operation, "error", err)
		writeInternal(w)
		return
	}
	rt.writeBody(ctx, w, route, body)
}

// writeBody answers with the route's success body, as JSON or in the media type its Encode
// writes (a Direct route's body included: it is the JSON the operation would have shaped).
func (rt *router) writeBody(ctx context.Context, w http.ResponseWriter, route Route, body json.RawMessage) {
	if route.Encode != nil {
		if err := route.Encode(w, body); err != nil {
			rt.logger.ErrorContext(ctx, "rest: encoding the body", "operation", route.Operation, "error", err)
			writeInternal(w)
		}
		return
	}
	writeJSON(w, route.status(), body)
}

// dataReader reads dotted fields of one response's data byte for byte. The data is the
// executor's own output, so it is scanned for the members on the way (rawjson) rather than
// decoded: decoding it validated the whole response again, a tenth of an order's CPU.
type dataReader struct {
	data json.RawMessage
}

func (d *dataReader) field(path string) (json.RawMessage, error) {
	value := []byte(d.data)
	for _, name := range strings.Split(path, ".") {
		next, found, err := rawjson.Member(value, name)
		if err != nil {
			return nil, fmt.Errorf("decode data: %w", err)
		}
		if !found {
			return nil, fmt.Errorf("data has no %q", path)
		}
		value = next
	}
	return value, nil
}

// appendKey adds "key": value as the last member of a JSON object, keeping its bytes.
func appendKey(object json.RawMessage, key string, value json.RawMessage) (json.RawMessage, error) {
	object = bytes.TrimSpace(object)
	if len(object) < 2 || object[0] != '{' || object[len(object)-1] != '}' {
		return nil, fmt.Errorf("cannot add %q to a non-object", key)
	}
	name, _ := json.Marshal(key)
	out := append([]byte{}, object[:len(object)-1]...)
	if len(bytes.TrimSpace(out)) > 1 {
		out = append(out, ',')
	}
	out = append(append(append(out, name...), ':'), value...)
	return append(out, '}'), nil
}

// writeProblem answers with an error reported as data: the same envelope as the error
// would get had it been raised.
func (rt *router) writeProblem(ctx context.Context, w http.ResponseWriter, route Route, raw json.RawMessage) {
	var p struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Code == "" {
		rt.logger.ErrorContext(ctx, "rest: unusable problem", "operation", route.Operation, "problem", string(raw))
		writeInternal(w)
		return
	}
	rt.writeTillError(ctx, w, route, &resolvers.Error{Code: p.Code, Detail: p.Detail})
}

// dataField returns data[field] byte for byte: GraphQL's field order stays,
// and integers are never re-encoded as floats. A dotted field ("me.paymentMethods")
// walks into nested objects, for portal routes rooted at Query.me.
func dataField(data json.RawMessage, field string) (json.RawMessage, error) {
	r := dataReader{data: data}
	return r.field(field)
}

// writeGraphQLErrors answers with the first error that wraps a *resolvers.Error: the
// presenter keeps the value it rendered, so /v1 renders upstream's body from the error
// itself, whatever GraphQL shows of it. Errors without one are unexpected, such as a
// document that no longer validates: they are logged and hidden behind a 500.
func (rt *router) writeGraphQLErrors(ctx context.Context, w http.ResponseWriter, route Route, errs gqlerror.List) {
	for _, e := range errs {
		var te *resolvers.Error
		if errors.As(e, &te) {
			rt.writeTillError(ctx, w, route, te)
			return
		}
	}
	rt.logger.ErrorContext(ctx, "rest: operation failed", "operation", route.Operation, "errors", errs.Error())
	writeInternal(w)
}

// writeTillError answers with upstream's body for a Till error: its status, name and detail,
// its field errors as a validation list, or the OAuth2 and rate-limit answers where upstream
// sends those.
func (rt *router) writeTillError(ctx context.Context, w http.ResponseWriter, route Route, te *resolvers.Error) {
	switch te.Code {
	case resolvers.CodeRateLimited:
		// A rule of the operation refused it: the same 429 the limit always answered on /v1.
		ratelimit.WriteTooManyRequests(w, te.RetryAfter)
		return
	case resolvers.CodeInsufficientScope:
		writeOAuthError(w, http.StatusForbidden, rt.realm, te.Code, insufficientScopeDescription, te.Scopes)
		return
	}
	status := te.Status()
	if len(te.Errors) > 0 {
		items, err := rt.validationItems(route, te.Errors)
		if err != nil {
			rt.logger.ErrorContext(ctx, "rest: unusable validation errors", "operation", route.Operation, "error", err)
			writeInternal(w)
			return
		}
		writeValidation(w, status, te.Code, items)
		return
	}
	if status == http.StatusAccepted {
		// Work the caller started is not finished (a receipt being rendered): upstream
		// answers 202 with an empty body.
		w.WriteHeader(status)
		return
	}
	if status < 400 || status > 599 {
		rt.logger.ErrorContext(ctx, "rest: error without a status", "operation", route.Operation, "code", te.Code, "message", te.Error())
		writeInternal(w)
		return
	}
	if te.Code == resolvers.CodeUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+rt.realm+`"`)
	}
	writeError(w, status, te.Code, te.Detail)
}

// gqlItem is one resolvers.FieldError as it encodes in JSON.
type gqlItem struct {
	Type  string            `json:"type"`
	Loc   []json.RawMessage `json:"loc"`
	Msg   string            `json:"msg"`
	Input json.RawMessage   `json:"input"`
	Ctx   json.RawMessage   `json:"ctx"`
}

// validationItems converts a Till error's field errors to REST items, mapping each GraphQL
// loc (["input","customerId"]) to the wire (["body","customer_id"]). They pass through JSON
// so each input is written exactly as encoding/json writes it.
func (rt *router) validationItems(route Route, raw any) ([]fastapi.ValidationError, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var items []gqlItem
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&items); err != nil {
		return nil, err
	}
	out := make([]fastapi.ValidationError, len(items))
	for i, it := range items {
		loc := make([]any, len(it.Loc))
		for j, seg := range it.Loc {
			var s string
			var n int
			switch {
			case json.Unmarshal(seg, &s) == nil:
				loc[j] = s
			case json.Unmarshal(seg, &n) == nil:
				loc[j] = n
			default:
				return nil, errors.New("loc segment is neither a string nor an integer")
			}
		}
		out[i] = fastapi.ValidationError{Type: it.Type, Loc: restLoc(route, loc), Msg: it.Msg, Input: it.Input}
		if len(it.Ctx) > 0 && string(it.Ctx) != "null" {
			out[i].Ctx = it.Ctx
		}
	}
	return out, nil
}

// restLoc maps a GraphQL input path to the REST one. "input" (or the body's
// variable) becomes "body" and field names are looked up in the body schema
// (camelCase to snake_case when unknown); a parameter's variable becomes
// its location and wire name. Locs already in REST form pass unchanged.
func restLoc(route Route, loc []any) []any {
	if len(loc) == 0 {
		return loc
	}
	first, _ := loc[0].(string)
	switch first {
	case "body", "query", "path", "header":
		return loc
	}
	for _, p := range route.Params {
		if segs := strings.Split(p.Variable(), "."); len(segs) > 1 && len(loc) >= len(segs) && slices.Equal(toAny(segs), loc[:len(segs)]) {
			return append([]any{p.In.String(), p.Name}, loc[len(segs):]...)
		}
	}
	if first == "input" || (route.Body != nil && first == route.Body.Var) {
		var s fastapi.Schema
		if route.Body != nil {
			s = route.Body.Schema
		}
		return append([]any{"body"}, fastapi.WirePath(s, loc[1:])...)
	}
	for _, p := range route.Params {
		if p.Variable() == first {
			return append([]any{p.In.String(), p.Name}, loc[1:]...)
		}
	}
	return loc
}

// toAny widens strings to a loc's segments.
func toAny(segs []string) []any {
	out := make([]any, len(segs))
	for i, s := range segs {
		out[i] = s
	}
	return out
}
