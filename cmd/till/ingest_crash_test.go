package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"till/storage/storagetest"
)

// runAsTill makes the test binary act as the till command when the crash test starts it
// as a child process, so the test can kill a real server mid-request.
const runAsTill = "TILL_TEST_RUN_AS_TILL"

// TestIngestKilledMidBatchStoresNothing kills the server with SIGKILL while PostgreSQL is
// storing a large batch, then checks that none of it was stored, and that the same batch
// sent to a restarted server is stored whole: a crash never leaves half a batch, and the
// client's retry is the way to finish.
func TestIngestKilledMidBatchStoresNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	dsn := storagetest.DSN(t)
	vars := map[string]string{"DATABASE_URL": dsn, "TILL_BLOB_DIR": t.TempDir(), "TILL_SECRET": "crash-test-secret", "TILL_LOG_LEVEL": "error",
		"TILL_DATA_DIR": t.TempDir()}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"org", "create", "--name", "Crash", "--slug", "crash"}, getenvOf(vars), &out); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"token", "create", "--org", "crash", "--scopes", "events:write"}, getenvOf(vars), &out); err != nil {
		t.Fatal(err)
	}
	token := tokenLine.FindStringSubmatch(out.String())
	if token == nil {
		t.Fatalf("no token printed:\n%s", out.String())
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	const n = 40_000
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"crash","external_customer_id":"c-%d","external_id":"crash-%d","metadata":{"i":%d}}`, i%50, i, i)
	}
	body := `{"events":[` + strings.Join(items, ",") + `]}`

	for attempt := 1; ; attempt++ {
		base, kill := startTillProcess(t, vars)
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			req, _ := http.NewRequest(http.MethodPost, base+"/v1/events/ingest", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token[1])
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		if !waitForStatement(db, `%event_staging%`, 30*time.Second) {
			kill()
			t.Fatal("the ingest never reached the database")
		}
		kill()
		<-sent
		// The server's backend notices its client is gone and rolls back.
		waitForNoStatement(t, db, `%event_staging%`)
		var stored, keys int
		if err := db.Get(&stored, `SELECT count(*) FROM events WHERE name = 'crash'`); err != nil {
			t.Fatal(err)
		}
		if err := db.Get(&keys, `SELECT count(*) FROM event_external_ids WHERE external_id LIKE 'crash-%'`); err != nil {
			t.Fatal(err)
		}
		if stored == n && keys == n && attempt < 3 {
			// The commit won the race with the kill: whole, not half, but not the case under
			// test. Remove the batch and kill again.
			if _, err := db.Exec(`DELETE FROM events WHERE name = 'crash'; DELETE FROM event_external_ids WHERE external_id LIKE 'crash-%'`); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if stored != 0 || keys != 0 {
			t.Fatalf("after the kill: %d events and %d dedupe keys stored, want none", stored, keys)
		}
		break
	}

	base, kill := startTillProcess(t, vars)
	defer kill()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/events/ingest", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token[1])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got bytes.Buffer
	_, _ = got.ReadFrom(resp.Body)
	if want := fmt.Sprintf(`{"inserted":%d,"duplicates":0}`, n); resp.StatusCode != 200 || got.String() != want {
		t.Errorf("retry after the crash: %d %s, want %s", resp.StatusCode, got.String(), want)
	}
}

// startTillProcess runs `till serve` as a child process (this test binary, see runAsTill)
// until it answers /readyz, and returns its base URL and a kill func (SIGKILL).
func startTillProcess(t *testing.T, vars map[string]string) (string, func()) {
	t.Helper()
	p := startTill(t, "serve", vars)
	return p.base, p.kill
}

// tillProcess is a till command running as a child process.
type tillProcess struct {
	base string      // the API's URL, for serve
	out  *syncBuffer // its standard output and error
	kill func()      // SIGKILL, then wait; safe to call twice
}

// startTill runs `till command` as a child process (this test binary, see runAsTill): serve
// until it answers /readyz, worker until it says it runs.
func startTill(t *testing.T, command string, vars map[string]string) *tillProcess {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], command)
	cmd.Env = append(os.Environ(), runAsTill+"=1", "TILL_ADDR="+addr)
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	p := &tillProcess{base: "http://" + addr, out: out, kill: func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}}
	t.Cleanup(p.kill)
	ready := func() bool {
		if command != "serve" {
			return strings.Contains(out.String(), "Till worker running")
		}
		resp, err := http.Get(p.base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	for deadline := time.Now().Add(60 * time.Second); !ready(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.kill()
			t.Fatalf("till %s not ready after 60s:\n%s", command, out.String())
		}
	}
	return p
}

// waitForStatement polls until a backend runs a statement matching pattern.
func waitForStatement(db *sqlx.DB, pattern string, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		var n int
		if db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1
			AND pid <> pg_backend_pid()`, pattern) == nil && n > 0 {
			return true
		}
	}
	return false
}

// waitForNoStatement polls until no backend is in a transaction that touched pattern.
func waitForNoStatement(t *testing.T, db *sqlx.DB, pattern string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE $1 AND state <> 'idle'
			AND pid <> pg_backend_pid()`, pattern); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the killed server's transaction did not end within 30s")
}
