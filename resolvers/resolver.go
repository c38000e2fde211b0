// Package resolvers is Till's application layer: the GraphQL resolvers (short, generated
// follow-schema files), the use cases that hold every rule, per-request dataloaders and the
// error vocabulary shared by GraphQL and /v1.
package resolvers

//go:generate sh -c "cd .. && go tool gqlgen generate && go run ./internal/gqlexec/rewrite graph"

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/internal/blob"
	"till/internal/mail"
	"till/internal/oidclogin"
	"till/internal/payment"
	"till/internal/ratelimit"
	"till/storage"
)

// Deps is what the application takes from outside: the database, the server secret, the
// clock and the collaborators that cmd/till chooses by configuration (payment processor,
// blob store, webhook sender) or that tests replace. Zero fields take the defaults New
// documents, so a schema-only resolver is New(Deps{}).
type Deps struct {
	DB *sqlx.DB
	// Analytics is the pool of the metrics reads over the rollups (storage.OpenAnalytics,
	// which plans them generically); nil reads them from DB.
	Analytics *sqlx.DB
	Secret    []byte
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
	// PortalURL is the base of customer-portal links, e.g. https://till.example.com.
	PortalURL string
	// Clock is the server's time; nil is time.Now. Test-mode organizations run on their own
	// test clocks on top of it.
	Clock func() time.Time
	// Payments saves payment methods and charges them; a resolver without one sells nothing
	// that costs money.
	Payments payment.Processor
	// Renderer makes the renderer of webhook payloads from the resolver's own executor (the
	// payloads are /v1 shapes, which the rest layer knows); nil leaves events unrendered.
	Renderer func(*Executor) EventRenderer
	// Customers caches the customers license validations return, so the hottest path does
	// not read its key's customer every time. Customers this process changes are forgotten
	// at once; other processes' changes show within the cache's ttl. Nil caches nothing.
	Customers *expirable.LRU[uuid.UUID, *storage.Customer]
	// Webhooks sends queued webhook events; nil queues them but sends nothing.
	Webhooks *WebhookDelivery
	// Blobs stores rendered documents (invoices, receipts) and uploaded files, and signs
	// their links; nil refuses both.
	Blobs blob.Store
	// Files tunes file uploads (part size cap, URL lifetimes); the zero value is upstream's.
	Files FileSettings
	// JobsQueued, when set, is called after a transaction that enqueued jobs commits, so the
	// worker starts them at once; it must not block.
	JobsQueued func()
	// OIDC tunes the OpenID Connect provider (signing-key rotation); the zero value is the default.
	OIDC OIDCSettings
	// LicenseLimits rate-limits the public license-key operations (validate, activate and
	// deactivate without a token) per client address and per key, whichever API or alias
	// calls them; nil limits nothing.
	LicenseLimits *ratelimit.Guard
	// CostBudget holds each principal's GraphQL cost points per window (see cost.go); nil
	// leaves budgets unlimited, while the ceiling of one operation still applies.
	CostBudget *ratelimit.Limiter
	// Mail delivers the mail that use cases queue (sign-in codes, invitations); nil writes
	// each message to the log instead.
	Mail mail.Sender
	// SignInLimits rate-limits requesting and redeeming sign-in codes per email and per
	// client address; nil limits nothing.
	SignInLimits *SignInLimits
	// OIDCLogin holds the identity providers users may sign in with; nil offers none.
	OIDCLogin *oidclogin.Set
	// BrowserOrigins are the origins, besides PortalURL, whose pages may use a browser
	// session (the dashboard's, when served elsewhere: TILL_CORS_ORIGINS).
	BrowserOrigins []string
	// AuditRetention is how long the audit log keeps a change (PurgeAuditLog); 0 keeps
	// every change forever.
	AuditRetention time.Duration
	// Live brings committed events to GraphQL subscriptions; nil serves none.
	Live *LiveHub
}

