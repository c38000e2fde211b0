package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"till/internal/oidclogin"

	env "github.com/caarlos0/env/v11"
)

// config is Till's configuration, read from environment variables with defaults.
type config struct {
	Addr        string `env:"TILL_ADDR" envDefault:"127.0.0.1:8000"`
	DatabaseURL string `env:"DATABASE_URL"`
	DataDir     string `env:"TILL_DATA_DIR" envDefault:".till"`
	Secret      string `env:"TILL_SECRET"`
	PublicURL   string `env:"TILL_PUBLIC_URL"`
	PGBinDir    string `env:"TILL_PG_BINDIR"`
	PGPort      int    `env:"TILL_PG_PORT" envDefault:"0"`
	LogLevel    string `env:"TILL_LOG_LEVEL" envDefault:"info"`
	MaxConns    int    `env:"TILL_DB_MAX_CONNS" envDefault:"20"`
	// StatementCache is how many prepared statements each database connection keeps; 0
	// prepares nothing, for a pooler in transaction mode (PgBouncer) between Till and
	// PostgreSQL, where a statement prepared on one server connection is unknown on the next.
	StatementCache int `env:"TILL_DB_STATEMENT_CACHE" envDefault:"256"`

	// TokenCacheTTL is how long a resolved credential is reused without a lookup. Tokens
	// and sessions are forgotten as soon as a change to them is announced (see
	// credentialCache); should announcements stop, a revoked token works at most this long
	// in a process that saw it, and sessions are not kept.
	TokenCacheTTL time.Duration `env:"TILL_TOKEN_CACHE_TTL" envDefault:"5s"`
	// CustomerCacheTTL is how long license validations reuse a key's customer without a
	// read; another Till process's change to the customer shows within it (this process's
	// own changes show at once).
	CustomerCacheTTL time.Duration `env:"TILL_CUSTOMER_CACHE_TTL" envDefault:"5s"`
	// GOGC is the Go runtime's own setting, read here only to tell whether the operator
	// chose one; serve picks its own default otherwise.
	GOGC string `env:"GOGC"`

	// The public license endpoints' limits: requests per second per client IP (upstream:
	// 3, blocked 60 s) and per license key; 0 turns a limit off.
	LicenseRatePerIP    int           `env:"TILL_LICENSE_RATE_PER_IP" envDefault:"3"`
	LicenseRateIPBlock  time.Duration `env:"TILL_LICENSE_RATE_IP_BLOCK" envDefault:"60s"`
	LicenseRatePerKey   int           `env:"TILL_LICENSE_RATE_PER_KEY" envDefault:"30"`
	LicenseRateKeyBlock time.Duration `env:"TILL_LICENSE_RATE_KEY_BLOCK" envDefault:"10s"`
	// CORSOrigins are the browser origins (scheme://host[:port], comma-separated) whose
	// pages may call /graphql and every /v1 route; see newCORS for what other origins may.
	CORSOrigins []string `env:"TILL_CORS_ORIGINS" envSeparator:","`
	// TrustedProxies are the CIDRs whose X-Forwarded-For names the client (comma-separated).
	TrustedProxies []string `env:"TILL_TRUSTED_PROXIES" envSeparator:","`
	// GraphQLCostBudget is each principal's GraphQL cost points per minute (an anonymous
	// caller's per client IP); 0 turns the budget off. One operation never costs more than
	// 25,000 whatever the budget.
	GraphQLCostBudget int `env:"TILL_GRAPHQL_COST_BUDGET" envDefault:"250000"`
	// LiveEventBudget is each credential's points per second of events delivered to its
	// GraphQL subscriptions in one process, each event costing its subscription's price;
	// a stream over it waits and catches up. 0 turns it off.
	LiveEventBudget int `env:"TILL_LIVE_EVENT_BUDGET" envDefault:"10000"`

	// PaymentProcessor names who takes payments: "test", the built-in processor that plays
	// Stripe's test cards with no network, or "stripe", the Stripe account whose API key
	// and webhook signing secret follow (both required then, and never printed).
	PaymentProcessor    string `env:"TILL_PAYMENT_PROCESSOR" envDefault:"test"`
	StripeSecretKey     string `env:"STRIPE_SECRET_KEY"`
	StripeWebhookSecret string `env:"STRIPE_WEBHOOK_SECRET"`
	// StripeAPIURL replaces https://api.stripe.com, for stripe-mock or a proxy in front of
	// Stripe; empty talks to Stripe.
	StripeAPIURL string `env:"STRIPE_API_URL"`

	// WebhookTimeout bounds each delivery attempt (upstream: 10 s).
	WebhookTimeout time.Duration `env:"TILL_WEBHOOK_TIMEOUT" envDefault:"10s"`
	// WebhookConcurrency is how many deliveries may be in flight at once, each to a different
	// endpoint (an endpoint receives its events one at a time, in order).
	WebhookConcurrency int `env:"TILL_WEBHOOK_CONCURRENCY" envDefault:"32"`
	// WebhookAllowPrivate lets deliveries reach loopback and private addresses, for receivers
	// on the operator's own network; off, such addresses are refused at connect time.
	WebhookAllowPrivate bool `env:"TILL_WEBHOOK_ALLOW_PRIVATE" envDefault:"false"`

	// BlobDir holds stored documents (invoices, receipts) when no bucket is configured;
	// empty means <TILL_DATA_DIR>/blobs.
	BlobDir string `env:"TILL_BLOB_DIR"`
	// An S3-compatible bucket replaces the directory when S3Bucket is set.
	S3Endpoint  string `env:"TILL_S3_ENDPOINT"`
	S3Region    string `env:"TILL_S3_REGION"`
	S3Bucket    string `env:"TILL_S3_BUCKET"`
	S3AccessKey string `env:"TILL_S3_ACCESS_KEY"`
	S3SecretKey string `env:"TILL_S3_SECRET_KEY"`
	S3UseSSL    bool   `env:"TILL_S3_USE_SSL" envDefault:"true"`
	S3PathStyle bool   `env:"TILL_S3_PATH_STYLE" envDefault:"false"`

	// FilesMaxPartSize caps one part of a file upload in bytes; 0 means S3's 5 GiB.
	FilesMaxPartSize int64 `env:"TILL_FILES_MAX_PART_SIZE" envDefault:"0"`
	// FilesPresignTTL is how long part upload links work (upstream: 10 minutes).
	FilesPresignTTL time.Duration `env:"TILL_FILES_PRESIGN_TTL" envDefault:"10m"`

	// OIDCKeyRotation is how long an OpenID signing key signs id tokens before a new one
	// replaces it.
	OIDCKeyRotation time.Duration `env:"TILL_OIDC_KEY_ROTATION" envDefault:"720h"`
	// AuditRetention is how long the audit log keeps a change (a year by default); the
	// hourly upkeep deletes older ones. 0 keeps every change forever.
	AuditRetention time.Duration `env:"TILL_AUDIT_RETENTION" envDefault:"8760h"`

	// HTTPReadTimeout bounds how long a request's headers and body may take to arrive, so a
	// client that stalls mid-body lets go of its connection; part uploads get longer (see
	// HTTPMinRate). HTTPWriteTimeout bounds writing an answer, HTTPIdleTimeout a kept-alive
	// connection waiting for its next request.
	HTTPReadTimeout  time.Duration `env:"TILL_HTTP_READ_TIMEOUT" envDefault:"30s"`
	HTTPWriteTimeout time.Duration `env:"TILL_HTTP_WRITE_TIMEOUT" envDefault:"60s"`
	HTTPIdleTimeout  time.Duration `env:"TILL_HTTP_IDLE_TIMEOUT" envDefault:"120s"`
	// HTTPMinRate is the slowest transfer, in bytes per second, a part upload or a download of
	// the local blob store is allowed: such a transfer of n bytes gets the ordinary deadline
	// plus n/HTTPMinRate, enough for a 5 GiB part over a slow line yet finite.
	HTTPMinRate int64 `env:"TILL_HTTP_MIN_RATE" envDefault:"131072"`
	// MaxConnsPerIP caps the connections one client address (an IPv6 /64) holds open at once;
	// further ones are closed as soon as they are accepted. 0 turns the cap off.
	MaxConnsPerIP int `env:"TILL_MAX_CONNS_PER_IP" envDefault:"256"`

	// SMTPURL is the mail server that delivers sign-in codes: smtp://user:pass@host:587
	// (STARTTLS required) or smtps://user:pass@host:465 (TLS from the start). Empty, mail
	// goes to the log and to the local mailbox file (Mailbox).
	SMTPURL string `env:"TILL_SMTP_URL"`
	// MailFrom is the sender of Till's mail; empty is till@ the public URL's host.
	MailFrom string `env:"TILL_MAIL_FROM"`
	// Mailbox is the mbox file mail is appended to when no SMTP server is set; empty is
	// <TILL_DATA_DIR>/mailbox.
	Mailbox string `env:"TILL_MAILBOX"`
	// Sign-in rate limits: requests for codes, and redemptions of codes and links, each
	// counted per email and per client address within a window.
	SignInRatePerEmail int           `env:"TILL_SIGNIN_RATE_PER_EMAIL" envDefault:"6"`
	SignInRatePerIP    int           `env:"TILL_SIGNIN_RATE_PER_IP" envDefault:"30"`
	SignInRateWindow   time.Duration `env:"TILL_SIGNIN_RATE_WINDOW" envDefault:"15m"`
	// OIDCProviders are the identity providers users may sign in with: a JSON array of
	// {"name", "display_name", "issuer", "client_id", "client_secret", "scopes"}. Each
	// provider is given the redirect URI <TILL_PUBLIC_URL>/auth/oidc/<name>/callback.
	OIDCProviders string `env:"TILL_OIDC_PROVIDERS"`

	// MetricsAddr, when set, serves /metrics on a listener of its own, for a network only
	// the operator reaches. MetricsToken, when set, also serves it on the public listener to
	// requests bearing that token. Neither set: no metrics are served, since they reveal
	// traffic, routes and resource use to anyone.
	MetricsAddr  string `env:"TILL_METRICS_ADDR"`
	MetricsToken string `env:"TILL_METRICS_TOKEN"`
}

