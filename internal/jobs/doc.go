// Package jobs runs Till's durable background jobs (invoice rendering, webhook delivery,
// renewals) from the jobs table. Jobs are enqueued with storage.InsertJob in the transaction
// of the change that causes them; a Worker claims them with FOR UPDATE SKIP LOCKED, so any
// number of workers in any number of processes share a queue without taking the same job.
//
// A job is done only when its effect is: the worker opens a transaction, the Handler writes
// its effect in it, and the worker marks the job completed in that same transaction before
// committing. A crash before the commit leaves neither; the job stays running until a
// worker's periodic rescue (storage.RescueJobs, after StuckAfter) makes it retryable, and a
// worker whose job was rescued meanwhile cannot complete it (storage.ErrJobLost rolls its
// effect back). Effects outside the database, such as an HTTP request, are therefore
// at-least-once and should carry an idempotency key.
//
// A Worker sleeps while nothing is due: until its Wake channel fires (fed by the
// notification storage.JobsChannel that every runnable job sends at commit), until the
// earliest scheduled job or retry falls due, or for PollInterval at most.
//
// Failed attempts are retried with exponential backoff (DefaultBackoff) until the job's
// max_attempts, then discarded. A handler returns Discard to give up at once, or Snooze to
// run again later without using up an attempt.
package jobs
