package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// getenvOf builds a getenv over a fixed map so tests never read the process environment.
func getenvOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// syncBuffer is a bytes.Buffer safe for a server goroutine writing while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestHelpForEveryCommand(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"till --help lists the commands", []string{"--help"}, "till token create"},
		{"serve --help describes serve", []string{"serve", "--help"}, "Usage: till serve"},
		{"migrate --help describes migrate", []string{"migrate", "--help"}, "Usage: till migrate"},
		{"worker --help describes worker", []string{"worker", "--help"}, "Usage: till worker"},
		{"org create --help lists its flags", []string{"org", "create", "--help"}, "-slug"},
		{"token create --help lists its flags", []string{"token", "create", "--help"}, "-expires-in"},
		{"user create --help lists its flags", []string{"user", "create", "--help"}, "-role"},
		{"database-url --help says it prints a secret", []string{"database-url", "--help"}, "contains a secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), c.args, getenvOf(map[string]string{"TILL_DATA_DIR": t.TempDir()}), &out); err != nil {
				t.Fatalf("run: %v", err)
			}
			if !strings.Contains(out.String(), c.want) {
				t.Fatalf("output lacks %q:\n%s", c.want, out.String())
			}
		})
	}
}

func TestUnknownCommandFails(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"frobnicate"}, getenvOf(nil), &out)
	if err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("err = %v, want unknown command", err)
	}
}

