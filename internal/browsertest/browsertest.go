// Package browsertest gives tests a real headless Chromium, for what only a browser
// decides: whether a page on one origin may read an answer from another (CORS), how
// GraphiQL renders. It installs Debian's chromium package when it is missing and the test
// process can (root, apt-get), at most once per `go test` run, and skips the test with the
// reason where it cannot.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// installTimeout bounds one apt-get run: the package and its libraries are a few hundred
// megabytes.
const installTimeout = 10 * time.Minute

// installOnce makes one test binary try the installation once whatever its number of
// browser tests; the marker file (see install) does the same across the binaries of one
// `go test` run.
var installOnce = sync.OnceValues(install)

// Chromium returns the path of the Chromium binary, installing it first if need be; where
// it cannot be installed it skips tb and says why.
func Chromium(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts a browser")
	}
	path, err := installOnce()
	if err != nil {
		tb.Skipf("no Chromium for the browser test: %v", err)
	}
	return path
}

// New starts a headless Chromium for tb and returns a context for chromedp.Run in its
// first tab; the browser is stopped when the test ends. Every action of the test must
// finish within timeout.
func New(tb testing.TB, timeout time.Duration) context.Context {
	tb.Helper()
	path := Chromium(tb)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path),
		chromedp.UserDataDir(tb.TempDir()))
	if os.Geteuid() == 0 {
		// Chromium refuses to run its sandbox as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// The first Run starts the browser, whose life is that call's context: start it here,
	// without the deadline, which then bounds only the test's own actions.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		tb.Fatalf("starting Chromium: %v", err)
	}
	tctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	tb.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	return tctx
}

// install finds Chromium or installs Debian's package. Test binaries of one `go test` run
// share their parent, the go command; a marker named after it records a failed attempt, so
// the other binaries skip at once instead of running apt-get again, and a lock keeps two
// of them from running it together.
func install() (string, error) {
	if path, err := lookChromium(); err == nil {
		return path, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("chromium is not installed and installing it needs root (apt-get install chromium)")
	}
	aptGet, err := exec.LookPath("apt-get")
	if err != nil {
		return "", errors.New("chromium is not installed and there is no apt-get to install it")
	}
	base := filepath.Join(os.TempDir(), "till-browsertest-install")
	lock, err := os.OpenFile(base+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	// Closing the file releases the lock.
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	if path, err := lookChromium(); err == nil {
		return path, nil
	}
	marker := base + "." + strconv.Itoa(os.Getppid()) + ".failed"
	if b, err := os.ReadFile(marker); err == nil {
		return "", fmt.Errorf("installing it failed earlier in this run: %s", b)
	}
	if err := aptInstall(aptGet); err != nil {
		_ = os.WriteFile(marker, []byte(err.Error()), 0o600)
		return "", err
	}
	return lookChromium()
}

// aptInstall runs apt-get install, and once more after apt-get update when the package
// lists are missing or stale.
func aptInstall(aptGet string) error {
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	apt := func(args ...string) error {
		cmd := exec.CommandContext(ctx, aptGet, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %v: %s", strings.Join(args, " "), err, lastLines(string(out), 5))
		}
		return nil
	}
	if apt("install", "-y", "--no-install-recommends", "chromium") == nil {
		return nil
	}
	if err := apt("update"); err != nil {
		return err
	}
	return apt("install", "-y", "--no-install-recommends", "chromium")
}

// lookChromium finds the browser where Debian puts it or on PATH.
func lookChromium() (string, error) {
	if _, err := os.Stat(chromiumPath); err == nil {
		return chromiumPath, nil
	}
	return exec.LookPath("chromium")
}

// lastLines is the end of a command's output, enough to say why it failed.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
