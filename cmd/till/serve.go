package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"till/internal/auth"
	"till/internal/reqinfo"
	"till/internal/wake"
	"till/storage"
)

// customerCacheLimit bounds the customers license validations keep: one per paying
// customer with keys in use is plenty, and the cache empties itself rather than grow.
const customerCacheLimit = 50_000

// serveGCPercent is serve's garbage-collection target when GOGC is unset. A request
// allocates short-lived garbage around a small live heap, so the default of 100 collects
// very often: on license validation, 400 cut the server's CPU per request by about a sixth
// for a few tens of megabytes more memory.
const serveGCPercent = 400

// shutdownGrace bounds how long in-flight requests may take after Ctrl-C.
const shutdownGrace = 15 * time.Second

func serve(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	fs := newFlags("serve", "Runs the GraphQL API, the /v1 layer and the workers until interrupted.", stdout)
	if ok, err := parseFlags(fs, args); !ok {
		return err
	}
	logger := newLogger(cfg.LogLevel, os.Stderr)
	if cfg.GOGC == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	cfg.print(stdout)
	started := time.Now()
	secret, err := cfg.secret()
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, logger, false)
	if err != nil {
		return err
	}
	defer db.close()
	if err := bootstrap(ctx, cfg, db, secret, stdout); err != nil {
		return err
	}
	a, err := newApp(cfg, db, secret, logger)
	if err != nil {
		return err
	}
	listener := wake.New(db.dsn, logger)
	handler, metrics, err := newHTTPHandler(cfg, a.r, credentialCache(cfg, a.r, listener), secret, db, a.blobHandler, logger)
	if err != nil {
		return err
	}
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	listener.OnPayload(storage.LiveChannel, a.live.Notify)
	listener.OnPayload(storage.UsageChannel, a.live.NotifyUsage)
	work := startWork(workCtx, cfg, a, listener, db, logger)
	work.run(workCtx, a.live.Run)
	defer func() {
		stopWork()
		work.wait()
	}()
	ln, err := listen(cfg)
	if err != nil {
		return err
	}
	stopMetrics, err := serveMetrics(ctx, cfg, metrics, logger)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopMetrics()
	srv := newHTTPServer(ctx, cfg, handler)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("till ready", "addr", ln.Addr().String(), "startup", time.Since(started).String())
	fmt.Fprintf(stdout, "Till is ready in %s\n  GraphQL:  %s/graphql (GraphiQL in a browser)\n  REST:     %s/v1/\n",
		time.Since(started).Round(time.Millisecond), cfg.PublicURL, cfg.PublicURL)
	signInNote(cfg, stdout)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// credentialCache keeps resolved credentials for cfg.TokenCacheTTL. Sessions are kept only
// while listener (not yet running: startWork runs it) hears the notifications that announce
// their changes, and are all forgotten on each one and when it stops hearing them. Tokens
// are kept for the ttl in any case, and forgotten early on each notification of a revoked
// token or a deleted organization.
func credentialCache(cfg config, r auth.Resolver, listener *wake.Listener) *auth.Cache {
	c := auth.NewCache(r, cfg.TokenCacheTTL, time.Now, listener)
	listener.On(storage.SessionsChannel, c.ForgetSessions)
	listener.On(storage.CredentialsChannel, c.ForgetTokens)
	listener.OnLoss(c.ForgetSessions)
	return c
}

// bootstrap creates the demo organization and an all-scope token on a fresh installation
// and prints the token once.
func bootstrap(ctx context.Context, cfg config, db *database, secret []byte, stdout io.Writer) error {
	n, err := storage.CountOrganizations(ctx, db.DB)
	if err != nil || n > 0 {
		return err
	}
	o, err := storage.CreateOrganization(ctx, db.DB, "Demo", "demo")
	if err != nil {
		return err
	}
	set, err := auth.ParseScopes("all")
	if err != nil {
		return err
	}
	tok, _, err := createToken(ctx, db.DB, secret, o.ID, set, "demo token created at first start", nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, `
First start: created the demo organization (slug "demo") and an organization access token with
every scope. It is shown only now; keep it:

  %s

Try:
  curl -s %s/graphql -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \
       -d '{"query":"{ organization { id name slug } }"}'

For a realistic dataset (products, customers, orders, subscriptions in several states, seats,
license keys) and tokens to try every endpoint with, run: ./bin/till demo

`, tok, cfg.PublicURL, tok)
	return nil
}

// newLogger builds the JSON logger at the configured level. Records logged with a request's
// context carry its request id.
func newLogger(level string, w io.Writer) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(reqinfo.LogHandler{Handler: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})})
}
