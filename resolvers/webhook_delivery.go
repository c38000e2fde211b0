package resolvers

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/webhook"
	"till/storage"
)

// Upstream's delivery settings (contract §4.10): ten attempts, backoff from 2 s doubling up
// to 20 minutes, and an endpoint that fails ten attempts in a row is disabled.
const (
	webhookMaxAttempts      = 10
	webhookFailureThreshold = 10
	webhookBackoffBase      = 2 * time.Second
	webhookBackoffCap       = 20 * time.Minute
)

// WebhookDelivery sends queued webhook events. Each endpoint receives its events one at a
// time in the order they happened; different endpoints are served in parallel.
type WebhookDelivery struct {
	Sender *webhook.Sender
	// Backoff is the wait before attempt+1 after attempt failed; nil is upstream's
	// exponential backoff with jitter.
	Backoff func(attempt int) time.Duration

	wakeOnce sync.Once
	wake     chan struct{}
}

// NewWebhookDelivery delivers with sender and upstream's retry settings.
func NewWebhookDelivery(sender *webhook.Sender) *WebhookDelivery {
	return &WebhookDelivery{Sender: sender}
}

// Wake tells a running dispatcher that new events may be due, so a delivery need not wait
// for its next poll. It never blocks.
func (d *WebhookDelivery) Wake() {
	select {
	case d.wakeChan() <- struct{}{}:
	default:
	}
}

func (d *WebhookDelivery) wakeChan() chan struct{} {
	d.wakeOnce.Do(func() { d.wake = make(chan struct{}, 1) })
	return d.wake
}

// backoff is the wait after a failed attempt: 2 s doubling per attempt, capped at 20 minutes,
// between 80 % and 100 % of that so endpoints that failed together do not retry together.
func (d *WebhookDelivery) backoff(attempt int) time.Duration {
	if d.Backoff != nil {
		return d.Backoff(attempt)
	}
	wait := webhookBackoffCap
	if attempt < 20 {
		wait = min(webhookBackoffCap, webhookBackoffBase<<(attempt-1))
	}
	return wait - time.Duration(rand.Int64N(int64(wait)/5+1))
}

// lease is how long a claimed event stays with its dispatcher: past it, the event is claimed
// again (the dispatcher died). It outlasts any attempt several times over.
func (d *WebhookDelivery) lease() time.Duration {
	t := d.Sender.Timeout
	if t == 0 {
		t = webhook.DefaultTimeout
	}
	return 3*t + 5*time.Second
}

// DispatchWebhooks delivers queued webhook events until ctx ends, with up to slots attempts in
// flight. It looks for due events as soon as something wakes it (Wake: an event queued or
// redelivered, an attempt finished), when the earliest retry or expired lease falls due, and
// at least every idle. Attempts in flight when ctx ends are finished and recorded.
func (r *Resolver) DispatchWebhooks(ctx context.Context, slots int, idle time.Duration) {
	d := r.webhooks
	var queue *storage.WebhookQueue
	for queue == nil && ctx.Err() == nil {
		var err error
		if queue, err = storage.PrepareWebhookQueue(ctx, r.db); err != nil {
			r.logger.Error("preparing webhook delivery", "err", err)
			sleep(ctx, idle)
		}
	}
	records := make(chan recordRequest)
	var recorders sync.WaitGroup
	for range webhookRecorders {
		recorders.Go(func() { r.recordWebhooks(context.WithoutCancel(ctx), queue, records) })
	}
	defer func() { close(records); recorders.Wait() }()
	record := func(rec storage.WebhookRecord) (storage.WebhookOutcome, error) {
		reply := make(chan recordReply, 1)
		records <- recordRequest{rec: rec, reply: reply}
		out := <-reply
		return out.out, out.err
	}
	free := make(chan struct{}, slots)
	for range slots {
		free <- struct{}{}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		want := len(free)
		claimed, err := queue.Claim(ctx, want, d.lease())
		if err != nil && ctx.Err() == nil {
			r.logger.Error("claiming webhook events", "err", err)
		}
		for _, ev := range claimed {
			<-free
			wg.Go(func() {
				defer func() { free <- struct{}{}; d.Wake() }()
				r.deliverWebhook(context.WithoutCancel(ctx), ctx.Done(), record, ev)
			})
		}
		if len(claimed) == want && len(free) > 0 {
			continue // there may be more due heads than slots asked for
		}
		sleep := idle
		if len(claimed) == 0 && len(free) == slots {
			// Nothing in flight, whose end would wake the loop: sleep until the next
			// retry or lease end at the latest.
			sleep = r.nextWebhookDue(ctx, idle)
		}
		select {
		case <-ctx.Done():
		case <-d.wakeChan():
		case <-time.After(sleep):
		}
	}
}

