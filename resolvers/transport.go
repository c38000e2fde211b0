package resolvers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/internal/auth"
)

// The media types of a GraphQL response (GraphQL-over-HTTP). application/json is the legacy
// one every client reads; with application/graphql-response+json the status says whether
// the request was executed, which a client can trust even behind proxies.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// httpTransport serves GraphQL over HTTP GET and POST as the GraphQL-over-HTTP spec says,
// in place of gqlgen's transports, whose statuses are not the spec's (422 for a document
// that fails validation, 200 for a POST body that is not JSON):
//
//   - the response is application/graphql-response+json when Accept prefers it, else
//     application/json;
//   - a request that is not a well-formed GraphQL-over-HTTP request is refused with 400
//     (unreadable JSON, no query), 405 (another method, a mutation over GET) or 415 (a
//     POST body that is not JSON), whatever the media type;
//   - a request error (parse, validation, variables, the cost limits) has no data: 200
//     with application/json, 4xx with application/graphql-response+json;
//   - a response with data, null or not, is 200.
type httpTransport struct{}

// Supports implements graphql.Transport: every request but OPTIONS and HEAD (the Options
// transport's) and upgrades to a socket.
func (httpTransport) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == "" && r.Method != http.MethodOptions && r.Method != http.MethodHead
}

// Do implements graphql.Transport.
func (httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	media := responseMedia(r.Header.Get("Accept"))
	params, status, refusal := readParams(w, r)
	if refusal != nil {
		writeGraphQL(w, media, status, exec.DispatchError(ctx, gqlerror.List{refusal}))
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: graphql.GetStartTime(ctx), End: graphql.Now()}
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		writeGraphQL(w, media, requestErrorStatus(media, resp.Errors), resp)
		return
	}
	if r.Method == http.MethodGet && opCtx.Operation.Operation != ast.Query {
		w.Header().Set("Allow", http.MethodPost)
		resp := exec.DispatchError(ctx, gqlerror.List{requestError("MethodNotAllowed",
			"A %s can only be sent with POST.", opCtx.Operation.Operation)})
		writeGraphQL(w, media, http.StatusMethodNotAllowed, resp)
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	resp := responses(ctx)
	if resp == nil {
		return // the client went away
	}
	status = http.StatusOK
	if resp.Data == nil {
		status = requestErrorStatus(media, resp.Errors)
	}
	writeGraphQL(w, media, status, resp)
}

// readParams reads a GET's query string or a POST's JSON body. A request it cannot read as
// GraphQL-over-HTTP comes back as a presented error with its status.
func readParams(w http.ResponseWriter, r *http.Request) (*graphql.RawParams, int, *gqlerror.Error) {
	params := &graphql.RawParams{Headers: r.Header}
	switch r.Method {
	case http.MethodGet:
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, http.StatusBadRequest, requestError("BadRequest", "The query string is malformed: %v.", err)
		}
		params.Query, params.OperationName = q.Get("query"), q.Get("operationName")
		for name, into := range map[string]*map[string]any{"variables": &params.Variables, "extensions": &params.Extensions} {
			if v := q.Get(name); v != "" && decodeJSON(strings.NewReader(v), into) != nil {
				return nil, http.StatusBadRequest, requestError("BadRequest", "The %s parameter is not a JSON object.", name)
			}
		}
	case http.MethodPost:
		if media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); media != mediaJSON {
			return nil, http.StatusUnsupportedMediaType, requestError("UnsupportedMediaType",
				"A POST body must be application/json.")
		}
		body, err := io.ReadAll(r.Body)
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, http.StatusRequestEntityTooLarge, tooLarge()
		}
		if err != nil || decodeJSON(bytes.NewReader(body), params) != nil {
			return nil, http.StatusBadRequest, requestError("BadRequest",
				"The body is not a JSON object with a string query and object variables and extensions.")
		}
	default:
		w.Header().Set("Allow", "GET, POST, OPTIONS")
		return nil, http.StatusMethodNotAllowed, requestError("MethodNotAllowed", "GraphQL is served over GET and POST.")
	}
	if params.Query == "" && params.Extensions["persistedQuery"] == nil {
		return nil, http.StatusBadRequest, requestError("BadRequest", "The request has no query.")
	}
	return params, 0, nil
}

// decodeJSON decodes one JSON value, keeping numbers exact as gqlgen's transports do.
func decodeJSON(r io.Reader, into any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return dec.Decode(into)
}

// tooLarge refuses a body or URL over maxQueryBytes.
func tooLarge() *gqlerror.Error {
	return &gqlerror.Error{Message: "The request is larger than " + strconv.Itoa(maxQueryBytes) + " bytes.",
		Extensions: map[string]any{"code": GraphQLCostLimitExceeded, "reason": "RequestBodyTooLarge"}}
}

