-- +goose Up
-- jobs is the durable background-job queue (invoice rendering, webhook delivery, renewals,
-- partition upkeep, …). Jobs are inserted in the same transaction as the change that causes
-- them, so a rolled-back change enqueues nothing. Workers claim with
--   UPDATE jobs SET state = 'running', attempt = attempt + 1, attempted_at = now(), attempted_by = $w
--   WHERE id IN (SELECT id FROM jobs WHERE state IN ('available', 'retryable') AND queue = $q
--                AND scheduled_at <= now() ORDER BY priority, scheduled_at
--                LIMIT $n FOR UPDATE SKIP LOCKED) RETURNING *
-- and finish by setting completed, retryable (with a later scheduled_at), discarded (out of
-- attempts) or cancelled. A job is done only when its effect and its completion commit
-- together. Lower priority values run first. errors is an array of
-- {"at", "attempt", "error"} objects, appended on each failure.
-- unique_key deduplicates jobs that are not finished yet: an insert with
--   ON CONFLICT (unique_key) WHERE state IN ('available', 'running', 'retryable') DO NOTHING
-- is dropped while an equal job is pending or running.
CREATE TABLE jobs (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL DEFAULT now(),
    modified_at timestamptz,
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    kind text NOT NULL,
    queue text NOT NULL DEFAULT 'default',
    args jsonb NOT NULL DEFAULT '{}',
    state text NOT NULL DEFAULT 'available' CHECK (state IN ('available', 'running', 'completed',
        'retryable', 'discarded', 'cancelled')),
    priority smallint NOT NULL DEFAULT 1 CHECK (priority BETWEEN 1 AND 4),
    attempt integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    max_attempts integer NOT NULL DEFAULT 25 CHECK (max_attempts > 0),
    scheduled_at timestamptz NOT NULL DEFAULT now(),
    attempted_at timestamptz,
    attempted_by text,
    finished_at timestamptz,
    errors jsonb NOT NULL DEFAULT '[]',
    unique_key text,
    metadata jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT jobs_finished CHECK ((state IN ('completed', 'discarded', 'cancelled')) = (finished_at IS NOT NULL)),
    CONSTRAINT jobs_errors_array CHECK (jsonb_typeof(errors) = 'array')
);
-- Claiming: the next runnable jobs of a queue.
CREATE INDEX jobs_claim_idx ON jobs (queue, priority, scheduled_at) WHERE state IN ('available', 'retryable');
CREATE UNIQUE INDEX jobs_unique_key ON jobs (unique_key) WHERE state IN ('available', 'running', 'retryable');
-- Rescuing jobs whose worker died mid-run.
CREATE INDEX jobs_running_idx ON jobs (attempted_at) WHERE state = 'running';
-- Pruning finished jobs.
CREATE INDEX jobs_finished_at_idx ON jobs (finished_at) WHERE finished_at IS NOT NULL;
-- Visibility and replay through the API.
CREATE INDEX jobs_kind_created_at_idx ON jobs (kind, created_at DESC);
CREATE INDEX jobs_organization_created_at_idx ON jobs (organization_id, created_at DESC)
    WHERE organization_id IS NOT NULL;

-- +goose Down
DROP TABLE jobs;