// minWebhookSleep keeps the dispatcher from spinning on an event that is due but held by
// another dispatcher's claim.
const minWebhookSleep = 50 * time.Millisecond

// nextWebhookDue is how long until an event may be claimed, between minWebhookSleep and idle.
func (r *Resolver) nextWebhookDue(ctx context.Context, idle time.Duration) time.Duration {
	in, ok, err := storage.NextWebhookIn(ctx, r.db)
	if err != nil && ctx.Err() == nil {
		r.logger.Error("reading the next webhook due time", "err", err)
	}
	if err != nil || !ok {
		return idle
	}
	return min(idle, max(in, minWebhookSleep))
}

// Attempts are recorded in batches by webhookRecorders goroutines, each taking up to
// webhookRecordBatch attempts that wait when it is free: under load many attempts share one
// statement and one commit, and an attempt alone waits for nothing.
const (
	webhookRecorders   = 2
	webhookRecordBatch = 64
)

type recordRequest struct {
	rec   storage.WebhookRecord
	reply chan<- recordReply
}

type recordReply struct {
	out storage.WebhookOutcome
	err error
}

// recordWebhooks records the attempts sent on in until it is closed.
func (r *Resolver) recordWebhooks(ctx context.Context, queue *storage.WebhookQueue, in <-chan recordRequest) {
	for first := range in {
		batch := []recordRequest{first}
	more:
		for len(batch) < webhookRecordBatch {
			select {
			case req, open := <-in:
				if !open {
					break more
				}
				batch = append(batch, req)
			default:
				break more
			}
		}
		records := make([]storage.WebhookRecord, len(batch))
		for i, req := range batch {
			records[i] = req.rec
		}
		outs, err := queue.Record(ctx, records)
		for i, req := range batch {
			if err != nil {
				req.reply <- recordReply{err: err}
				continue
			}
			req.reply <- recordReply{out: outs[i]}
		}
	}
}

// webhookStreak bounds how many events of one endpoint a slot sends in a row before it lets
// the dispatcher choose again, so a busy endpoint cannot hold a slot for ever.
const webhookStreak = 100

// deliverWebhook makes one attempt of a claimed event and records it, then goes on with the
// endpoint's next event when recording handed the lease on to it (not once stopping closes). A failure is retried after
// the backoff until the attempts run out; the endpoint is disabled once it has failed
// webhookFailureThreshold attempts in a row.
func (r *Resolver) deliverWebhook(ctx context.Context, stopping <-chan struct{},
	record func(storage.WebhookRecord) (storage.WebhookOutcome, error), ev *storage.WebhookDispatch) {
	d := r.webhooks
	for streak := 1; ev != nil; streak++ {
		var body []byte
		if ev.Payload != nil {
			body = []byte(*ev.Payload)
		}
		res := d.Sender.Send(ctx, webhook.Delivery{URL: ev.URL, Secret: ev.Secret, MsgID: ev.ID.String(), Body: body})
		r.logAttemptFailure(ev, res.Err)
		attempt := storage.WebhookAttempt{Succeeded: res.Success, Response: res.Response}
		if res.StatusCode != 0 {
			attempt.HTTPCode = &res.StatusCode
		}
		var retryIn, lease *time.Duration
		if !res.Success && ev.Attempts < webhookMaxAttempts {
			wait := d.backoff(ev.Attempts)
			retryIn = &wait
		}
		if streak < webhookStreak && !closed(stopping) { // a stopping dispatcher finishes what it holds, no more
			l := d.lease()
			lease = &l
		}
		out, err := record(storage.WebhookRecord{Event: &ev.WebhookEvent, Attempt: attempt, RetryIn: retryIn, LeaseOn: lease})
		switch {
		case err != nil:
			r.logger.Error("recording a webhook attempt", "webhook_event_id", ev.ID, "err", err)
		case !out.Recorded:
			r.logger.Warn("webhook attempt outlived its lease; the event was claimed again",
				"webhook_event_id", ev.ID, "attempt", ev.Attempts)
		case out.Failures >= webhookFailureThreshold:
			r.disableFailingEndpoint(ctx, r.db, ev, out.Failures)
			out.Next = nil // skipped with the endpoint's other pending events
		}
		ev = out.Next
	}
}