// requestErrorStatus is the status of a response without data. application/json answers a
// well-formed request 200 whatever failed; application/graphql-response+json says why.
func requestErrorStatus(media string, errs gqlerror.List) int {
	if media != mediaGraphQLResponse {
		return http.StatusOK
	}
	code := GraphQLBadUserInput
	if len(errs) > 0 {
		code, _ = errs[0].Extensions["code"].(GraphQLCode)
	}
	switch code {
	case GraphQLUnauthenticated:
		return http.StatusUnauthorized
	case GraphQLForbidden:
		return http.StatusForbidden
	case GraphQLRateLimited:
		return http.StatusTooManyRequests
	case GraphQLInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// wireBody is a response as written: errors first (the spec suggests it, so that a reader
// sees them), then data, absent rather than null when the request was refused before
// execution, then extensions. data is copied as the executor wrote it: it is valid JSON
// already, and having encoding/json check and compact a large page again cost a few percent
// of the server's time.
func wireBody(resp *graphql.Response) ([]byte, error) {
	var errs, ext []byte
	var err error
	if len(resp.Errors) > 0 {
		if errs, err = json.Marshal(resp.Errors); err != nil {
			return nil, err
		}
	}
	if len(resp.Extensions) > 0 {
		if ext, err = json.Marshal(resp.Extensions); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, len(errs)+len(resp.Data)+len(ext)+40)
	b = append(b, '{')
	sep := func(name string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), name...), `":`...)
	}
	if errs != nil {
		sep("errors")
		b = append(b, errs...)
	}
	if resp.Data != nil {
		sep("data")
		b = append(b, resp.Data...)
	}
	if ext != nil {
		sep("extensions")
		b = append(b, ext...)
	}
	return append(b, '}'), nil
}

// writeGraphQL writes a response in the negotiated media type. A refusal for the cost budget
// also carries Retry-After, whatever the status.
func writeGraphQL(w http.ResponseWriter, media string, status int, resp *graphql.Response) {
	h := w.Header()
	h.Set("Content-Type", media+"; charset=utf-8")
	for _, e := range resp.Errors {
		if e.Extensions["code"] == GraphQLRateLimited && resp.Data == nil {
			if s, ok := e.Extensions["retryAfter"].(int); ok {
				h.Set("Retry-After", strconv.Itoa(s))
			}
		}
	}
	b, err := wireBody(resp)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"errors":[{"message":"Internal Server Error","extensions":{"code":"INTERNAL"}}]}`)
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// responseMedia picks the response's media type from Accept: application/graphql-response+json
// when it is listed with the highest preference (the first listed among equals), else
// application/json, which is also the answer to a missing or unsatisfiable Accept.
func responseMedia(accept string) string {
	best, bestQ := mediaJSON, -1.0
	for part := range strings.SplitSeq(accept, ",") {
		media, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		var offer string
		switch media {
		case mediaGraphQLResponse:
			offer = mediaGraphQLResponse
		case mediaJSON, "application/*", "*/*":
			offer = mediaJSON
		default:
			continue
		}
		if q > 0 && q > bestQ {
			best, bestQ = offer, q
		}
	}
	return best
}

// RefuseToken implements auth.TokenRefuser: a bad, expired or revoked bearer token on
// /graphql is a GraphQL error, UNAUTHENTICATED, with the same challenge /v1 sends; a request
// the session cookie would authenticate that fails the CSRF check is FORBIDDEN; a failure
// to look the token up is INTERNAL.
func (h graphQLHandler) RefuseToken(w http.ResponseWriter, r *http.Request, err error) {
	e := &gqlerror.Error{Message: auth.InvalidTokenDescription,
		Extensions: map[string]any{"code": GraphQLUnauthenticated, "reason": "invalid_token"}}
	status := http.StatusUnauthorized
	switch {
	case errors.Is(err, auth.ErrInvalidToken):
		w.Header().Set("WWW-Authenticate", auth.InvalidTokenChallenge)
	case errors.Is(err, auth.ErrCSRF):
		e = &gqlerror.Error{Message: auth.CSRFRefusal,
			Extensions: map[string]any{"code": GraphQLForbidden, "reason": CodeCSRF}}
		status = http.StatusForbidden
	default:
		e = &gqlerror.Error{Message: "Internal Server Error", Extensions: map[string]any{"code": GraphQLInternal}}
		status = http.StatusInternalServerError
	}
	writeGraphQL(w, responseMedia(r.Header.Get("Accept")), status, &graphql.Response{Errors: gqlerror.List{e}})
}