// Resolver is the application: every use case, the GraphQL resolvers and the background
// work, over the dependencies it was built with. New is the only way to make one, so what a
// resolver runs on is fixed when it is built and nothing rewires it while it serves.
type Resolver struct {
	db            *sqlx.DB
	analytics     *sqlx.DB
	secret        []byte
	logger        *slog.Logger
	portalURL     string
	clock         func() time.Time
	payments      payment.Processor
	renderEvent   EventRenderer
	customers     *expirable.LRU[uuid.UUID, *storage.Customer]
	webhooks      *WebhookDelivery
	blobs         blob.Store
	files         FileSettings
	jobsQueuedFn  func()
	oidc          OIDCSettings
	licenseLimits *ratelimit.Guard
	costBudget    *ratelimit.Limiter
	mail          mail.Sender
	oidcLogin     *oidclogin.Set
	signInLimits  *SignInLimits
	browser       auth.Browser
	// auditRetention is Deps.AuditRetention.
	auditRetention time.Duration
	live           *LiveHub
	// browserOrigins are the origins whose pages may use a browser session (PortalURL and
	// Deps.BrowserOrigins).
	browserOrigins []string

	// organizationFields caches, per record type, the index of its OrganizationID field
	// (nil when it has none), for @relation's check on every object of a page.
	organizationFields sync.Map
	// validator is the prepared license validation, made on first use.
	validator   atomic.Pointer[storage.LicenseKeyValidator]
	validatorMu sync.Mutex
	// clientAuthThrottle counts failed OAuth2 client authentications, made on first use.
	clientAuthThrottle *clientAuthThrottle
	clientAuthOnce     sync.Once
}

// New builds the application over d.
func New(d Deps) *Resolver {
	r := &Resolver{db: d.DB, analytics: d.Analytics, secret: d.Secret, logger: d.Logger, portalURL: d.PortalURL, clock: d.Clock,
		payments: d.Payments, customers: d.Customers, webhooks: d.Webhooks, blobs: d.Blobs, files: d.Files,
		jobsQueuedFn: d.JobsQueued, oidc: d.OIDC, licenseLimits: d.LicenseLimits, costBudget: d.CostBudget, mail: d.Mail,
		signInLimits: d.SignInLimits, browser: auth.NewBrowser(d.PortalURL, d.BrowserOrigins), oidcLogin: d.OIDCLogin,
		auditRetention: d.AuditRetention, live: d.Live, browserOrigins: append([]string{d.PortalURL}, d.BrowserOrigins...)}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	if r.clock == nil {
		r.clock = time.Now
	}
	if r.analytics == nil {
		r.analytics = r.db
	}
	if d.Renderer != nil {
		r.renderEvent = d.Renderer(r.Executor())
	}
	return r
}

// Now is the server's time (a test-mode organization's use cases read its test clock
// through clockFor instead).
func (r *Resolver) Now() time.Time { return r.clock() }

// Logger is where the application logs, for the loops cmd/till runs around it.
func (r *Resolver) Logger() *slog.Logger { return r.logger }

// licenseKeyValidator prepares the validation statement once for the resolver's pool. A
// failed preparation (the database briefly unreachable) is not kept: the next validation
// tries again.
func (r *Resolver) licenseKeyValidator(ctx context.Context) (*storage.LicenseKeyValidator, error) {
	if v := r.validator.Load(); v != nil {
		return v, nil
	}
	r.validatorMu.Lock()
	defer r.validatorMu.Unlock()
	if v := r.validator.Load(); v != nil {
		return v, nil
	}
	v, err := storage.PrepareLicenseKeyValidator(context.WithoutCancel(ctx), r.db)
	if err != nil {
		return nil, err
	}
	r.validator.Store(v)
	return v, nil
}

// succeeded is the answer of a mutation whose result is only whether it worked: true, or
// null beside the error. Such fields are nullable because a guard may refuse them.
func succeeded(err error) (*bool, error) {
	if err != nil {
		return nil, err
	}
	return ptrTo(true), nil
}
