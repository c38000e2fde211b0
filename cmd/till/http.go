package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"till/internal/licensecert"
	"till/resolvers"
	"till/rest"
)

// httpMetrics counts requests and their latency by route pattern (never by raw path, so ids
// do not explode the label space).
type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "till_http_requests_total",
			Help: "HTTP requests by method, route pattern and status."}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "till_http_request_duration_seconds",
			Help: "HTTP request latency by method and route pattern.", Buckets: prometheus.DefBuckets},
			[]string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// middleware records metrics and an access log line per request, naming the route pattern
// and the path with its credentials redacted (loggedPath).
func (m *httpMetrics) middleware(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(rec, r)
			route := chi.RouteContext(r.Context()).RoutePattern()
			if route == "" {
				route = "unmatched"
			}
			elapsed := time.Since(start)
			m.requests.WithLabelValues(r.Method, route, strconv.Itoa(rec.status)).Inc()
			m.latency.WithLabelValues(r.Method, route).Observe(elapsed.Seconds())
			logger.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("method", r.Method),
				slog.String("path", loggedPath(r)), slog.String("route", route), slog.Int("status", rec.status),
				slog.Duration("duration", elapsed))
		})
	}
}

// newHTTPHandler mounts every endpoint: /graphql (and its SDL), /v1, health, and metrics when
// TILL_METRICS_TOKEN guards them. It also returns the bare metrics handler, for
// TILL_METRICS_ADDR.
func newHTTPHandler(cfg config, r *resolvers.Resolver, authn func(http.Handler) http.Handler, db *database, blobs http.Handler,
	logger *slog.Logger) (http.Handler, http.Handler, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(db.DB.DB, "till"))
	metrics := newHTTPMetrics(reg)

	v1, err := rest.New(r, authn, logger)
	if err != nil {
		return nil, nil, err
	}
	mux := chi.NewRouter()
	mux.Use(metrics.middleware(logger))
	mux.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { writePlain(w, http.StatusOK, "ok") })
	mux.Get("/readyz", func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
		defer cancel()
		if err := db.DB.PingContext(ctx); err != nil {
			writePlain(w, http.StatusServiceUnavailable, "database unavailable")
			return
		}
		writePlain(w, http.StatusOK, "ready")
	})
	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if cfg.MetricsToken != "" {
		mux.Handle("/metrics", metricsGuard(cfg.MetricsToken, metricsHandler))
	}
	graphqlHandler := authn(r.Handler())
	mux.Handle("/graphql", graphqlHandler)
	mux.Handle("/graphql/assets/*", graphqlHandler)
	mux.Handle(resolvers.SchemaSDLPath, r.SchemaHandler())
	mux.Handle("/.well-known/till/organizations/*", licensecert.JWKSHandler(r.PublishedLicenseKeys))
	mux.Handle(rest.OpenIDConfigurationPath, rest.OpenIDConfigurationHandler(r))
	mux.Handle(rest.JWKSPath, rest.JWKSHandler(r))
	mux.Handle(resolvers.DownloadsPath+"{token}", r.DownloadHandler())
	mux.Handle(rest.MediaPath+"*", rest.MediaHandler(r))
	if blobs != nil {
		mux.Handle(blobURLPath+"*", blobs)
	}
	mux.Mount("/", v1)
	withClientIP, err := clientIPs(cfg)
	if err != nil {
		return nil, nil, err
	}
	return withClientIP(mux), metricsHandler, nil
}

func writePlain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body + "\n"))
}
