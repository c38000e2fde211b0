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

	"till/internal/blob"
	"till/internal/payment"
	"till/internal/ratelimit"
	"till/storage"
)

// Resolver is the dependency-injection root; run() in cmd/till builds it.
type Resolver struct {
	DB     *sqlx.DB
	Secret []byte
	Logger *slog.Logger
	// PortalURL is the base of customer-portal links, e.g. https://till.example.com.
	PortalURL string
	// Now is the clock; tests and test-mode organizations may replace it.
	Now func() time.Time
	// Payments saves payment methods and charges them.
	Payments payment.Processor
	// RenderEvent renders webhook payloads; nil leaves events unrendered.
	RenderEvent EventRenderer
	// Customers caches the customers license validations return, so the hottest path does
	// not read its key's customer every time. Customers this process changes are forgotten
	// at once; other processes' changes show within the cache's ttl. Nil caches nothing.
	Customers *expirable.LRU[uuid.UUID, *storage.Customer]
	// Webhooks sends queued webhook events; nil queues them but sends nothing.
	Webhooks *WebhookDelivery
	// Blobs stores rendered documents (invoices, receipts) and signs their download links.
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
	v, err := storage.PrepareLicenseKeyValidator(context.WithoutCancel(ctx), r.DB)
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
