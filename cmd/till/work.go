package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"till/internal/blob"
	"till/internal/jobs"
	"till/internal/payment"
	"till/internal/wake"
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
		Payments: payment.NewTestProcessorIn(storage.TestPayments{DB: db.payments}),
		Webhooks: resolvers.NewWebhookDelivery(&webhook.Sender{Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.WebhookAllowPrivate})}
	if cfg.CustomerCacheTTL > 0 {
		r.Customers = expirable.NewLRU[uuid.UUID, *storage.Customer](customerCacheLimit, nil, cfg.CustomerCacheTTL)
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

// Batch sizes of the woken loops: a pass that reaches one runs again at once.
const (
	renderBatch = 500
	renewBatch  = 100
)

// startWork starts the background work of a Till process until ctx ends: rendering and
// delivering webhooks, running jobs, renewals, meter upkeep and checkout expiry. Every task
// is safe in several processes at once, so serve and any number of workers can share it.
//
// Loops whose work comes from rows sleep until a notification says such rows were committed
// (by this process or another), or until their next scheduled work falls due, polling only
// as a safety net; an idle process runs a few statements a minute.
//
// listener is the process's notification connection; startWork subscribes the loops and runs
// it, so whatever else the caller subscribed (the session cache) is served by the same one.
func startWork(ctx context.Context, cfg config, r *resolvers.Resolver, listener *wake.Listener, db *database, logger *slog.Logger) *background {
	work := &background{logger: logger}
	rendering, renewals, jobsQueued := wake.NewSignal(), wake.NewSignal(), wake.NewSignal()
	listener.On(storage.DomainEventsChannel, rendering.Wake)
	listener.On(storage.RenewalsChannel, renewals.Wake)
	listener.On(storage.JobsChannel, jobsQueued.Wake)
	listener.On(storage.WebhookEventsChannel, r.Webhooks.Wake)
	r.JobsQueued = jobsQueued.Wake
	work.run(ctx, listener.Run)

	work.onWake(ctx, "render events", rendering, 100*time.Millisecond, func(ctx context.Context) (int, time.Duration, error) {
		n, err := r.RenderEvents(ctx, renderBatch)
		if n == renderBatch || err != nil {
			return n, 0, err
		}
		return untilNext(r, n)(r.NextRenderClaimLapseAt(ctx))
	})
	work.run(ctx, func(ctx context.Context) { r.DispatchWebhooks(ctx, max(1, cfg.WebhookConcurrency), safetyNet) })
	worker := &jobs.Worker{DB: db.DB, Handlers: r.JobHandlers(), Logger: logger, Wake: jobsQueued, PollInterval: safetyNet}
	work.run(ctx, func(ctx context.Context) {
		if err := worker.Run(ctx); err != nil {
			logger.Error("job worker stopped", "err", err)
		}
	})
	work.onWake(ctx, "renew subscriptions", renewals, time.Second, func(ctx context.Context) (int, time.Duration, error) {
		n, err := r.RenewDue(ctx, nil, r.Now(), renewBatch)
		if err != nil || n == renewBatch {
			return n, 0, err
		}
		stranded, err := r.RenewStrandedTestClocks(ctx)
		if n += stranded; err != nil {
			return n, 0, err
		}
		return untilNext(r, n)(r.NextRenewalAt(ctx))
	})
	work.onWake(ctx, "expire checkouts", nil, time.Second, func(ctx context.Context) (int, time.Duration, error) {
		expired, err := r.ExpireCheckouts(ctx, r.Now())
		if err != nil {
			return expired, 0, err
		}
		reopened, err := r.ReopenStaleCheckouts(ctx, r.Now())
		if err != nil {
			return expired + reopened, 0, err
		}
		return untilNext(r, expired+reopened)(r.NextCheckoutChangeAt(ctx))
	})

	// Upkeep due by the clock alone: nothing notifies it, and a pass a minute or an hour is
	// all it needs.
	work.every(ctx, "archive webhook events", time.Hour, r.ArchiveWebhookEvents)
	work.every(ctx, "purge oauth2 codes", time.Hour, r.PurgeOAuth2Codes)
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
	return work
}

// untilNext turns a woken task's next due time into its answer: n done, and the wait until at
// by the resolver's clock (nothingDue when nothing is scheduled).
func untilNext(r *resolvers.Resolver, n int) func(at time.Time, ok bool, err error) (int, time.Duration, error) {
	return func(at time.Time, ok bool, err error) (int, time.Duration, error) {
		if err != nil || !ok {
			return n, nothingDue, err
		}
		return n, at.Sub(r.Now()), nil
	}
}
