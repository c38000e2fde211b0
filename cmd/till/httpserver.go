package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"till/internal/connlimit"
)

// maxHeaderWait bounds how long a request's headers may take, within TILL_HTTP_READ_TIMEOUT.
const maxHeaderWait = 10 * time.Second

// newHTTPServer is the public server. Its deadlines bound what a stalled client holds: the
// read timeout covers a request's headers and body, the write timeout its answer, the idle
// timeout a kept-alive connection between requests. The local blob store's part uploads and
// downloads move their own deadlines further, by transferTime, once their signature checks.
func newHTTPServer(ctx context.Context, cfg config, handler http.Handler) *http.Server {
	return &http.Server{Handler: handler,
		ReadHeaderTimeout: min(maxHeaderWait, cfg.HTTPReadTimeout), ReadTimeout: cfg.HTTPReadTimeout,
		WriteTimeout: cfg.HTTPWriteTimeout, IdleTimeout: cfg.HTTPIdleTimeout,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
}

// listen opens the public listener with the per-client connection cap.
func listen(cfg config) (net.Listener, error) {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	return connlimit.New(ln, cfg.MaxConnsPerIP), nil
}

// transferTime is how long moving n bytes may take: the ordinary deadline plus n at
// TILL_HTTP_MIN_RATE, computed in floating point so 5 GiB parts cannot overflow.
func (c config) transferTime(n int64) time.Duration {
	base := max(c.HTTPReadTimeout, c.HTTPWriteTimeout)
	return base + time.Duration(float64(max(n, 0))/float64(c.HTTPMinRate)*float64(time.Second))
}

// metricsGuard serves the metrics on the public listener only to requests bearing
// token (TILL_METRICS_TOKEN), compared in constant time.
func metricsGuard(token string, metrics http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="till metrics"`)
			writePlain(w, http.StatusUnauthorized, "metrics need TILL_METRICS_TOKEN as a bearer token")
			return
		}
		metrics.ServeHTTP(w, r)
	})
}

// serveMetrics serves /metrics on TILL_METRICS_ADDR, when set, until stop is called, with the
// Go profiler under /debug/pprof/: that listener is for the operator's network only, where
// profiling a slow server in place is worth more than keeping the endpoints hidden.
func serveMetrics(ctx context.Context, cfg config, metrics http.Handler, logger *slog.Logger) (stop func(), err error) {
	if cfg.MetricsAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("TILL_METRICS_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := newHTTPServer(ctx, cfg, mux)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener stopped", "err", err)
		}
	}()
	return func() { _ = srv.Close() }, nil
}
