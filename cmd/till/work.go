package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"till/internal/blob"
	"till/internal/jobs"
	"till/internal/payment"
	"till/internal/ttlcache"
	"till/internal/webhook"
	"till/resolvers"
	"till/rest"
	"till/storage"
)

// newResolver wires the application layer as serve and worker both run it: payments, webhook
// delivery, the customer cache, the event renderer (the /v1 shapes) and the blob store,
// whose link handler it returns for serve to mount (nil for a bucket).
func newResolver(cfg config, db *database, secret []byte, logger *slog.Logger) (*resolvers.Resolver, http.Handler, error) {
	r := &resolvers.Resolver{DB: db.DB, Secret: secret, Logger: logger, PortalURL: cfg.PublicURL, Now: time.Now,
		Payments: payment.NewTestProcessor(),
		Webhooks: resolvers.NewWebhookDelivery(&webhook.Sender{Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.WebhookAllowPrivate})}
	if cfg.CustomerCacheTTL > 0 {
		r.Customers = ttlcache.New[uuid.UUID, *storage.Customer](cfg.CustomerCacheTTL, customerCacheLimit, time.Now)
	}
	docs, err := rest.LoadDocuments(rest.Operations())
	if err != nil {
		return nil, nil, err
	}
	r.RenderEvent = rest.EventRenderer(r.Executor(), docs)
	blobs, blobHandler, err := openBlobStore(cfg, secret)
	if err != nil {
		return nil, nil, err
	}
	r.Blobs = blobs
	r.Files = resolvers.FileSettings{MaxPartSize: cfg.FilesMaxPartSize, PresignTTL: cfg.FilesPresignTTL}
	r.OIDC = resolvers.OIDCSettings{KeyRotation: cfg.OIDCKeyRotation}
	if r.LicenseLimits, err = licenseLimits(cfg); err != nil {
		return nil, nil, err
	}
	if r.CostBudget, err = costBudget(cfg); err != nil {
		return nil, nil, err
	}
	return r, blobHandler, nil
}

// abandonedUploadAge is when the local store forgets a multipart upload that was never
// completed: its part links live minutes, so a day leaves slow clients ample time.
const abandonedUploadAge = 24 * time.Hour

// startWork starts the background work of a Till process until ctx ends: rendering and
// delivering webhooks, running jobs, renewals, meter upkeep and checkout expiry. Every task
// is safe in several processes at once, so serve and any number of workers can share it.
func startWork(ctx context.Context, cfg config, r *resolvers.Resolver, db *database, logger *slog.Logger) *background {
	work := &background{logger: logger}
	work.every(ctx, "render events", 100*time.Millisecond, func(ctx context.Context) (int, error) {
		return r.RenderEvents(ctx, 500)
	})
	work.run(ctx, func(ctx context.Context) { r.DispatchWebhooks(ctx, max(1, cfg.WebhookConcurrency), time.Second) })
	work.every(ctx, "archive webhook events", time.Hour, r.ArchiveWebhookEvents)
	work.every(ctx, "purge oauth2 codes", time.Hour, r.PurgeOAuth2Codes)
	jobsQueued := make(chan struct{}, 1)
	r.JobsQueued = func() {
		select {
		case jobsQueued <- struct{}{}:
		default:
		}
	}
	worker := &jobs.Worker{DB: db.DB, Handlers: r.JobHandlers(), Logger: logger, Wake: jobsQueued}
	work.run(ctx, func(ctx context.Context) {
		if err := worker.Run(ctx); err != nil {
			logger.Error("job worker stopped", "err", err)
		}
	})
	work.every(ctx, "renew subscriptions", time.Second, func(ctx context.Context) (int, error) {
		return r.RenewDue(ctx, nil, r.Now(), 100)
	})
	work.every(ctx, "subscription meters", time.Minute, func(ctx context.Context) (int, error) {
		return r.RefreshSubscriptionMeters(ctx, nil, time.Minute, 500)
	})
	work.every(ctx, "meter rollups", time.Minute, r.RefreshMeterRollups)
	work.every(ctx, "event partitions", time.Hour, func(ctx context.Context) (int, error) {
		return r.EnsureEventPartitions(ctx)
	})
	if l, ok := r.Blobs.(*blob.Local); ok {
		work.every(ctx, "sweep abandoned uploads", time.Hour, func(ctx context.Context) (int, error) {
			return l.SweepUploads(ctx, abandonedUploadAge)
		})
	}
	work.every(ctx, "expire checkouts", 10*time.Second, func(ctx context.Context) (int, error) {
		expired, err := r.ExpireCheckouts(ctx, r.Now())
		if err != nil {
			return expired, err
		}
		reopened, err := r.ReopenStaleCheckouts(ctx, r.Now())
		return expired + reopened, err
	})
	return work
}
