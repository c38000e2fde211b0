package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"till/internal/auth"
	"till/internal/reqinfo"
)

// httpMetrics counts requests and their latency by route pattern, and GraphQL operations by
// type and root field. Every label value comes from the route table or the schema, never from
// what a client may vary without bound (raw paths, operation names, sets of root fields), so
// no client can grow the series count.
type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	graphql  *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "till_http_requests_total",
			Help: "HTTP requests by method, route pattern and status."}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "till_http_request_duration_seconds",
			Help: "HTTP request latency by method and route pattern.", Buckets: prometheus.DefBuckets},
			[]string{"method", "route"}),
		graphql: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "till_graphql_operation_duration_seconds",
			Help: "GraphQL request latency by operation type and root field; an operation selecting several " +
				"root fields counts once under each. Type \"invalid\" (field \"none\") counts documents that did not validate.",
			Buckets: prometheus.DefBuckets}, []string{"type", "field"}),
	}
	reg.MustRegister(m.requests, m.latency, m.graphql)
	return m
}

// statusRecorder remembers the status a handler wrote, and whether it wrote anything.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status, s.wrote = code, true
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// middleware gives each request an id (echoed in X-Request-Id and carried by every log
// record of the request, see reqinfo), records its metrics, and writes one access log line
// naming the route pattern, the GraphQL operation, the principal and the path with its
// credentials redacted (loggedPath). A panic outside the layers that recover their own is
// logged with the request's id and answered 500.
func (m *httpMetrics) middleware(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ctx, info := reqinfo.New(r.Context(), reqinfo.RequestID(r.Header.Get(reqinfo.Header)))
			r = r.WithContext(ctx)
			w.Header().Set(reqinfo.Header, info.ID)
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler { // net/http's way to abort a response: not a fault
						panic(p)
					}
					logger.ErrorContext(ctx, "request panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					if !rec.wrote {
						http.Error(rec, "Internal Server Error", http.StatusInternalServerError)
					}
					rec.status = http.StatusInternalServerError
				}
				m.report(logger, r, info, rec.status, time.Since(start))
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

// report records a finished request's metrics and access log line.
func (m *httpMetrics) report(logger *slog.Logger, r *http.Request, info *reqinfo.Info, status int, elapsed time.Duration) {
	route := chi.RouteContext(r.Context()).RoutePattern()
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(r.Method, route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(r.Method, route).Observe(elapsed.Seconds())
	kind, org := info.Principal()
	attrs := []slog.Attr{slog.String("request_id", info.ID), slog.String("method", r.Method),
		slog.String("path", loggedPath(r)), slog.String("route", route), slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000), slog.String("principal", cmp.Or(kind, "none"))}
	if org != "" {
		attrs = append(attrs, slog.String("organization_id", org))
	}
	if op, ok := info.Operation(); ok {
		attrs = append(attrs, slog.String("operation", op.Name), slog.String("operation_type", cmp.Or(op.Type, "invalid")),
			slog.String("root_fields", strings.Join(op.RootFields, ",")))
		if op.Type == "" {
			m.graphql.WithLabelValues("invalid", "none").Observe(elapsed.Seconds())
		}
		for _, f := range op.RootFields {
			m.graphql.WithLabelValues(op.Type, f).Observe(elapsed.Seconds())
		}
	}
	// The line states the id itself, whatever handler the logger has, so it is logged without
	// the request's context, from which reqinfo.LogHandler would add it a second time.
	logger.LogAttrs(context.Background(), slog.LevelInfo, "request", attrs...)
}

// recordPrincipal wraps the bearer middleware so the access log learns who each request
// acts as: the principal's kind and, when it belongs to one organization, its id. A handler
// that answers refused tokens itself (auth.TokenRefuser, as /graphql does) stays one behind
// the wrapper, or the middleware would answer it with /v1's OAuth2 body.
func recordPrincipal(authn func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		rec := principalRecorder{next: next}
		if tr, ok := next.(auth.TokenRefuser); ok {
			return authn(refusingRecorder{principalRecorder: rec, TokenRefuser: tr})
		}
		return authn(rec)
	}
}

// principalRecorder notes the request's principal, then serves it.
type principalRecorder struct{ next http.Handler }

func (h principalRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := auth.FromContext(r.Context())
	org := ""
	if p.OrganizationID != uuid.Nil {
		org = p.OrganizationID.String()
	}
	reqinfo.From(r.Context()).SetPrincipal(p.Kind.String(), org)
	h.next.ServeHTTP(w, r)
}

// refusingRecorder is a principalRecorder in front of a handler that refuses tokens itself.
type refusingRecorder struct {
	principalRecorder
	auth.TokenRefuser
}
