package resolvers_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"till/internal/jobs"
	"till/internal/mail"
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
