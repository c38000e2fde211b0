package rest

import (
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"math"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/rest/fastapi"
)

// Executor runs a persisted operation in process. It is an interface so this
// package needs no generated GraphQL code; the server wires gqlgen's
// executor behind it.
type Executor interface {
	Execute(ctx context.Context, document, operationName string, variables map[string]any) *graphql.Response
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, document, operationName string, variables map[string]any) *graphql.Response

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, document, operationName string, variables map[string]any) *graphql.Response {
	return f(ctx, document, operationName, variables)
}

// Route is one /v1 operation.
type Route struct {
	Method string // http.MethodGet, ...
	Path   string // chi pattern, exactly as upstream spells it: "/v1/customer-sessions/", "/v1/customers/{id}/payment-methods"

	// Operation names the persisted document rest/operations/<Operation>.graphql
	// and the single operation in it.
	Operation string

	// Params are the path and query parameters. Their 422 items come out in
	// this order, so list them as FastAPI validates them: dependencies first
	// (Page, Limit, Sorting, Metadata), then the endpoint's own path
	// parameters, then its own query parameters, each in signature order.
	Params []fastapi.Param

	// Body is the JSON request body; nil when the route takes none (the body
	// is then never read).
	Body *fastapi.Body

	// Field is the key of data whose value is the response body.
	Field string

	// Append names fields of data (dotted like Field) added in order as the last keys of
	// the body, each under its last segment's name. It folds a GraphQL payload's sibling
	// fields into one upstream shape: a validated key and the activation it matched.
	Append []string

	// Problem, when set, names a field of data (dotted like Field) that holds a Till error
	// as data ({code, status, detail}, GraphQL's Problem type). When it is not null the
	// route answers with that error instead of the body: operations that report failures
	// as results in GraphQL still fail as upstream does on /v1.
	Problem string

	// ExcludeNone drops null members from the body at every depth, for the upstream routes
	// declared with FastAPI's response_model_exclude_none (metrics answer only what was asked).
	ExcludeNone bool

	// Encode, when set, writes the success body in another media type (an export's CSV)
	// from the JSON the operation shaped. It returns an error only before writing anything.
	Encode func(w http.ResponseWriter, body json.RawMessage) error

	// Status is the success status: 200 (default), 201, 202 (body "null")
	// or 204 (no body).
	Status int

	// Direct, when set, answers the route instead of executing Operation, which still
	// authorizes it (its directives) and defines the shape Direct must render byte for byte.
	// It is for the few routes whose volume makes the operation's execution the cost.
	Direct DirectFunc

	// Stream, with Direct, validates a list of the body item by item while it is parsed, so
	// a batch never exists whole as parsed values (see Stream).
	Stream *fastapi.Stream

	// File, on an export route, is the media type of the file it streams (text/csv,
	// application/jsonl) instead of rendering Field; Export, wired by New, streams it.
	// Operation still authorizes the route (its directives) and declares the list filters
	// it takes; parameters the operation does not declare are the export's own (a CSV's
	// time zone and columns) and reach Export only.
	File   string
	Export ExportFunc

	// Handler, when set, serves the route instead of a GraphQL operation,
	// for endpoints that are not GraphQL-shaped (OAuth2 forms, redirects,
	// files). The global middleware and routing rules still apply.
	Handler http.Handler

	// Guard declares who may call a Handler route; it is required there and unused on
	// routes that run an operation, whose schema directives guard them.
	Guard Guard
}

// DirectFunc answers a route from its validated variables with the body, or with an error
// already presented as GraphQL presents it (wrapping the *resolvers.Error /v1 renders).
type DirectFunc func(ctx context.Context, vars map[string]any) (json.RawMessage, *gqlerror.Error)

func (r Route) status() int {
	if r.Status == 0 {
		return http.StatusOK
	}
	return r.Status
}

// PathUUID4 is a UUID4 path parameter such as {id}.
func PathUUID4(name, variable string) fastapi.Param {
	return fastapi.Param{In: fastapi.InPath, Name: name, Var: variable, Schema: fastapi.UUID4{}}
}

// PathString is a plain string path parameter such as {external_id}.
func PathString(name, variable string) fastapi.Param {
	return fastapi.Param{In: fastapi.InPath, Name: name, Var: variable}
}

// Page is Polar's page parameter (int > 0, default left to GraphQL).
func Page() fastapi.Param {
	return fastapi.Param{In: fastapi.InQuery, Name: "page", Schema: fastapi.Int{Gt: fastapi.At(0)}, Clamp: math.MaxInt32}
}

// Limit is Polar's limit parameter (int > 0, above 100 clamped to 100).
func Limit() fastapi.Param {
	return fastapi.Param{In: fastapi.InQuery, Name: "limit", Schema: fastapi.Int{Gt: fastapi.At(0)}, Clamp: 100}
}

// Sorting is Polar's repeatable sorting parameter over the given sort
// properties; each may be prefixed with "-", and the allowed values are
// listed as upstream's enum lists them (p, -p for each p).
func Sorting(properties ...string) fastapi.Param {
	values := make([]string, 0, 2*len(properties))
	for _, p := range properties {
		values = append(values, p, "-"+p)
	}
	return fastapi.Param{In: fastapi.InQuery, Name: "sorting", Schema: fastapi.Enum{Values: values}, Shape: fastapi.ShapeList}
}

// Metadata is Polar's metadata[key]=value filter, as the GraphQL
// [MetadataFilter!] list ({key, values} per key, in order of appearance).
func Metadata() fastapi.Param {
	return fastapi.Param{In: fastapi.InQuery, Name: "metadata", Shape: fastapi.ShapeDeepObject}
}

// Filter is a MultipleQueryFilter query parameter (repeatable, a list).
func Filter(name, variable string, s fastapi.Schema) fastapi.Param {
	return fastapi.Param{In: fastapi.InQuery, Name: name, Var: variable, Schema: s, Shape: fastapi.ShapeFilter}
}

// Query is a scalar query parameter (the last occurrence wins).
func Query(name, variable string, s fastapi.Schema) fastapi.Param {
	return fastapi.Param{In: fastapi.InQuery, Name: name, Var: variable, Schema: s}
}

// Config wires the /v1 router.
type Config struct {
	Executor Executor
	Routes   []Route

	// Documents holds the persisted operations (*.graphql at its root);
	// nil means the documents embedded from rest/operations.
	Documents fs.FS

	// Schema, when set, is used to validate every document at startup.
	Schema *ast.Schema

	// Logger receives unexpected errors; nil discards them.
	Logger *slog.Logger

	// Authenticate wraps routing and handlers (the bearer middleware), so
	// a bad token is rejected on every path, as upstream's middleware does.
	Authenticate func(http.Handler) http.Handler

	// Guard, when set, runs after the body's JSON is parsed and before
	// parameters are validated, where upstream runs its authentication
	// dependency: a non-nil error (wrapping a *resolvers.Error) is
	// answered like a GraphQL error, so a 401/403 wins over a 422.
	Guard func(r *http.Request, route Route) *gqlerror.Error

	// Versions are the accepted Polar-Version values; nil means 2026-04.
	Versions []string

	// Realm is the WWW-Authenticate realm; "" means "till".
	Realm string

	// PublicURL is the origin the trailing-slash redirects point at (e.g.
	// https://till.example.com); "" makes them relative. Never the request's Host.
	PublicURL string
}
