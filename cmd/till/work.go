package main

import (
	"context"
	"fmt"
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

// app is the application and the collaborators cmd made for it that the background loops
// and the HTTP handler reach directly: the webhook sender and job signal they wake, the
// blob store they sweep and whose link handler serve mounts (nil for a bucket).
type app struct {
	r           *resolvers.Resolver
	webhooks    *resolvers.WebhookDelivery
	jobsQueued  wake.Signal
	blobs       blob.Store
	blobHandler http.Handler
	// live brings committed events to the GraphQL subscriptions serve's handler opens.
	live *resolvers.LiveHub
}

// newApp wires the application as serve and worker both run it: the payment processor the
// configuration names, webhook delivery, the customer cache, the event renderer (the /v1
// shapes) and the blob store, all handed to resolvers.New at once.
func newApp(cfg config, db *database, secret []byte, logger *slog.Logger) (*app, error) {
	a := &app{webhooks: resolvers.NewWebhookDelivery(&webhook.Sender{Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.WebhookAllowPrivate}),
		jobsQueued: wake.NewSignal(), live: resolvers.NewLiveHub(db.DB, logger, resolvers.WithLiveEventBudget(cfg.LiveEventBudget))}
	payments, err := paymentProcessor(cfg, db)
	if err != nil {
		return nil, err
	}
	docs, err := rest.LoadDocuments(rest.Operations())
	if err != nil {
		return nil, err
	}
	if a.blobs, a.blobHandler, err = openBlobStore(cfg, secret); err != nil {
		return nil, err
	}
	d := resolvers.Deps{DB: db.DB, Analytics: db.analytics, Secret: secret, Logger: logger, PortalURL: cfg.PublicURL, Clock: time.Now,
		Payments: payments, Webhooks: a.webhooks, Blobs: a.blobs, JobsQueued: a.jobsQueued.Wake,
		Renderer: func(e *resolvers.Executor) resolvers.EventRenderer { return rest.EventRenderer(e, docs) },
		Files:    resolvers.FileSettings{MaxPartSize: cfg.FilesMaxPartSize, PresignTTL: cfg.FilesPresignTTL},
		OIDC:     resolvers.OIDCSettings{KeyRotation: cfg.OIDCKeyRotation}, AuditRetention: cfg.AuditRetention,
		Live: a.live}
	if cfg.CustomerCacheTTL > 0 {
		d.Customers = expirable.NewLRU[uuid.UUID, *storage.Customer](customerCacheLimit, nil, cfg.CustomerCacheTTL)
	}
	if d.LicenseLimits, err = licenseLimits(cfg); err != nil {
		return nil, err
	}
	if d.CostBudget, err = costBudget(cfg); err != nil {
		return nil, err
	}
	if d.SignInLimits, err = signInLimits(cfg); err != nil {
		return nil, err
	}
	if d.Mail, err = mailSender(cfg, logger); err != nil {
		return nil, err
	}
	if d.OIDCLogin, err = oidcLogin(cfg, d.Secret); err != nil {
		return nil, err
	}
	d.BrowserOrigins = cfg.CORSOrigins
	a.r = resolvers.New(d)
	if tp, ok := d.Payments.(*payment.TestProcessor); ok {
		tp.SetEventSink(a.r.ProcessorEventSink(db.payments))
	}
	return a, nil
}

// paymentProcessor is the processor TILL_PAYMENT_PROCESSOR names. The test processor keeps
// what it knows of saved cards in the database, on a pool of its own, so every process
// agrees on a card's behaviour; Stripe keeps it in the Stripe account.
func paymentProcessor(cfg config, db *database) (payment.Processor, error) {
	switch cfg.PaymentProcessor {
	case "test":
		return payment.NewTestProcessorIn(storage.TestPayments{DB: db.payments}), nil
	case "stripe":
		p, err := payment.NewStripe(payment.StripeConfig{SecretKey: cfg.StripeSecretKey, WebhookSecret: cfg.StripeWebhookSecret,
			APIURL: cfg.StripeAPIURL})
		if err != nil {
			return nil, err
		}
		return p, nil
	default:
		return nil, fmt.Errorf("TILL_PAYMENT_PROCESSOR %q is not a payment processor Till has", cfg.PaymentProcessor)
	}
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
func startWork(ctx context.Context, cfg config, a *app, listener *wake.Listener, db *database, logger *slog.Logger) *background {
	work := &background{logger: logger}
	r, jobsQueued := a.r, a.jobsQueued
	rendering, renewals := wake.NewSignal(), wake.NewSignal()
	listener.On(storage.DomainEventsChannel, rendering.Wake)
	listener.On(storage.RenewalsChannel, renewals.Wake)
	listener.On(storage.JobsChannel, jobsQueued.Wake)
	listener.On(storage.WebhookEventsChannel, a.webhooks.Wake)
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
	work.every(ctx, "purge sign-ins", time.Hour, r.PurgeSignIns)
	work.every(ctx, "purge audit log", time.Hour, r.PurgeAuditLog)
	work.every(ctx, "subscription meters", time.Minute, func(ctx context.Context) (int, error) {
		return r.RefreshSubscriptionMeters(ctx, nil, time.Minute, 500)
	})
	work.every(ctx, "meter rollups", time.Minute, r.RefreshMeterRollups)
	// Metric reads sum the changes not folded yet: folding often keeps them few.
	work.every(ctx, "metric rollups", 10*time.Second, r.FoldMetrics)
	work.every(ctx, "event partitions", time.Hour, func(ctx context.Context) (int, error) {
		return r.EnsureEventPartitions(ctx)
	})
	if l, ok := a.blobs.(*blob.Local); ok {
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
