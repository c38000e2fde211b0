package jobs_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/storage"
)

// crashWorkerEnv makes the test binary act as a worker process, holding the database URL, so
// the crash test can SIGKILL a real worker in the middle of a job.
const crashWorkerEnv = "TILL_TEST_JOBS_CRASH_WORKER"

// effectWritten is what the crash worker prints once its job's effect is written but not
// committed.
const effectWritten = "effect written"

// runCrashWorker claims one job, writes its effect, reports that and then hangs until it is
// killed, returning the process's exit code.
func runCrashWorker(dsn string) int {
	db, err := storage.Open(dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	w := &jobs.Worker{DB: db, ID: "crash-worker", Logger: quiet(), JobTimeout: time.Minute,
		Handlers: map[string]jobs.Handler{"effect": func(ctx context.Context, tx *sqlx.Tx, job *storage.Job) error {
			if err := writeEffect(tx, job); err != nil {
				return err
			}
			fmt.Println(effectWritten)
			<-ctx.Done()
			return ctx.Err()
		}}}
	n, err := w.RunOnce(context.Background())
	fmt.Fprintf(os.Stderr, "crash worker ran %d jobs without being killed: %v\n", n, err)
	return 1
}

// TestJobOfAKilledWorkerRunsOnceAfterRescue kills a worker process while its job's effect is
// written but not committed: the effect must vanish with it, and after a rescue another
// worker runs the job to completion, so the effect exists exactly once.
func TestJobOfAKilledWorkerRunsOnceAfterRescue(t *testing.T) {
	db, dsn := newDB(t)
	ctx := t.Context()
	job := enqueue(t, db, storage.JobInsert{Kind: "effect"})

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashWorkerEnv+"="+dsn)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	select {
	case line := <-lines:
		if line != effectWritten {
			t.Fatalf("worker printed %q", line)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the worker never wrote the effect:\n%s", stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	if got := readJob(t, db, job.ID); got.State != storage.JobRunning || got.Attempt != 1 {
		t.Fatalf("after the kill the job is %s at attempt %d, want running at 1", got.State, got.Attempt)
	}
	if n, err := storage.RescueJobs(ctx, db, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("RescueJobs = %d, %v; want 1", n, err)
	}
	w := &jobs.Worker{DB: db, ID: "survivor", Logger: quiet(),
		Handlers: map[string]jobs.Handler{"effect": func(_ context.Context, tx *sqlx.Tx, job *storage.Job) error {
			return writeEffect(tx, job)
		}}}
	if n, err := w.RunOnce(ctx); n != 1 || err != nil {
		t.Fatalf("RunOnce after the rescue = %d, %v", n, err)
	}

	if attempts := effectAttempts(t, db, job.ID); len(attempts) != 1 || attempts[0] != 2 {
		t.Errorf("effects by attempt = %v, want exactly one, by attempt 2", attempts)
	}
	got := readJob(t, db, job.ID)
	if got.State != storage.JobCompleted || got.Attempt != 2 {
		t.Errorf("job is %s at attempt %d, want completed at 2", got.State, got.Attempt)
	}
	checkErrorEntry(t, &storage.Job{Errors: got.Errors, Attempt: 1}, "rescued: worker crash-worker")
}