func TestMissingPostgresBinariesSayHowToFix(t *testing.T) {
	empty := t.TempDir()
	var out bytes.Buffer
	err := run(context.Background(), []string{"migrate"},
		getenvOf(map[string]string{"TILL_DATA_DIR": t.TempDir(), "TILL_PG_BINDIR": empty}), &out)
	if err == nil {
		t.Fatal("migrate succeeded without PostgreSQL binaries")
	}
	for _, want := range []string{"apt-get install postgresql", "DATABASE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

var tokenLine = regexp.MustCompile(`(?m)^\s*(till_oat_[A-Za-z0-9]+)\s*$`)

// TestServeFromScratch runs the embedded default end to end: first start creates the demo
// organization and prints a working token once, the token reaches GraphQL and /v1, the
// admin commands work, a restart reuses the data and prints no new token.
func TestServeFromScratch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	dataDir := t.TempDir()
	addr := freeAddr(t)
	metricsAddr := freeAddr(t)
	vars := map[string]string{"TILL_DATA_DIR": dataDir, "TILL_ADDR": addr, "TILL_LOG_LEVEL": "error",
		"TILL_METRICS_ADDR": metricsAddr}

	out, stop := startServe(t, vars)
	m := tokenLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("first start printed no token:\n%s", out.String())
	}
	token := m[1]
	base := "http://" + addr

	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 404,
		"/debug/pprof/": 404, "http://" + metricsAddr + "/metrics": 200, "http://" + metricsAddr + "/debug/pprof/": 200} {
		if !strings.HasPrefix(path, "http:") {
			path = base + path
		}
		resp, err := http.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
	body := postGraphQL(t, base, token, `{ organization { slug } }`)
	if !strings.Contains(body, `"slug":"demo"`) {
		t.Fatalf("organization query answered %s", body)
	}
	rotated := postGraphQL(t, base, token, `mutation { rotateLicenseSigningKey { keyId } }`)
	kid := regexp.MustCompile(`"keyId":"([^"]+)"`).FindStringSubmatch(rotated)
	orgID := regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(postGraphQL(t, base, token, `{ organization { id } }`))
	if kid == nil || orgID == nil {
		t.Fatalf("rotateLicenseSigningKey answered %s", rotated)
	}
	if jwks := get(t, base+"/.well-known/till/organizations/"+orgID[1]+"/license-keys.json"); !strings.Contains(jwks, `"kid":"`+kid[1]+`"`) {
		t.Errorf("published license keys lack %s: %s", kid[1], jwks)
	}
	created := postGraphQL(t, base, token, `mutation { createCustomer(input: {email: "ev@example.com"}) { id } }`)
	if !strings.Contains(created, `"createCustomer":{"id"`) {
		t.Fatalf("createCustomer answered %s", created)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		events := postGraphQL(t, base, token, `{ domainEvents(type: ["customer.created"]) { items { type payload } } }`)
		if strings.Contains(events, `\"email\":\"ev@example.com\"`) || strings.Contains(events, `"email":"ev@example.com"`) {
			if !strings.Contains(events, `"type":"customer.created","timestamp":"`) {
				t.Errorf("payload lacks the webhook envelope: %s", events)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("customer.created was not rendered within 10s: %s", events)
		}
		time.Sleep(50 * time.Millisecond)
	}
	metrics := get(t, "http://"+metricsAddr+"/metrics")
	if !strings.Contains(metrics, `till_http_requests_total{method="POST",route="/graphql",status="200"}`) ||
		!strings.Contains(metrics, "go_sql_open_connections") {
		t.Errorf("metrics lack route or pool series:\n%.2000s", metrics)
	}
	var live bytes.Buffer
	if err := run(context.Background(), []string{"org", "create", "--name", "Live", "--slug", "live"}, getenvOf(vars), &live); err != nil {
		t.Fatalf("org create next to a running server: %v", err)
	}
	second := map[string]string{"TILL_DATA_DIR": vars["TILL_DATA_DIR"], "TILL_ADDR": freeAddr(t), "TILL_LOG_LEVEL": "error"}
	if err := run(context.Background(), []string{"serve"}, getenvOf(second), &live); err == nil ||
		!strings.Contains(err.Error(), "already uses") {
		t.Errorf("a second serve on the same data directory: err = %v", err)
	}
	if body := postGraphQL(t, base, token, `{ organization { slug } }`); !strings.Contains(body, `"demo"`) {
		t.Errorf("the server stopped answering after an admin command ran next to it: %s", body)
	}
	stop()

	var cli bytes.Buffer
	if err := run(context.Background(), []string{"org", "create", "--name", "Acme", "--slug", "acme"}, getenvOf(vars), &cli); err != nil {
		t.Fatalf("org create: %v", err)
	}
	if err := run(context.Background(), []string{"token", "create", "--org", "acme", "--scopes", "customers:read"}, getenvOf(vars), &cli); err != nil {
		t.Fatalf("token create: %v", err)
	}
	acmeToken := tokenLine.FindStringSubmatch(cli.String())
	if acmeToken == nil {
		t.Fatalf("token create printed no token:\n%s", cli.String())
	}
	if err := run(context.Background(), []string{"org", "create", "--name", "Acme", "--slug", "acme"}, getenvOf(vars), &cli); err == nil ||
		!strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate slug: err = %v", err)
	}

	out2, stop2 := startServe(t, vars)
	defer stop2()
	if tokenLine.MatchString(out2.String()) {
		t.Errorf("restart printed a token again:\n%s", out2.String())
	}
	if body := postGraphQL(t, base, token, `{ organization { slug } }`); !strings.Contains(body, `"demo"`) {
		t.Errorf("first token stopped working after restart: %s", body)
	}
	if body := postGraphQL(t, base, acmeToken[1], `{ customers { pagination { totalCount } } }`); !strings.Contains(body, `"totalCount":0`) {
		t.Errorf("CLI token does not work: %s", body)
	}
}

// startServe runs `till serve` until its ready line and returns its output and a stop func
// that interrupts it and waits for a clean exit.
func startServe(t *testing.T, vars map[string]string) (*syncBuffer, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, getenvOf(vars), out) }()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "Till is ready") {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve exited early: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve not ready after 60s:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve returned %v", err)
			}
			pidFile := filepath.Join(vars["TILL_DATA_DIR"], "pg", "data", "postmaster.pid")
			if _, err := os.Stat(pidFile); err == nil {
				t.Errorf("postmaster.pid still present after shutdown: cluster not stopped")
			}
		})
	}
	t.Cleanup(stop)
	return out, stop
}

// postGraphQL runs a query against the server at base and returns the raw body.
func postGraphQL(t *testing.T, base, token, query string) string {
	t.Helper()
	res, err := resolverstest.Post(t.Context(), http.DefaultClient, base+"/graphql", token, query, nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Body)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		sb.WriteString(sc.Text() + "\n")
	}
	return sb.String()
}

func TestMain(m *testing.M) {
	if os.Getenv(runAsTill) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(storagetest.Main(m))
}

