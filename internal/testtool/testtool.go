// Package testtool runs the real servers some tests talk to (an S3 server, Stripe's API
// mock): it builds them from source with the go command running the tests, once per
// machine, and runs them as child processes that end with the test.
package testtool

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"time"
)

// Install returns the binary `go install pkg@version` makes, building it on the machine's
// first use into the user cache directory, where later runs find it. A build goes to a
// fresh directory and is renamed into place, so test processes installing at once never
// see half a binary.
func Install(pkg, version string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	name := path.Base(pkg)
	dir := filepath.Join(cache, "till-test-tools", name+"-"+version)
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// go test puts the toolchain's own bin directory first on the test's PATH.
	cmd := exec.Command("go", "install", pkg+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w\n%s", pkg, version, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, name), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// stopGrace is how long a server may take to exit after an interrupt before it is killed.
const stopGrace = 10 * time.Second

// Server is a running server process.
type Server struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
	err  error
}

// Start runs bin with args; the server's output is kept for Output.
func Start(bin string, args ...string) (*Server, error) {
	s := &Server{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	s.cmd.SysProcAttr = serverProcAttr()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// Exited is closed when the server has exited, for waits that must not outlast it.
func (s *Server) Exited() <-chan struct{} { return s.done }

// Stop interrupts the server and waits for it to exit, killing it after stopGrace.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(stopGrace):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Output is what the server wrote and how it exited; call it once it has.
func (s *Server) Output() string {
	return fmt.Sprintf("%s(exit: %v)", s.out.String(), s.err)
}

// FreeLoopbackAddr picks a port on 127.0.0.1 that nothing listens on at the moment;
// callers start their server on it and try another should it be taken meanwhile.
func FreeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
