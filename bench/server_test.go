package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"till/internal/pgembed"
	"till/resolvers/resolverstest"
)

// serverPoolSize is `till serve`'s database pool size when TILL_DB_MAX_CONNS is unset (see
// cmd/till/config.go). The ceiling endpoint gets the same pool so that neither side wins by
// having more connections.
const serverPoolSize = 20

// readyTimeout bounds a first start: initdb, migrations and the HTTP listener.
const readyTimeout = 3 * time.Minute

// tillServer is a real `till serve` subprocess on loopback with its own data directory and
// embedded PostgreSQL, so that the benchmark measures the binary people deploy.
type tillServer struct {
	bin     string
	dataDir string
	baseURL string
	env     []string
	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
}

// requirePostgres skips the benchmark when the machine has no PostgreSQL server binaries,
// which `till serve` needs for its embedded cluster.
func requirePostgres(b *testing.B) {
	b.Helper()
	var err error
	if dir := os.Getenv("TILL_PG_BINDIR"); dir != "" {
		err = pgembed.CheckBinDir(dir)
	} else {
		_, err = pgembed.FindBinDir()
	}
	if errors.Is(err, pgembed.ErrNoBinaries) {
		b.Skipf("PostgreSQL server binaries not found: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// moduleRoot walks up from the working directory (the package directory under `go test`) to
// the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// buildTill compiles ./cmd/till into dir and returns the binary's path.
func buildTill(b *testing.B, dir string) string {
	b.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("the go tool is not on PATH: %v", err)
	}
	root, err := moduleRoot()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "till")
	cmd := exec.Command(goTool, "build", "-o", bin, "./cmd/till")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building till: %v\n%s", err, out)
	}
	return bin
}