// loadConfig reads the configuration through getenv so tests need not touch the process
// environment.
func loadConfig(getenv func(string) string) (config, error) {
	vars := map[string]string{}
	for _, k := range configVariables() {
		if v := getenv(k); v != "" {
			vars[k] = v
		}
	}
	var c config
	err := env.ParseWithOptions(&c, env.Options{Environment: vars})
	if err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	if c.LiveEventBudget < 0 {
		return c, errors.New("configuration: TILL_LIVE_EVENT_BUDGET cannot be negative (0 turns it off)")
	}
	if c.AuditRetention < 0 {
		return c, errors.New("configuration: TILL_AUDIT_RETENTION cannot be negative (0 keeps the audit log forever)")
	}
	if c.HTTPReadTimeout <= 0 || c.HTTPWriteTimeout <= 0 || c.HTTPIdleTimeout <= 0 || c.HTTPMinRate <= 0 {
		return c, errors.New("configuration: TILL_HTTP_READ_TIMEOUT, TILL_HTTP_WRITE_TIMEOUT, TILL_HTTP_IDLE_TIMEOUT " +
			"and TILL_HTTP_MIN_RATE must be positive")
	}
	if c.CORSOrigins, err = parseCORSOrigins(c.CORSOrigins); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	}
	if err := c.checkPaymentProcessor(); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if abs, err := filepath.Abs(c.DataDir); err == nil {
		c.DataDir = abs
	}
	if err := c.checkMail(); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	if _, err := oidclogin.ParseProviders(c.OIDCProviders); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}

