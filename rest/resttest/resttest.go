// Package resttest checks /v1 responses against the published contract
// (rest/testdata/openapi-2026-04-subset.json) in tests, so that every REST
// test also proves the SDKs could decode what it saw. It knows the contract's
// documented gaps (contract §5: undocumented statuses, the extra "error" key
// of 422 bodies, domain error names under ResourceNotFound) and allows those
// instead of failing on them.
package resttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// contract is the parsed document, loaded once per test binary: parsing the
// 1 MB file per test would dominate the suite's run time.
type contract struct {
	doc *openapi3.T
	err error
}

var (
	contractOnce sync.Once
	loaded       contract
)

// ContractPath is where the contract copy lives, found from this source file
// so that tests in any package can use the helpers.
func ContractPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "openapi-2026-04-subset.json")
}

// Contract returns the loaded OpenAPI document.
func Contract(tb testing.TB) *openapi3.T {
	tb.Helper()
	contractOnce.Do(func() {
		loader := openapi3.NewLoader()
		loaded.doc, loaded.err = loader.LoadFromFile(ContractPath())
	})
	if loaded.err != nil {
		tb.Fatalf("resttest: load contract: %v", loaded.err)
	}
	return loaded.doc
}

// NewRequest builds a request as an HTTP client sends it: POST, PUT and
// PATCH carry a Content-Length header (httptest leaves it out, and /v1
// answers 411 without it) and a JSON content type.
func NewRequest(method, target, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// Serve runs req through h, validates the response against the contract and
// returns the recording.
func Serve(tb testing.TB, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	ValidateResponse(tb, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

// ValidateResponse fails the test when the response to req does not conform
// to the contract: an undocumented status that is not one of the known gaps,
// a body that does not match the documented schema, a success body missing a
// declared field (upstream always emits every field, null when empty), or a
// JSON body without Content-Type application/json.
func ValidateResponse(tb testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	tb.Helper()
	if err := Check(Contract(tb), req, status, header, body); err != nil {
		tb.Errorf("resttest: %s %s → %d does not conform to the contract: %v\nbody: %s", req.Method, req.URL.RequestURI(), status, err, body)
	}
}

// Check is ValidateResponse's verdict as an error, for tests of the helper
// itself and for callers that want to assert a failure.
func Check(doc *openapi3.T, req *http.Request, status int, header http.Header, body []byte) error {
	if status == http.StatusTemporaryRedirect {
		if header.Get("Location") == "" {
			return fmt.Errorf("redirect without Location")
		}
		return nil
	}
	if handled, err := checkPage(req, status, header); handled {
		return err
	}
	if handled, err := checkFile(doc, req, status, header); handled {
		return err
	}
	if len(body) > 0 && header.Get("Content-Type") != "application/json" {
		return fmt.Errorf("Content-Type %q, want application/json", header.Get("Content-Type"))
	}
	if status >= 500 {
		return fmt.Errorf("server error")
	}
	if handled, err := checkOAuth(doc, req, status, header, body); handled {
		return err
	}
	if handled, err := checkHidden(req, status, body); handled {
		return err
	}
	route := findRoute(doc, req)
	if route == nil {
		return checkFramework(status, body)
	}
	documented := route.Operation.Responses.Status(status) != nil
	if !documented || (useGenericShape(status, body) && !documentsName(route.Operation, status, ErrorName(body))) {
		if err := checkUndocumented(status, body); err != nil {
			return fmt.Errorf("%s: %w", route.Operation.OperationID, err)
		}
		return nil
	}
	if status == http.StatusUnprocessableEntity && isRequestValidation(body) {
		return checkValidationBody(doc, body)
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route},
		Status:                 status,
		Header:                 header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, RegexCompiler: ECMAPattern,
			SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.SetSchemaRegexCompiler(ECMAPattern)}},
	}
	input.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return err
	}
	if status < 300 && len(body) > 0 && !oauthBody(route.Operation.OperationID) && !excludesNone(route.Operation.OperationID) {
		return allFieldsPresent(route.Operation.Responses.Status(status).Value, body)
	}
	return nil
}

