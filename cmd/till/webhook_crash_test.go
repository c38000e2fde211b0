package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"till/storage/storagetest"
)

// TestWebhookKilledBetweenSendAndRecordIsSentAgain kills the server with SIGKILL while its
// webhook is at the receiver (sent, not yet recorded), starts it again, and checks that the
// event arrives a second time with the same webhook-id and is then recorded once: delivery
// is at least once and a crash loses nothing.
func TestWebhookKilledBetweenSendAndRecordIsSentAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	dsn := storagetest.DSN(t)
	vars := map[string]string{"DATABASE_URL": dsn, "TILL_BLOB_DIR": t.TempDir(), "TILL_SECRET": "crash-test-secret", "TILL_LOG_LEVEL": "error",
		"TILL_DATA_DIR": t.TempDir(), "TILL_WEBHOOK_ALLOW_PRIVATE": "true", "TILL_WEBHOOK_TIMEOUT": "1s"}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"org", "create", "--name", "Hooks", "--slug", "hooks"}, getenvOf(vars), &out); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"token", "create", "--org", "hooks", "--scopes",
		"webhooks:write customers:write"}, getenvOf(vars), &out); err != nil {
		t.Fatal(err)
	}
	token := tokenLine.FindStringSubmatch(out.String())
	if token == nil {
		t.Fatalf("no token printed:\n%s", out.String())
	}

	arrived := make(chan string, 10)
	release := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- r.Header.Get("webhook-id")
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()
	defer close(release)

	base, kill := startTillProcess(t, vars)
	mustGraphQL(t, base, token[1], `mutation($url: String!) { createWebhookEndpoint(input: {url: $url, format: raw,
		events: ["customer.created"]}) { id } }`, map[string]any{"url": receiver.URL}, nil)
	mustGraphQL(t, base, token[1], `mutation { createCustomer(input: {email: "crash@example.com"}) { id } }`, nil, nil)
	first := waitArrival(t, arrived, 30*time.Second)
	kill() // the attempt is at the receiver and the server never records it

	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var logged int
	if err := db.Get(&logged, `SELECT count(*) FROM webhook_deliveries`); err != nil || logged != 0 {
		t.Fatalf("%d attempts recorded before the restart (%v), want none", logged, err)
	}

	_, kill = startTillProcess(t, vars)
	defer kill()
	release <- struct{}{} // the killed server's request may still be waiting: let it go
	second := waitArrival(t, arrived, 60*time.Second)
	if second != first {
		t.Fatalf("webhook-id after the restart = %s, want %s", second, first)
	}
	release <- struct{}{}
	var state struct {
		Succeeded *bool `db:"succeeded"`
		Attempts  int   `db:"attempts"`
		Logged    int   `db:"logged"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := db.Get(&state, `SELECT succeeded, attempts, (SELECT count(*) FROM webhook_deliveries) AS logged
			FROM webhook_events WHERE id = $1`, first); err != nil {
			t.Fatal(err)
		}
		if state.Succeeded != nil || time.Now().After(deadline) {
			break
		}
	}
	if state.Succeeded == nil || !*state.Succeeded || state.Attempts != 2 || state.Logged != 1 {
		t.Errorf("after the restart: %+v, want delivered on the second claim with one recorded attempt", state)
	}
}

func waitArrival(t *testing.T, arrived <-chan string, timeout time.Duration) string {
	t.Helper()
	select {
	case id := <-arrived:
		return id
	case <-time.After(timeout):
		t.Fatalf("no webhook arrived within %s", timeout)
		return ""
	}
}
