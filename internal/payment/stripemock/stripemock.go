// Package stripemock runs stripe-mock, Stripe's official mock of its API, for tests of
// the Stripe processor without a network. stripe-mock validates every request against
// Stripe's OpenAPI specification and answers with fixtures, so a test learns that what
// the processor sends is a request Stripe would accept and that it reads Stripe's
// responses; outcomes stripe-mock cannot produce (declines, faults) need a fake server.
package stripemock

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The stripe-mock release the tests run against, built with the go command running them.
const (
	modulePath = "github.com/stripe/stripe-mock"
	version    = "v0.203.0"
)

// startTimeout bounds how long stripe-mock may take to answer after it starts (it loads
// and indexes the whole specification first, about a second).
const startTimeout = 30 * time.Second

// Start runs stripe-mock on loopback until tb ends and returns its base URL, to be given
// to the processor as its API URL. It skips tb, saying why, when stripe-mock cannot be
// installed (no module proxy), and fails it when stripe-mock is installed but does not
// start.
func Start(tb testing.TB) string {
	tb.Helper()
	bin, err := install()
	if err != nil {
		tb.Skipf("stripe-mock %s cannot be installed: %v", version, err)
	}
	var last error
	for range 3 {
		url, err := run(tb, bin)
		if err == nil {
			return url
		}
		last = err
	}
	tb.Fatalf("stripe-mock did not start: %v", last)
	return ""
}

// install returns stripe-mock's binary, installing it on the machine's first use into the
// user cache directory, where later runs find it. An install goes to a fresh directory
// and is renamed into place, so test processes starting at once never see half a binary.
func install() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "till", "stripe-mock-"+version)
	bin := filepath.Join(dir, "stripe-mock")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, "install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// go test puts the toolchain's own bin directory first on the test's PATH.
	cmd := exec.Command("go", "install", modulePath+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w\n%s", modulePath, version, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "stripe-mock"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// run starts stripe-mock on two free loopback ports (it serves HTTPS beside HTTP, and
// would bind every interface for it if not told otherwise) and waits until it answers.
// The server stops when tb ends.
func run(tb testing.TB, bin string) (string, error) {
	httpAddr, err := freeLoopbackAddr()
	if err != nil {
		return "", err
	}
	httpsAddr, err := freeLoopbackAddr()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "-http-addr", httpAddr, "-https-addr", httpsAddr)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	url := "http://" + httpAddr
	if err := waitUntilAnswering(url, exited); err != nil {
		stop()
		return "", fmt.Errorf("%w\n%s", err, out.String())
	}
	tb.Cleanup(stop)
	return url, nil
}

// waitUntilAnswering polls stripe-mock until it answers an API request, it exits, or
// startTimeout passes.
func waitUntilAnswering(url string, exited <-chan error) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		req, err := http.NewRequest(http.MethodGet, url+"/v1/customers", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer sk_test_stripemock")
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("stripe-mock exited: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("stripe-mock did not answer within " + startTimeout.String())
		}
	}
}

// freeLoopbackAddr is a loopback address whose port was free a moment ago; Start tries
// again should another process take it meanwhile.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