// TestDatabaseURLNeedsSharedDocuments refuses to start a server on a shared database whose
// documents would stay in its own data directory, and says what to set.
func TestDatabaseURLNeedsSharedDocuments(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	vars := map[string]string{"TILL_DATA_DIR": t.TempDir(), "TILL_ADDR": freeAddr(t), "TILL_LOG_LEVEL": "error",
		"DATABASE_URL": storagetest.DSN(t), "TILL_SECRET": "a-test-secret"}
	for _, cmd := range []string{"serve", "worker"} {
		err := run(t.Context(), []string{cmd}, getenvOf(vars), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "TILL_BLOB_DIR") || !strings.Contains(err.Error(), "TILL_S3_BUCKET") {
			t.Errorf("%s: err = %v, want a refusal naming TILL_BLOB_DIR and TILL_S3_BUCKET", cmd, err)
		}
	}
}

// TestServeWithDatabaseURL uses the given server and starts no cluster of its own.
func TestServeWithDatabaseURL(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	dataDir := t.TempDir()
	addr := freeAddr(t)
	vars := map[string]string{"TILL_DATA_DIR": dataDir, "TILL_ADDR": addr, "TILL_LOG_LEVEL": "error",
		"DATABASE_URL": storagetest.DSN(t), "TILL_SECRET": "a-test-secret", "TILL_BLOB_DIR": t.TempDir()}
	out, stop := startServe(t, vars)
	defer stop()
	if !strings.Contains(out.String(), "DATABASE_URL=host=") {
		t.Errorf("configuration does not show the database:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dataDir, "pg")); !os.IsNotExist(err) {
		t.Errorf("an embedded cluster directory was made although DATABASE_URL is set (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "secret")); !os.IsNotExist(err) {
		t.Errorf("a secret file was written although TILL_SECRET is set (stat: %v)", err)
	}
	token := tokenLine.FindStringSubmatch(out.String())
	if token == nil {
		t.Fatalf("no demo token printed on an empty database:\n%s", out.String())
	}
	if body := postGraphQL(t, "http://"+addr, token[1], `{ organization { slug } }`); !strings.Contains(body, `"demo"`) {
		t.Fatalf("organization query answered %s", body)
	}
}

func TestConfigurationPrintsSecretsMasked(t *testing.T) {
	cfg, err := loadConfig(getenvOf(map[string]string{"DATABASE_URL": "postgres://till:hunter2@db:5432/till",
		"TILL_SECRET": "supersecretvalue"}))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg.print(&out)
	for _, leak := range []string{"hunter2", "supersecretvalue"} {
		if strings.Contains(out.String(), leak) {
			t.Errorf("configuration print leaks %q:\n%s", leak, out.String())
		}
	}
	if !strings.Contains(out.String(), "postgres://till:xxxxx@db:5432/till") {
		t.Errorf("masked URL missing:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "TILL_AUDIT_RETENTION=8760h0m0s") {
		t.Errorf("the audit log's default retention of a year is not printed:\n%s", out.String())
	}
}

// TestEveryVariableIsRead: a value set for each documented variable reaches the
// configuration, so none is silently ignored.
func TestEveryVariableIsRead(t *testing.T) {
	cases := []struct {
		name  string
		value string
		got   func(config) any
		want  any
	}{
		{"TILL_FILES_MAX_PART_SIZE", "1048576", func(c config) any { return c.FilesMaxPartSize }, int64(1 << 20)},
		{"TILL_FILES_PRESIGN_TTL", "3m", func(c config) any { return c.FilesPresignTTL }, 3 * time.Minute},
		{"TILL_OIDC_KEY_ROTATION", "48h", func(c config) any { return c.OIDCKeyRotation }, 48 * time.Hour},
		{"TILL_AUDIT_RETENTION", "720h", func(c config) any { return c.AuditRetention }, 720 * time.Hour},
		{"TILL_WEBHOOK_CONCURRENCY", "7", func(c config) any { return c.WebhookConcurrency }, 7},
		{"TILL_MAX_CONNS_PER_IP", "9", func(c config) any { return c.MaxConnsPerIP }, 9},
		{"TILL_DB_STATEMENT_CACHE", "0", func(c config) any { return c.StatementCache }, 0},
	}
	for _, c := range cases {
		t.Run(c.name+" is read", func(t *testing.T) {
			cfg, err := loadConfig(getenvOf(map[string]string{c.name: c.value}))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.got(cfg); got != c.want {
				t.Errorf("%s=%s gave %v, want %v", c.name, c.value, got, c.want)
			}
		})
	}
}