// findRoute matches the request to a documented operation; /api/v1 is served
// as /v1, HEAD as GET, and static segments beat parameters.
func findRoute(doc *openapi3.T, req *http.Request) *routers.Route {
	path := req.URL.Path
	if strings.HasPrefix(path, "/api/v1/") {
		path = strings.TrimPrefix(path, "/api")
	}
	method := req.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	segs := strings.Split(path, "/")
	var best *routers.Route
	bestScore := -1
	templates := doc.Paths.InMatchingOrder()
	sort.Strings(templates)
	for _, tmpl := range templates {
		item := doc.Paths.Value(tmpl)
		op := item.GetOperation(method)
		tsegs := strings.Split(tmpl, "/")
		if op == nil || len(tsegs) != len(segs) {
			continue
		}
		score := 0
		for i, t := range tsegs {
			switch {
			case strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") && segs[i] != "":
			case t == segs[i]:
				score++
			default:
				score = -1
			}
			if score < 0 {
				break
			}
		}
		if score > bestScore {
			best, bestScore = &routers.Route{Spec: doc, Path: tmpl, PathItem: item, Method: method, Operation: op}, score
		}
	}
	return best
}

// ErrorName returns the "error" key of an error body ("" when absent).
func ErrorName(body []byte) string {
	var v struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Error
}

// Detail returns the "detail" key of an error body when it is a string.
func Detail(body []byte) string {
	var v struct {
		Detail any `json:"detail"`
	}
	_ = json.Unmarshal(body, &v)
	s, _ := v.Detail.(string)
	return s
}

// Item is one 422 detail item as decoded from a response; Ctx is empty when the item has
// no ctx key (upstream sends it only for some error types).
type Item struct {
	Type  string          `json:"type"`
	Loc   []any           `json:"loc"`
	Msg   string          `json:"msg"`
	Input json.RawMessage `json:"input"`
	Ctx   json.RawMessage `json:"ctx"`
}

// Items returns the detail items of a 422 body.
func Items(tb testing.TB, body []byte) []Item {
	tb.Helper()
	var v struct {
		Detail []Item `json:"detail"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		tb.Fatalf("resttest: not a validation body: %v: %s", err, body)
	}
	return v.Detail
}

// decode parses JSON keeping integers exact.
func decode(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// checkFile judges a file answer (a CSV export): its operation must document that media type
// for the status, and upstream's streaming response names the file in Content-Disposition.
func checkFile(doc *openapi3.T, req *http.Request, status int, header http.Header) (handled bool, err error) {
	media, _, _ := strings.Cut(header.Get("Content-Type"), ";")
	if media != "text/csv" {
		return false, nil
	}
	route := findRoute(doc, req)
	if route == nil {
		return true, fmt.Errorf("a %s answer from an undocumented path", media)
	}
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil || resp.Value.Content.Get(media) == nil {
		return true, fmt.Errorf("%s: status %d is not documented as %s", route.Operation.OperationID, status, media)
	}
	if header.Get("Content-Type") != media+"; charset=utf-8" {
		return true, fmt.Errorf("Content-Type %q, want %q as Starlette sends it", header.Get("Content-Type"), media+"; charset=utf-8")
	}
	if !strings.HasPrefix(header.Get("Content-Disposition"), `attachment; filename="`) {
		return true, fmt.Errorf("Content-Disposition %q does not name the file", header.Get("Content-Disposition"))
	}
	return true, nil
}

// excludesNone tells the operations upstream declares with response_model_exclude_none:
// their answers leave out null fields (metrics not asked for), so the declared fields need
// not all be present.
func excludesNone(operationID string) bool {
	return operationID == "metrics:get"
}
