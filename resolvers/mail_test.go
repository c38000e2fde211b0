package resolvers_test

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/internal/mail"
	"till/internal/mail/mailtest"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// flakySender fails its first failures sends, then records what it delivers.
type flakySender struct {
	mu       sync.Mutex
	failures int
	sent     []mail.Message
}

func (s *flakySender) Send(_ context.Context, m mail.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures > 0 {
		s.failures--
		return errors.New("mail server down")
	}
	s.sent = append(s.sent, m)
	return nil
}

func TestAQueuedMailIsSentOnceItsTransactionCommitsAndRetriedUntilDelivered(t *testing.T) {
	ctx := context.Background()
	sender := &flakySender{failures: 1}
	a := resolverstest.NewApp(t, storagetest.New(t), func(d *resolvers.Deps) { d.Mail = sender })
	want := mail.Message{To: "ada@example.com", Subject: "Your code", Text: "123456"}
	rolledBack := mail.Message{To: "eve@example.com", Subject: "never", Text: "x"}

	if err := storage.InTx(ctx, a.DB, func(tx *sqlx.Tx) error { return a.Resolver.EnqueueMail(ctx, tx, want) }); err != nil {
		t.Fatal(err)
	}
	err := storage.InTx(ctx, a.DB, func(tx *sqlx.Tx) error {
		if err := a.Resolver.EnqueueMail(ctx, tx, rolledBack); err != nil {
			return err
		}
		return errors.New("the change fails")
	})
	if err == nil {
		t.Fatal("the failing transaction committed")
	}
	w := &jobs.Worker{DB: a.DB, Handlers: a.Resolver.JobHandlers()}
	if _, err := w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(sender.sent) != 0 {
		t.Fatalf("sent while the server was down: %v", sender.sent)
	}
	if _, err := a.DB.ExecContext(ctx, `UPDATE jobs SET scheduled_at = now() WHERE kind = $1`, resolvers.JobMailSend); err != nil {
		t.Fatal(err)
	}
	if _, err := w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]mail.Message{want}, sender.sent); diff != "" {
		t.Errorf("delivered mail (-want +got):\n%s", diff)
	}
}

func TestAMailWithoutRecipientIsRefused(t *testing.T) {
	ctx := context.Background()
	a := resolverstest.NewApp(t, storagetest.New(t))
	err := storage.InTx(ctx, a.DB, func(tx *sqlx.Tx) error {
		return a.Resolver.EnqueueMail(ctx, tx, mail.Message{To: " ", Subject: "s"})
	})
	if err == nil {
		t.Fatal("a mail without recipient was queued")
	}
}

// TestASignInCodeWaitsForTheSMTPServerAndThenArrives sends through Till's SMTP sender to a
// real server that is down when the code is requested: the job fails and is retried, and
// once the server is up the code arrives and signs in.
func TestASignInCodeWaitsForTheSMTPServerAndThenArrives(t *testing.T) {
	ctx := context.Background()
	addr := mailtest.FreeAddr(t)
	host, port, _ := net.SplitHostPort(addr)
	sender := &mail.SMTP{Host: host, From: "Till <till@till.test>", Username: "till", Password: "s3cret",
		Timeout: 5 * time.Second}
	sender.Port, _ = strconv.Atoi(port)
	a := resolverstest.NewApp(t, storagetest.New(t), func(d *resolvers.Deps) { d.Mail = sender })
	if err := a.Resolver.RequestSignInCode(ctx, "smtp@example.com", "/"); err != nil {
		t.Fatal(err)
	}
	w := &jobs.Worker{DB: a.DB, Handlers: a.Resolver.JobHandlers()}
	if _, err := w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var state string
	var attempts int
	a.Get(t, &state, `SELECT state FROM jobs WHERE kind = $1`, resolvers.JobMailSend)
	a.Get(t, &attempts, `SELECT attempt FROM jobs WHERE kind = $1`, resolvers.JobMailSend)
	if state != "retryable" || attempts != 1 {
		t.Fatalf("with the server down the job is %s after %d attempts, want retryable after 1", state, attempts)
	}

	srv := mailtest.Start(t, mailtest.Options{Addr: addr, Username: "till", Password: "s3cret"})
	sender.TLSConfig = srv.ClientTLS
	a.Exec(t, `UPDATE jobs SET scheduled_at = now() WHERE kind = $1`, resolvers.JobMailSend)
	if _, err := w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	got := srv.Received()
	if len(got) != 1 {
		t.Fatalf("%d messages reached the server, want 1", len(got))
	}
	code := regexp.MustCompile(`\b[A-Z2-9]{4}-[A-Z2-9]{4}\b`).FindString(string(got[0].Data))
	if _, err := a.Resolver.SignInWithCode(ctx, "smtp@example.com", code, resolvers.SignInClient{}); err != nil {
		t.Errorf("the delivered code %q does not sign in: %v", code, err)
	}
}
