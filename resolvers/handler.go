package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/graph"
	"till/internal/auth"
	"till/internal/gqlexec"
	"till/internal/graphiql"
	"till/internal/reqinfo"
)

// Limits that keep one query from exhausting the server; the limits on a document's size
// and shape are in cost_document.go, its price in cost.go.
const (
	maxDepth       = 12
	queryCacheSize = 1000
	// fieldsMemoSize bounds the selection sets whose fields a handler keeps: a few dozen per
	// cached document.
	fieldsMemoSize = 20_000
)

// Schema is Till's executable GraphQL schema with its directives wired.
func (r *Resolver) Schema() graphql.ExecutableSchema {
	return graph.NewExecutableSchema(graph.Config{Resolvers: r, Directives: graph.DirectiveRoot{
		HasScope: r.HasScope, Portal: Portal, Billing: r.Billing, Public: Public, FirstParty: FirstParty,
		Relation: r.Relation, TeamManager: TeamManager,
	}})
}

// extensions are the HTTP handler's: limits on what clients may ask, then the loaders.
func (r *Resolver) extensions() []graphql.HandlerExtension {
	return []graphql.HandlerExtension{
		extension.Introspection{},
		DepthLimit{Max: maxDepth},
		costLimit{r: r},
		LoadersExtension{DB: r.db},
		gqlexec.NewFieldsMemo(fieldsMemoSize),
		auditOperations{},
	}
}

// graphiQLAssets is where the embedded GraphiQL files are served; mount Handler there too.
const graphiQLAssets = "/graphql/assets/"

// Handler serves /graphql: POST and GET queries with an LRU query cache and automatic
// persisted queries, GraphiQL (with its files under /graphql/assets/) for browsers and, with
// WithSubscriptions, subscriptions over websockets.
// Every failure, a refused bearer token included, is a GraphQL errors array with a code of
// GraphQLCodes, served as GraphQL-over-HTTP says (httpTransport).
func (r *Resolver) Handler(opts ...HandlerOption) http.Handler {
	var o handlerOptions
	for _, opt := range opts {
		opt(&o)
	}
	srv := handler.New(r.Schema())
	if o.credentials != nil && r.live != nil {
		srv.AddTransport(r.websocketTransport(o.credentials))
	}
	srv.AddTransport(transport.Options{})
	srv.AddTransport(httpTransport{})
	docs := lru.New[*ast.QueryDocument](queryCacheSize)
	srv.SetQueryCache(docs)
	srv.SetParserTokenLimit(maxTokens)
	srv.Use(reqinfo.GraphQL{}) // before the limits, so a refused operation is still named in the access log
	srv.Use(extension.AutomaticPersistedQuery{Cache: newAPQCache(apqBudget)})
	srv.Use(DocumentLimit{Cache: docs})
	srv.Use(liveOperations{})
	for _, e := range r.extensions() {
		srv.Use(e)
	}
	srv.SetErrorPresenter(ErrorPresenter(r.logger))
	srv.SetRecoverFunc(Recover(r.logger))
	return graphQLHandler{srv: srv, ide: graphiql.Handler("/graphql", graphiQLAssets, r.graphiQLHeaders)}
}

// graphiQLHeaders gives GraphiQL the CSRF token of a browser signed in by its session
// cookie, so the queries and mutations it POSTs pass the CSRF check.
func (r *Resolver) graphiQLHeaders(req *http.Request) map[string]string {
	p := auth.FromContext(req.Context())
	if !p.BrowserSession {
		return nil
	}
	return map[string]string{auth.CSRFHeader: auth.CSRFToken(r.secret, p.TokenID)}
}

// graphQLHandler is /graphql. It is an auth.TokenRefuser, so the bearer middleware in front
// of it lets it answer a bad token in GraphQL's shape.
type graphQLHandler struct {
	srv *handler.Server
	ide http.Handler
}

