package resolverstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// Response is one HTTP answer of /graphql, decoded when it is a GraphQL response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	Data   json.RawMessage
	Errors []Error
	// Cost is extensions.cost: what the operation was charged and what is left.
	Cost *Cost
}

// Cost is the cost report of a GraphQL response.
type Cost struct {
	Requested int    `json:"requested"`
	Remaining *int   `json:"remaining"`
	Reset     string `json:"reset"`
}

// Error is one GraphQL error with Till's extensions.
type Error struct {
	Message    string     `json:"message"`
	Path       []any      `json:"path"`
	Extensions Extensions `json:"extensions"`
}

// Extensions are what the presenter shows of an error.
type Extensions struct {
	// Code is one of resolvers.GraphQLCodes.
	Code string `json:"code"`
	// Reason is the upstream error name (ResourceNotFound, insufficient_scope, …) or
	// gqlgen's code (GRAPHQL_VALIDATION_FAILED).
	Reason string       `json:"reason"`
	Fields []FieldError `json:"fields"`
	Scopes []string     `json:"scopes"`
	// Cause is a finer cause than Reason (activation_limit_reached).
	Cause string `json:"cause"`
	// RetryAfter is the whole seconds a RATE_LIMITED caller waits.
	RetryAfter int `json:"retryAfter"`
}

// FieldError is one extensions.fields item; numeric path parts decode as int so tests can
// write []any{"input", "prices", 0, "amountType"}.
type FieldError struct {
	Type  string `json:"type"`
	Loc   []any  `json:"path"`
	Msg   string `json:"message"`
	Input any    `json:"input"`
}

// UnmarshalJSON turns integral loc numbers into ints.
func (f *FieldError) UnmarshalJSON(b []byte) error {
	type plain FieldError
	if err := json.Unmarshal(b, (*plain)(f)); err != nil {
		return err
	}
	for i, l := range f.Loc {
		if n, ok := l.(float64); ok && n == float64(int(n)) {
			f.Loc[i] = int(n)
		}
	}
	return nil
}

// Vars are the variables of an operation.
type Vars = map[string]any

// Post sends one operation to the /graphql endpoint at url over client, with token as bearer
// (none when empty), and returns the answer whatever its status; the error is for an answer
// that never came. It is the one GraphQL client of the tests: the harness's own, and that of
// tests that drive a till process over the network.
func Post(ctx context.Context, client *http.Client, url, token, query string, vars Vars) (*Response, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", url, err)
	}
	defer res.Body.Close()
	out := &Response{Status: res.StatusCode, Header: res.Header}
	if out.Body, err = io.ReadAll(res.Body); err != nil {
		return nil, fmt.Errorf("reading response: %w", err)
	}
	// A body that is not a GraphQL response keeps Data and Errors empty; tests read Body for
	// it. Data stays nil when the response has no data entry (a request error).
	var env struct {
		Data       json.RawMessage `json:"data"`
		Errors     []Error         `json:"errors"`
		Extensions struct {
			Cost *Cost `json:"cost"`
		} `json:"extensions"`
	}
	if json.Unmarshal(out.Body, &env) == nil {
		out.Data, out.Errors, out.Cost = env.Data, env.Errors, env.Extensions.Cost
	}
	return out, nil
}

// Decode decodes the data of an operation that succeeded into out (when not nil), and
// otherwise returns why it did not: the first GraphQL error, or a body that carries neither
// data nor errors. It is for callers that must not stop a test from where they run (load
// generators, goroutines of their own).
func (r *Response) Decode(out any) error {
	if len(r.Errors) > 0 {
		e := r.Errors[0]
		return fmt.Errorf("graphql: %s (%s %s)", e.Message, e.Extensions.Code, e.Extensions.Reason)
	}
	if r.Data == nil {
		return fmt.Errorf("no GraphQL response: HTTP %d: %s", r.Status, r.Body)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Data, out)
}

// Call posts an operation with Post and decodes its outcome with Decode, for callers that
// handle a failed operation themselves (a retry, a count of failures).
func Call(ctx context.Context, client *http.Client, url, token, query string, vars Vars, out any) error {
	res, err := Post(ctx, client, url, token, query, vars)
	if err != nil {
		return err
	}
	return res.Decode(out)
}

// Do POSTs an operation to the application's /graphql with token as bearer (none when
// empty) and returns the answer whatever its status.
func (a *App) Do(tb testing.TB, token, query string, vars Vars) *Response {
	tb.Helper()
	res, err := Post(tb.Context(), a.http, a.url, token, query, vars)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// Query runs an operation that must succeed and decodes its data into out (when not nil).
func (a *App) Query(tb testing.TB, token, query string, vars Vars, out any) {
	tb.Helper()
	res := a.Do(tb, token, query, vars)
	if res.Status != http.StatusOK || len(res.Errors) > 0 {
		tb.Fatalf("operation failed: HTTP %d: %s", res.Status, res.Body)
	}
	if out != nil {
		if err := json.Unmarshal(res.Data, out); err != nil {
			tb.Fatalf("decoding data %s: %v", res.Data, err)
		}
	}
}

// QueryError runs an operation that must fail with exactly one GraphQL error and returns it.
func (a *App) QueryError(tb testing.TB, token, query string, vars Vars) Error {
	tb.Helper()
	res := a.Do(tb, token, query, vars)
	if len(res.Errors) != 1 {
		tb.Fatalf("want exactly one GraphQL error, got HTTP %d: %s", res.Status, res.Body)
	}
	return res.Errors[0]
}
