package rest

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/rest/fastapi"
)

// router serves the route table; one per NewRouter call.
type router struct {
	routes []Route
	docs   Documents
	exec   Executor
	guard  func(*http.Request, Route) *gqlerror.Error
	logger *slog.Logger
	realm  string
	mux    *chi.Mux

	publicURL string // without a trailing slash; "" for relative redirects
}

// NewRouter builds the /v1 handler. Mount it at the root of the origin for
// /v1/ and /api/v1/ paths. From the outside in, a request meets: the
// Cache-Control default, the /api/v1 rewrite, the Polar-Version check, the
// 411/413 size guards, cfg.Authenticate, then routing (404, 405, Starlette's
// 307 trailing-slash redirect) and the route itself.
//
// The table is checked against the documents (and the documents against
// cfg.Schema when set), so a broken row fails at startup, not per request.
func NewRouter(cfg Config) (http.Handler, error) {
	if cfg.Executor == nil {
		return nil, errors.New("rest: Config.Executor is required")
	}
	fsys := cfg.Documents
	if fsys == nil {
		fsys = Operations()
	}
	docs, err := LoadDocuments(fsys)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	if cfg.Schema != nil {
		if err := docs.Validate(cfg.Schema); err != nil {
			return nil, fmt.Errorf("rest: %w", err)
		}
	}
	if err := checkRoutes(cfg.Routes, docs); err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	rt := &router{
		routes: cfg.Routes,
		docs:   docs,
		exec:   cfg.Executor,
		guard:  cfg.Guard,
		logger: cfg.Logger,
		realm:  cfg.Realm,
		mux:    chi.NewMux(),

		publicURL: strings.TrimRight(cfg.PublicURL, "/"),
	}
	if rt.logger == nil {
		rt.logger = slog.New(slog.DiscardHandler)
	}
	if rt.realm == "" {
		rt.realm = "till"
	}
	for _, route := range cfg.Routes {
		h := rt.serve(route)
		rt.mux.Method(route.Method, route.Path, h)
		if route.Method == http.MethodGet {
			rt.mux.Method(http.MethodHead, route.Path, h)
		}
	}
	rt.mux.NotFound(rt.fallback)
	rt.mux.MethodNotAllowed(rt.fallback)

	var h http.Handler = routeOwnPath(rt.mux)
	if cfg.Authenticate != nil {
		h = cfg.Authenticate(h)
	}
	versions := cfg.Versions
	if versions == nil {
		versions = []string{DefaultVersion}
	}
	return cacheControl(rewriteAPIPrefix(versionCheck(versions, sizeGuard(h)))), nil
}

// routeOwnPath makes the mux route on the request's URL even when /v1 is mounted in
// another chi router (cmd/till mounts it at "/"). Such a router shares its route context,
// whose RoutePath it computed before rewriteAPIPrefix ran, so /api/v1/... would be routed
// as written and answered 405 by the fallback. Clearing RoutePath keeps the shared context
// (the outer router still sees the matched pattern, for metrics) but routes on r.URL.
func routeOwnPath(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rctx := chi.RouteContext(r.Context()); rctx != nil {
			rctx.RoutePath = ""
		}
		mux.ServeHTTP(w, r)
	})
}

// routingPath is the path chi matches against.
func routingPath(u *url.URL) string {
	if u.RawPath != "" {
		return u.RawPath
	}
	return u.Path
}

// matches reports whether route's pattern matches path (any method).
func (rt *router) matches(route Route, path string) bool {
	return rt.mux.Find(chi.NewRouteContext(), route.Method, path) == route.Path
}