func (h graphQLHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if strings.HasPrefix(req.URL.Path, graphiQLAssets) || req.Method == http.MethodGet &&
		strings.Contains(req.Header.Get("Accept"), "text/html") {
		h.ide.ServeHTTP(w, req)
		return
	}
	if req.Header.Get("Upgrade") != "" {
		// A websocket lives as long as its client keeps answering pings (livePing), not
		// within the deadlines of one HTTP exchange, which stay on a hijacked connection.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		h.srv.ServeHTTP(w, withLiveSource(req))
		return
	}
	media := responseMedia(req.Header.Get("Accept"))
	if req.ContentLength > maxQueryBytes {
		writeGraphQL(w, media, http.StatusRequestEntityTooLarge, &graphql.Response{Errors: gqlerror.List{tooLarge()}})
		return
	}
	if req.Method == http.MethodGet && max(len(req.RequestURI), len(req.URL.RawQuery)) > maxQueryBytes {
		e := &gqlerror.Error{Message: "The request URI is longer than " + strconv.Itoa(maxQueryBytes) + " bytes.",
			Extensions: map[string]any{"code": GraphQLCostLimitExceeded, "reason": "RequestURITooLong"}}
		writeGraphQL(w, media, http.StatusRequestURITooLong, &graphql.Response{Errors: gqlerror.List{e}})
		return
	}
	req.Body = http.MaxBytesReader(w, req.Body, maxQueryBytes)
	h.srv.ServeHTTP(w, req.WithContext(requestAudit(req, auditAPIGraphQL)))
}

// Executor runs GraphQL documents in process; the /v1 layer executes its persisted
// operations through it.
type Executor struct{ exec *executor.Executor }

// Executor builds the in-process executor over the same schema, loaders and error rules as
// Handler. It runs only Till's own documents (the /v1 persisted operations, validated at
// start, and the seeding of till demo), so the document, depth and cost limits that guard
// against client-written queries are left out: on /v1's hottest routes they cost more than
// the rest of the operation's bookkeeping. Nor do /v1 calls spend the GraphQL cost budget:
// each route's cost is fixed by its document, with limit clamped at 100, and rules that
// belong to an operation (the public license limits) are enforced in its use case.
func (r *Resolver) Executor() *Executor {
	e := executor.New(r.Schema())
	e.SetQueryCache(lru.New[*ast.QueryDocument](queryCacheSize))
	e.Use(LoadersExtension{DB: r.db})
	e.Use(gqlexec.NewFieldsMemo(fieldsMemoSize))
	e.Use(auditOperations{})
	e.SetErrorPresenter(ErrorPresenter(r.logger))
	e.SetRecoverFunc(Recover(r.logger))
	return &Executor{exec: e}
}

// Execute runs one operation with the principal already in ctx.
func (x *Executor) Execute(ctx context.Context, document, operationName string, variables map[string]any) *graphql.Response {
	ctx = graphql.StartOperationTrace(ctx)
	now := graphql.Now()
	params := &graphql.RawParams{Query: document, OperationName: operationName, Variables: variables,
		ReadTime: graphql.TraceTiming{Start: now, End: now}}
	opCtx, errs := x.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		return x.exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
	}
	h, ctx := x.exec.DispatchOperation(ctx, opCtx)
	return h(ctx)
}

// DepthLimit rejects operations nested deeper than Max selection levels, which complexity
// alone does not bound for cheap but recursive shapes.
type DepthLimit struct{ Max int }

// ExtensionName implements graphql.HandlerExtension.
func (DepthLimit) ExtensionName() string { return "DepthLimit" }

// Validate implements graphql.HandlerExtension.
func (DepthLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator.
func (d DepthLimit) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	if depth(op.Operation.SelectionSet, op.Doc.Fragments, 0) > d.Max {
		return costLimitError(fmt.Sprintf("The operation is nested deeper than %d levels.", d.Max))
	}
	return nil
}

func depth(set ast.SelectionSet, frags ast.FragmentDefinitionList, seen int) int {
	if seen > 64 {
		return seen
	}
	most := 0
	for _, s := range set {
		var d int
		switch s := s.(type) {
		case *ast.Field:
			// Introspection is as deep as the schema's type references, not as the data,
			// and GraphiQL's standard introspection query is deeper than any data query.
			if strings.HasPrefix(s.Name, "__") {
				continue
			}
			if len(s.SelectionSet) > 0 {
				d = 1 + depth(s.SelectionSet, frags, seen+1)
			}
		case *ast.InlineFragment:
			d = depth(s.SelectionSet, frags, seen+1)
		case *ast.FragmentSpread:
			if f := frags.ForName(s.Name); f != nil {
				d = depth(f.SelectionSet, frags, seen+1)
			}
		}
		most = max(most, d)
	}
	return most
}

// Run executes one operation with Go values as variables, passed through JSON exactly as a
// client would send them, and decodes data into out (when not nil). It is how Till drives
// its own API in process (till demo, tests); any GraphQL error is returned as an error.
func (x *Executor) Run(ctx context.Context, document string, variables map[string]any, out any) error {
	raw, err := json.Marshal(variables)
	if err != nil {
		return err
	}
	var plain map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&plain); err != nil {
		return err
	}
	resp := x.Execute(ctx, document, "", plain)
	if len(resp.Errors) > 0 {
		return resp.Errors
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(resp.Data, out)
}
