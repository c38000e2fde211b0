package rest

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/resolvers"
)

// Table is every route New serves: the /v1 operation routes, Till's own exports beside /v1,
// the hand-written protocol endpoints over r and the sign-in endpoints beside /v1. The security tests enumerate it.
func Table(r *resolvers.Resolver) []Route {
	return slices.Concat(Routes(), tillExportRoutes(), oauth2Routes(r), stripeRoutes(r), signInRoutes(r))
}

// New builds the /v1 compatibility layer over the same executable schema as /graphql.
// Its guard checks a route's root-field directives before the request is validated, so the
// authorization order is upstream's while the rules stay in the schema.
func New(r *resolvers.Resolver, authn func(http.Handler) http.Handler, logger *slog.Logger) (http.Handler, error) {
	docs, err := LoadDocuments(Operations())
	if err != nil {
		return nil, err
	}
	schema := r.Schema().Schema()
	parsed := make(map[string]*ast.QueryDocument, len(docs))
	for name, src := range docs {
		doc, errs := gqlparser.LoadQuery(schema, src)
		if errs != nil {
			return nil, fmt.Errorf("rest operation %s: %w", name, errs)
		}
		parsed[name] = doc
	}
	present := resolvers.ErrorPresenter(logger)
	routes := Table(r)
	direct := map[string]DirectFunc{
		"ValidateLicenseKey":       validateDirect(r, present, false),
		"PortalValidateLicenseKey": validateDirect(r, present, true),
		"IngestEvents":             ingestDirect(r, present),
		"GetMetrics":               metricsDirect(r, present),
	}
	exports := tillExports(r)
	exports["/v1/customers/export"] = upstreamCustomersExport(r)
	exports["/v1/orders/export"] = upstreamOrdersExport(r)
	exports["/v1/subscriptions/export"] = upstreamSubscriptionsExport(r)
	for i := range routes {
		if routes[i].Handler != nil {
			routes[i].Handler = resolvers.AuditOperation(routes[i].Method+" "+routes[i].Path, routes[i].Handler)
		}
		routes[i].Export = exports[routes[i].Path]
		routes[i].Direct = direct[routes[i].Operation]
		if routes[i].Operation == "IngestEvents" {
			routes[i].Stream = ingestStream
		}
	}
	return NewRouter(Config{
		Executor:     r.Executor(),
		Routes:       routes,
		Schema:       schema,
		Logger:       logger,
		Authenticate: func(h http.Handler) http.Handler { return authn(resolvers.AuditRequests("v1", h)) },
		PublicURL:    r.Issuer(),
		Guard: func(req *http.Request, route Route) *gqlerror.Error {
			if err := r.Authorize(req.Context(), parsed[route.Operation]); err != nil {
				return present(req.Context(), err)
			}
			return nil
		},
	})
}