// configVariables names every variable config reads, from its env tags, so a new field can
// never be left out of what loadConfig passes to the parser.
func configVariables() []string {
	t := reflect.TypeFor[config]()
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if name := t.Field(i).Tag.Get("env"); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// secret returns TILL_SECRET, or a random secret kept in the data directory so token hashes
// stay valid across restarts without any set-up.
func (c config) secret() ([]byte, error) {
	if c.Secret != "" {
		return []byte(c.Secret), nil
	}
	path := filepath.Join(c.DataDir, "secret")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return []byte(strings.TrimSpace(string(b))), nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return nil, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	s := hex.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return []byte(s), nil
}

// print writes the effective configuration with secrets masked.
func (c config) print(w io.Writer) {
	db := "embedded (" + filepath.Join(c.DataDir, "pg") + ")"
	if c.DatabaseURL != "" {
		db = maskURL(c.DatabaseURL)
	}
	secret := "generated, kept in " + filepath.Join(c.DataDir, "secret")
	if c.Secret != "" {
		secret = "set (" + fmt.Sprint(len(c.Secret)) + " characters)"
	}
	fmt.Fprintf(w, "configuration:\n  TILL_ADDR=%s\n  TILL_PUBLIC_URL=%s\n  DATABASE_URL=%s\n  TILL_DATA_DIR=%s\n  TILL_SECRET=%s\n  TILL_PG_PORT=%d\n  TILL_DB_MAX_CONNS=%d\n  TILL_DB_STATEMENT_CACHE=%d\n  TILL_LOG_LEVEL=%s\n",
		c.Addr, c.PublicURL, db, c.DataDir, secret, c.PGPort, c.MaxConns, c.StatementCache, c.LogLevel)
	fmt.Fprintf(w, "  TILL_TOKEN_CACHE_TTL=%s\n  TILL_CUSTOMER_CACHE_TTL=%s\n", c.TokenCacheTTL, c.CustomerCacheTTL)
	fmt.Fprintf(w, "  TILL_LICENSE_RATE_PER_IP=%d (block %s)\n  TILL_LICENSE_RATE_PER_KEY=%d (block %s)\n  TILL_TRUSTED_PROXIES=%s\n",
		c.LicenseRatePerIP, c.LicenseRateIPBlock, c.LicenseRatePerKey, c.LicenseRateKeyBlock, strings.Join(c.TrustedProxies, ","))
	fmt.Fprintf(w, "  TILL_GRAPHQL_COST_BUDGET=%d per minute\n  TILL_LIVE_EVENT_BUDGET=%d per second\n  TILL_CORS_ORIGINS=%s\n",
		c.GraphQLCostBudget, c.LiveEventBudget, strings.Join(c.CORSOrigins, ","))
	fmt.Fprintf(w, "  TILL_PAYMENT_PROCESSOR=%s\n", c.paymentSummary())
	fmt.Fprintf(w, "  TILL_WEBHOOK_TIMEOUT=%s\n  TILL_WEBHOOK_CONCURRENCY=%d\n  TILL_WEBHOOK_ALLOW_PRIVATE=%t\n",
		c.WebhookTimeout, c.WebhookConcurrency, c.WebhookAllowPrivate)
	if c.S3Bucket != "" {
		fmt.Fprintf(w, "  TILL_S3_ENDPOINT=%s\n  TILL_S3_BUCKET=%s\n  TILL_S3_ACCESS_KEY=%s\n  TILL_S3_SECRET_KEY=(set: %t)\n",
			c.S3Endpoint, c.S3Bucket, c.S3AccessKey, c.S3SecretKey != "")
	} else {
		dir := c.BlobDir
		if dir == "" {
			dir = filepath.Join(c.DataDir, "blobs")
		}
		fmt.Fprintf(w, "  TILL_BLOB_DIR=%s\n", dir)
	}
	fmt.Fprintf(w, "  TILL_FILES_MAX_PART_SIZE=%d\n  TILL_FILES_PRESIGN_TTL=%s\n  TILL_OIDC_KEY_ROTATION=%s\n",
		c.FilesMaxPartSize, c.FilesPresignTTL, c.OIDCKeyRotation)
	fmt.Fprintf(w, "  TILL_AUDIT_RETENTION=%s\n", c.auditRetentionSummary())
	fmt.Fprintf(w, "  TILL_HTTP_READ_TIMEOUT=%s\n  TILL_HTTP_WRITE_TIMEOUT=%s\n  TILL_HTTP_IDLE_TIMEOUT=%s\n  TILL_HTTP_MIN_RATE=%d\n  TILL_MAX_CONNS_PER_IP=%d\n",
		c.HTTPReadTimeout, c.HTTPWriteTimeout, c.HTTPIdleTimeout, c.HTTPMinRate, c.MaxConnsPerIP)
	fmt.Fprintf(w, "  TILL_METRICS_ADDR=%s\n  TILL_METRICS_TOKEN=(set: %t)\n", c.MetricsAddr, c.MetricsToken != "")
	c.printMail(w)
	c.printOIDCLogin(w)
}

// auditRetentionSummary says how long the audit log keeps a change.
func (c config) auditRetentionSummary() string {
	if c.AuditRetention == 0 {
		return "0 (kept forever)"
	}
	return c.AuditRetention.String()
}

// maskURL hides the password of a database URL.
func maskURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if strings.Contains(s, "password=") {
			return "(key/value DSN, password hidden)"
		}
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
