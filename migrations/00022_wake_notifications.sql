-- +goose Up
-- The background loops sleep until there is work for them instead of polling. A change that
-- gives a loop work notifies that loop's channel from the change's own transaction, so the
-- notification reaches every listening process (till serve, till worker) when the change
-- commits, and never when it rolls back. The payload is empty: PostgreSQL folds equal
-- notifications of one transaction into one, so a transaction that queues a thousand jobs
-- wakes each listener once. The channel names are storage's (storage/due.go).

-- +goose StatementBegin
CREATE FUNCTION till_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(TG_ARGV[0], '');
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- A job became runnable, now or at scheduled_at: enqueued, retried, snoozed, rescued, or
-- failed with a retry to come (the worker then sets its timer to the new time). Claiming
-- (state running) and finishing notify nobody, or every claim would wake every worker.
CREATE TRIGGER jobs_wake AFTER INSERT OR UPDATE OF state, scheduled_at ON jobs
    FOR EACH ROW WHEN (NEW.state IN ('available', 'retryable'))
    EXECUTE FUNCTION till_notify('till_jobs');

-- A domain event waits for its payload to be rendered.
CREATE TRIGGER domain_events_wake AFTER INSERT ON domain_events
    FOR EACH ROW EXECUTE FUNCTION till_notify('till_domain_events');

-- A webhook event waits for delivery: queued, redelivered, or failed with a retry to come.
-- Claims (which set claimed_until) and successes notify nobody.
CREATE TRIGGER webhook_events_wake AFTER INSERT OR UPDATE OF next_attempt_at ON webhook_events
    FOR EACH ROW WHEN (NEW.succeeded IS NULL AND NOT NEW.skipped AND NEW.claimed_until IS NULL)
    EXECUTE FUNCTION till_notify('till_webhook_events');

-- When a subscription's renewal work falls due may have changed: a new or changed period,
-- status or cancellation, or a dunning retry of its pending order.
CREATE TRIGGER subscriptions_wake AFTER INSERT OR UPDATE OF current_period_end, status, cancel_at_period_end, deleted_at
    ON subscriptions
    FOR EACH ROW WHEN (NEW.deleted_at IS NULL AND NEW.status IN ('trialing', 'active', 'past_due'))
    EXECUTE FUNCTION till_notify('till_renewals');
CREATE TRIGGER orders_wake AFTER INSERT OR UPDATE OF next_payment_attempt_at, status ON orders
    FOR EACH ROW WHEN (NEW.next_payment_attempt_at IS NOT NULL AND NEW.status = 'pending')
    EXECUTE FUNCTION till_notify('till_renewals');

-- The checkout loop sleeps until the next checkout expires (checkouts_open_expires_at_idx
-- finds it) or a confirmed one goes stale; this finds the latter without reading every
-- checkout ever made.
CREATE INDEX checkouts_confirmed_modified_at_idx ON checkouts (modified_at) WHERE status = 'confirmed';

-- +goose Down
DROP INDEX checkouts_confirmed_modified_at_idx;
DROP TRIGGER orders_wake ON orders;
DROP TRIGGER subscriptions_wake ON subscriptions;
DROP TRIGGER webhook_events_wake ON webhook_events;
DROP TRIGGER domain_events_wake ON domain_events;
DROP TRIGGER jobs_wake ON jobs;
DROP FUNCTION till_notify();
