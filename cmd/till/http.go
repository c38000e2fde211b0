package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"till/internal/auth"
	"till/internal/licensecert"
	"till/resolvers"
	"till/rest"
)

// newHTTPHandler mounts every endpoint: /graphql, /v1, the sign-in endpoints, health, and
// metrics when TILL_METRICS_TOKEN guards them. Credentials are resolved through creds (the
// cache over r) with the server secret: bearer tokens everywhere, and on /graphql also the
// browser session cookie. The CORS policy (newCORS) answers preflights before any route, so
// they are logged and counted but never authenticated or rate limited. It also returns the
// bare metrics handler, for TILL_METRICS_ADDR.
func newHTTPHandler(cfg config, r *resolvers.Resolver, creds auth.Resolver, secret []byte, db *database, blobs http.Handler,
	logger *slog.Logger) (http.Handler, http.Handler, error) {
	authn := recordPrincipal(auth.Middleware(creds, secret))
	browserAuthn := recordPrincipal(auth.Middleware(creds, secret, auth.WithBrowserSessions(r.Browser())))
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(db.DB.DB, "till"))
	metrics := newHTTPMetrics(reg)

	v1, err := rest.New(r, authn, logger)
	if err != nil {
		return nil, nil, err
	}
	mux := chi.NewRouter()
	mux.Use(metrics.middleware(logger), newCORS(cfg.CORSOrigins))
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
	graphqlHandler := browserAuthn(r.Handler(resolvers.WithSubscriptions(creds)))
	mux.Handle("/graphql", graphqlHandler)
	mux.Handle("/graphql/assets/*", graphqlHandler)
	mux.Handle(resolvers.SchemaSDLPath, r.SchemaHandler())
	mux.Handle("/.well-known/till/organizations/*", licensecert.JWKSHandler(r.PublishedLicenseKeys))
	mux.Handle(rest.OpenIDConfigurationPath, rest.OpenIDConfigurationHandler(r))
	mux.Handle(rest.JWKSPath, rest.JWKSHandler(r))
	mux.Handle(resolvers.DownloadsPath+"{token}", r.DownloadHandler())
	mux.Handle(resolvers.TestPaymentPath+"{client_secret}", r.TestPaymentHandler())
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