// fallback answers requests no route took, as Starlette's router does: a
// path that some route matches is 405 with that first route's methods in
// Allow; otherwise, when the other trailing-slash spelling matches a route,
// a 307 to it keeping the query; otherwise 404.
func (rt *router) fallback(w http.ResponseWriter, r *http.Request) {
	path := routingPath(r.URL)
	for _, route := range rt.routes {
		if rt.matches(route, path) {
			allow := route.Method
			if route.Method == http.MethodGet {
				allow += ", " + http.MethodHead
			}
			w.Header().Set("Allow", allow)
			writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
	}
	if path != "/" {
		other := path + "/"
		if strings.HasSuffix(path, "/") {
			other = strings.TrimRight(path, "/")
		}
		for _, route := range rt.routes {
			if other != "" && rt.matches(route, other) {
				rt.redirect(w, r, other)
				return
			}
		}
	}
	writeDetail(w, http.StatusNotFound, "Not Found")
}

// redirect is Starlette's RedirectResponse (307) to the other spelling of the path. Upstream
// builds an absolute URL from the request's Host header, so anyone who can set that header
// (a shared cache in front, a proxy passing it through) chooses where clients are sent; the
// target here is on the configured public URL, or relative when none is configured.
func (rt *router) redirect(w http.ResponseWriter, r *http.Request, path string) {
	target := rt.publicURL + path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", target)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusTemporaryRedirect)
}

// serve is one route's handler.
func (rt *router) serve(route Route) http.Handler {
	if route.Handler != nil {
		return route.Handler
	}
	document := rt.docs[route.Operation]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pathValues := map[string]string{}
		for _, p := range route.Params {
			if p.In != fastapi.InPath {
				continue
			}
			v := fastapi.PathValue(chi.URLParam(r, p.Name), r.URL.RawPath != "")
			if v == "" { // Starlette's {param} needs one character
				writeDetail(w, http.StatusNotFound, "Not Found")
				return
			}
			pathValues[p.Name] = v
		}

		// FastAPI reads and parses the body before it resolves any
		// dependency: a JSON syntax error beats authentication.
		var body fastapi.ParsedBody
		if route.Body != nil {
			raw, err := io.ReadAll(r.Body)
			if err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					writeBodyTooLarge(w)
				} else {
					writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
				}
				return
			}
			var jsonErrs []fastapi.ValidationError
			var stream *fastapi.Stream
			if route.Direct != nil {
				stream = route.Stream
			}
			body, jsonErrs, err = fastapi.ReadBody(route.Body, stream, r.Header.Get("Content-Type"), raw)
			if err != nil {
				writeDetail(w, http.StatusBadRequest, "There was an error parsing the body")
				return
			}
			if len(jsonErrs) > 0 {
				writeValidation(w, http.StatusUnprocessableEntity, "RequestValidationError", jsonErrs)
				return
			}
		}

		if rt.guard != nil {
			if gerr := rt.guard(r, route); gerr != nil {
				rt.writeGraphQLErrors(r.Context(), w, route, gqlerror.List{gerr})
				return
			}
		}

		vars := map[string]any{}
		errs := fastapi.DecodeParams(route.Params, func(name string) string { return pathValues[name] }, r.URL.RawQuery, vars)
		if route.Body != nil {
			v, berrs := route.Body.Validate(body)
			errs = append(errs, berrs...)
			if body.Present() {
				vars[route.Body.Var] = v
			}
		}
		if len(errs) > 0 {
			writeValidation(w, http.StatusUnprocessableEntity, "RequestValidationError", errs)
			return
		}
		nestParams(vars)
		if route.File != "" {
			rt.serveExport(w, r, route, vars)
			return
		}
		if route.Direct != nil {
			defer func() { // as the executor's recover does for operations: a 500, not a dropped connection
				if p := recover(); p != nil {
					rt.logger.ErrorContext(r.Context(), "rest: route panicked", "operation", route.Operation, "panic", fmt.Sprint(p))
					writeInternal(w)
				}
			}()
			body, gerr := route.Direct(r.Context(), vars)
			if gerr != nil {
				rt.writeGraphQLErrors(r.Context(), w, route, gqlerror.List{gerr})
				return
			}
			rt.writeBody(r.Context(), w, route, body)
			return
		}
		rt.writeResult(r.Context(), w, route, rt.exec.Execute(r.Context(), document, route.Operation, vars))
	})
}

// nestParams moves the values of parameters whose variable is a dotted path into the object
// that path names ("input.customerId" becomes the customerId of $input), so a mutation takes
// one input object even when its route carries an id in the path.
func nestParams(vars map[string]any) {
	for name, v := range vars {
		segs := strings.Split(name, ".")
		if len(segs) < 2 {
			continue
		}
		delete(vars, name)
		obj := vars
		for _, seg := range segs[:len(segs)-1] {
			next, ok := obj[seg].(map[string]any)
			if !ok {
				next = map[string]any{}
				obj[seg] = next
			}
			obj = next
		}
		obj[segs[len(segs)-1]] = v
	}
}