// benchDataDir is a fresh directory for the server. It is world-searchable because a root
// caller's PostgreSQL runs as an unprivileged user that must reach its data inside; a mode-700
// temp dir would push the cluster into a fallback under the temp dir that nothing removes.
func benchDataDir(b *testing.B) string {
	b.Helper()
	dir, err := os.MkdirTemp("", "till-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}

// serverEnv is the caller's environment without any Till or database setting that could send
// the server elsewhere, plus the benchmark's own. The rate limits of the public license
// endpoints are disabled: one client hammering one key is exactly what they exist to stop.
func serverEnv(dataDir, addr string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "DATABASE_URL" || (strings.HasPrefix(name, "TILL_") && name != "TILL_PG_BINDIR") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TILL_DATA_DIR="+dataDir, "TILL_ADDR="+addr, "TILL_LOG_LEVEL=error",
		"TILL_LICENSE_RATE_PER_IP=0", "TILL_LICENSE_RATE_PER_KEY=0")
}

// freeAddr reserves a loopback port and releases it for the server to take.
func freeAddr(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startTill builds and starts `till serve` with the benchmark's environment plus env
// (NAME=value), waits until /readyz answers 200 and stops the server (and with it
// PostgreSQL) when the benchmark ends.
func startTill(b *testing.B, env ...string) *tillServer {
	b.Helper()
	requirePostgres(b)
	dataDir := benchDataDir(b)
	addr := freeAddr(b)
	s := &tillServer{bin: buildTill(b, dataDir), dataDir: dataDir, baseURL: "http://" + addr,
		env: append(serverEnv(dataDir, addr), env...), exited: make(chan struct{}), logPath: filepath.Join(dataDir, "till.log")}
	logf, err := os.Create(s.logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer logf.Close()
	s.cmd = exec.Command(s.bin, "serve")
	s.cmd.Env, s.cmd.Dir = s.env, dataDir
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	b.Cleanup(s.stop)
	if err := s.waitReady(); err != nil {
		b.Fatalf("till serve: %v\n%s", err, s.logTail())
	}
	return s
}

// waitReady polls /readyz until it answers 200, the process exits or readyTimeout passes.
func (s *tillServer) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		resp, err := client.Get(s.baseURL + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("exited before it was ready: %v", s.cmd.ProcessState)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("not ready after %s", readyTimeout)
}

// stop interrupts the server so it shuts PostgreSQL down cleanly, and kills it if it hangs.
func (s *tillServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// logTail is the end of the server's output, to explain a failure in place.
func (s *tillServer) logTail() string {
	out, _ := os.ReadFile(s.logPath)
	if len(out) > 4096 {
		out = out[len(out)-4096:]
	}
	return string(out)
}

// demoSeed is the part of `till demo`'s output the benchmark uses.
type demoSeed struct {
	Organization struct {
		ID string `json:"id"`
	} `json:"organization"`
	OrganizationToken string            `json:"organization_token"`
	LicenseKeys       map[string]string `json:"license_keys"`
	Products          map[string]string `json:"products"`
	Benefits          map[string]string `json:"benefits"`
	Discounts         map[string]string `json:"discounts"`
}

// demo runs `till demo` next to the running server (it attaches to the server's cluster) and
// returns the organization, its token and its license keys.
func (s *tillServer) demo(b *testing.B) demoSeed {
	b.Helper()
	cmd := exec.Command(s.bin, "demo")
	cmd.Env, cmd.Dir = s.env, s.dataDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("till demo: %v\n%s", err, stderr.String())
	}
	var seed demoSeed
	if err := json.Unmarshal(out, &seed); err != nil {
		b.Fatalf("till demo output: %v\n%s", err, out)
	}
	if seed.Organization.ID == "" || seed.OrganizationToken == "" {
		b.Fatalf("till demo printed no organization or token:\n%s", out)
	}
	return seed
}

// benchKey is the license key every validation names.
type benchKey struct {
	ID         string `json:"id"`
	Key        string `json:"key"`
	Status     string `json:"status"`
	LimitUsage *int   `json:"limitUsage"`
	ExpiresAt  string `json:"expiresAt"`
}

// pickKey chooses a granted key without a usage limit, so that every validation succeeds
// however many run, preferring one `till demo` names.
func (s *tillServer) pickKey(b *testing.B, seed demoSeed) benchKey {
	b.Helper()
	var data struct {
		LicenseKeys struct{ Items []benchKey } `json:"licenseKeys"`
	}
	s.graphql(b, seed.OrganizationToken, `{ licenseKeys(limit: 100, status: [granted]) { items { id key status limitUsage expiresAt } } }`, &data)
	named := map[string]bool{}
	for _, id := range seed.LicenseKeys {
		named[id] = true
	}
	var found *benchKey
	for i, k := range data.LicenseKeys.Items {
		if k.Status != "granted" || k.LimitUsage != nil {
			continue
		}
		if found == nil || (named[k.ID] && !named[found.ID]) {
			found = &data.LicenseKeys.Items[i]
		}
	}
	if found == nil {
		b.Fatalf("the demo organization has no granted license key without a usage limit: %+v", data.LicenseKeys.Items)
	}
	return *found
}

// graphql runs one query as the organization token and decodes its data into out.
func (s *tillServer) graphql(b *testing.B, token, query string, out any) {
	b.Helper()
	res, err := resolverstest.Post(context.Background(), http.DefaultClient, s.baseURL+"/graphql", token, query, nil)
	if err != nil {
		b.Fatal(err)
	}
	if res.Status != http.StatusOK || len(res.Errors) > 0 {
		b.Fatalf("graphql %s: status %d: %s", query, res.Status, res.Body)
	}
	if err := json.Unmarshal(res.Data, out); err != nil {
		b.Fatalf("graphql data: %v: %s", err, res.Body)
	}
}

// send sends body as JSON to path with the token and returns the status and the answer.
func (s *tillServer) send(b *testing.B, token, method, path string, body any) (int, []byte) {
	b.Helper()
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest(method, s.baseURL+path, bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, answer
}

// dsn attaches to the PostgreSQL cluster the server started (never starting or stopping it)
// and returns a DSN for the server's database over its private unix socket.
func (s *tillServer) dsn(b *testing.B) string {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(s.dataDir, "pg"), BinDir: os.Getenv("TILL_PG_BINDIR"), Attach: true})
	if err != nil {
		b.Fatalf("attaching to the server's PostgreSQL: %v", err)
	}
	defer c.Stop() // a no-op for an attached cluster; keeps the contract if it ever is not
	if c.PID() != 0 {
		b.Fatal("attaching started a second PostgreSQL instead of using the server's")
	}
	return c.DSN("till")
}