// logAttemptFailure gives the operator the network error of an attempt that got no answer.
// The organization's delivery log holds only a generic reason (webhook.Reason): the error
// names the server's resolver and the addresses the endpoint's host resolved to. Answers
// outside 2xx are the endpoint's own doing and fully in the delivery log already.
func (r *Resolver) logAttemptFailure(ev *storage.WebhookDispatch, err error) {
	var status *webhook.StatusError
	if err == nil || errors.As(err, &status) || errors.Is(err, context.Canceled) {
		return
	}
	r.logger.Warn("webhook attempt got no answer", "webhook_event_id", ev.ID, "webhook_endpoint_id", ev.WebhookEndpointID,
		"organization_id", ev.OrganizationID, "attempt", ev.Attempts, "err", err)
}

// disableFailingEndpoint turns off an endpoint that keeps failing and records why on it.
func (r *Resolver) disableFailingEndpoint(ctx context.Context, q sqlx.QueryerContext, ev *storage.WebhookDispatch, failures int) {
	reason := "Disabled after " + strconv.Itoa(failures) + " failed delivery attempts in a row."
	disabled, skipped, err := storage.DisableWebhookEndpoint(ctx, q, ev.WebhookEndpointID, reason)
	if err != nil {
		r.logger.Error("disabling a failing webhook endpoint", "webhook_endpoint_id", ev.WebhookEndpointID, "err", err)
		return
	}
	if disabled {
		r.logger.Warn("webhook endpoint disabled", "webhook_endpoint_id", ev.WebhookEndpointID,
			"organization_id", ev.OrganizationID, "failures", failures, "skipped_events", skipped)
	}
}

// webhookTargets remembers, for one batch of events, which endpoints take each
// organization's events of each type, so a burst of events reads them once.
type webhookTargets map[[2]string][]storage.WebhookTarget

// of lists the endpoints the event goes to: subscribed ones that existed when it happened (an
// event rendered late is never sent to an endpoint created after it).
func (c webhookTargets) of(ctx context.Context, q sqlx.QueryerContext, e *storage.DomainEvent) ([]storage.WebhookTarget, error) {
	key := [2]string{e.OrganizationID.String(), e.Type}
	all, seen := c[key]
	if !seen {
		var err error
		if all, err = storage.WebhookTargets(ctx, q, e.OrganizationID, e.Type); err != nil {
			return nil, err
		}
		c[key] = all
	}
	var out []storage.WebhookTarget
	for _, t := range all {
		if !t.CreatedAt.After(e.CreatedAt) {
			out = append(out, t)
		}
	}
	return out, nil
}

// publishEvents stores rendered events' payloads and queues them, in one statement, for
// every endpoint that takes each, in the endpoint's format; then it wakes the dispatcher.
// Queuing is idempotent, so a second renderer of the same events adds nothing.
func (r *Resolver) publishEvents(ctx context.Context, targets webhookTargets, events []*storage.DomainEvent, payloads []string) error {
	pubs := make([]storage.Publication, len(events))
	for i, e := range events {
		to, err := targets.of(ctx, r.db, e)
		if err != nil {
			return err
		}
		bodies := make(map[uuid.UUID]string, len(to))
		for _, t := range to {
			body, err := webhook.Payload(t.Format, e.Type, []byte(payloads[i]))
			if err != nil {
				return err
			}
			bodies[t.ID] = string(body)
		}
		pubs[i] = storage.Publication{Event: e, Payload: payloads[i], Bodies: bodies}
	}
	queued, err := storage.PublishDomainEvents(ctx, r.db, pubs)
	if err == nil && queued > 0 && r.webhooks != nil {
		r.webhooks.Wake()
	}
	return err
}

// webhookRetention is how long webhook events keep their payload and attempt log (upstream
// archives after 90 days).
const webhookRetention = 90 * 24 * time.Hour

// ArchiveWebhookEvents drops the payloads and attempt logs older than the retention window;
// serve runs it hourly.
func (r *Resolver) ArchiveWebhookEvents(ctx context.Context) (int, error) {
	return storage.ArchiveWebhookEvents(ctx, r.db, r.Now().Add(-webhookRetention))
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
