// Package pgembed runs a private PostgreSQL cluster made from the machine's own server
// binaries. It exists so that `till serve` works with nothing but PostgreSQL installed (no
// DATABASE_URL, no running service) and so that `go test ./...` can get a real database
// without a mock or a download: binaries are found with FindBinDir, and Start runs initdb on
// first use and then the postmaster as a child process on a private unix socket.
//
// When the caller is root, initdb and postgres (which refuse to run as root) run as the
// `postgres` user, or `nobody`, and the cluster moves under the temp dir if that user cannot
// reach the requested directory.
package pgembed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Superuser is the role initdb creates and DSN connects as. A fixed name keeps DSNs stable
// across machines, whatever operating-system user runs the server.
const Superuser = "till"

// socketOnlyPort numbers the socket file when there is no TCP listener. The socket directory
// is private to the cluster, so the conventional number cannot collide with anything.
const socketOnlyPort = 5432

// Options configure Start. Only Dir is required.
type Options struct {
	// Dir is the cluster root: the data directory is Dir/data, the socket directory Dir/run and
	// the server log Dir/postgres.log, unless a fallback applies (see Cluster.Dir).
	Dir string
	// BinDir holds initdb and postgres; empty means FindBinDir.
	BinDir string
	// Port is the TCP port to listen on at 127.0.0.1; 0 means no TCP listener at all, only the
	// unix socket, so that nothing else on the machine can reach the server.
	Port int
	// Settings are extra server settings passed as `-c name=value`, applied after this
	// package's own. Tests pass fsync=off, synchronous_commit=off and full_page_writes=off;
	// with fsync=off initdb also skips its final sync. port, listen_addresses,
	// unix_socket_directories and data_directory are Start's to set and are rejected here.
	Settings map[string]string
	// Logger receives start, fallback and stop events; nil discards them. The server's own
	// output goes to the log file, not here.
	Logger *slog.Logger
	// Attach connects to a server another process already runs on Dir (a `till serve`, say)
	// instead of failing with ErrAlreadyRunning; Stop then leaves that server running.
	Attach bool
}

// Cluster is a running PostgreSQL server started by Start. Stop it when done; if the calling
// process dies instead, the server is killed with it (on Linux).
type Cluster struct {
	layout  layout
	binDir  string
	acct    account
	port    int // the number in the socket file name, and the TCP port when tcp is set
	tcp     bool
	created bool
	logger  *slog.Logger

	cmd     *exec.Cmd
	done    chan struct{} // closed when the postmaster has exited; waitErr is then set
	waitErr error

	attached bool // the server belongs to another process; Stop leaves it alone

	stopOnce sync.Once
	stopErr  error
}

// Start brings up the cluster in o.Dir: it runs initdb on first use (superuser till, trust
// authentication on the local socket, password authentication over TCP with a password it
// makes and keeps, see TCPDSN, UTF8, C locale),
// otherwise reuses the data; then starts postgres and returns once it accepts connections.
// ctx bounds only the start, not the server's life. A lock file left by a killed earlier run
// is cleared; a server still running on the same data gives ErrAlreadyRunning.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Dir == "" {
		return nil, errors.New("pgembed: Options.Dir is required")
	}
	if o.Port < 0 || o.Port > 65535 {
		return nil, fmt.Errorf("pgembed: invalid port %d", o.Port)
	}
	for _, name := range []string{"port", "listen_addresses", "unix_socket_directories", "data_directory"} {
		if _, ok := o.Settings[name]; ok {
			return nil, fmt.Errorf("pgembed: setting %s is managed by Start (use Options.Port or Options.Dir)", name)
		}
	}
	c := &Cluster{logger: o.Logger, port: o.Port, tcp: o.Port > 0}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if !c.tcp {
		c.port = socketOnlyPort
	}
	c.binDir = o.BinDir
	if c.binDir == "" {
		dir, err := FindBinDir()
		if err != nil {
			return nil, err
		}
		c.binDir = dir
	} else if err := CheckBinDir(c.binDir); err != nil {
		return nil, err
	}
	acct, err := serverAccount()
	if err != nil {
		return nil, err
	}
	c.acct = acct
	if c.layout, err = resolveLayout(o.Dir, acct, c.port, c.logger); err != nil {
		return nil, err
	}

	unlock, err := lockDir(c.layout.root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	began := time.Now()
	if _, err := os.Stat(filepath.Join(c.layout.data, "PG_VERSION")); errors.Is(err, fs.ErrNotExist) {
		if err := c.initdb(ctx, o.Settings["fsync"] == "off"); err != nil {
			return nil, err
		}
		c.created = true
		c.logger.Info("pgembed: initialized cluster", "data_dir", c.layout.data, "took", time.Since(began))
	} else if err := ownTree(c.layout.data, acct); err != nil {
		return nil, err
	}
	if err := c.start(ctx, o.Settings); err != nil {
		if o.Attach && !c.created && errors.Is(err, ErrAlreadyRunning) {
			c.attached = true
			c.logger.Info("pgembed: using the PostgreSQL server already running", "dir", c.layout.root)
			return c, nil
		}
		return nil, err
	}
	if c.tcp {
		if err := c.ensurePassword(ctx); err != nil {
			_ = c.Stop()
			return nil, err
		}
	}
	c.logger.Info("pgembed: started PostgreSQL", "dir", c.layout.root, "socket_dir", c.layout.socket,
		"tcp_port", c.Port(), "user", acct.name, "pid", c.PID(), "created", c.created, "took", time.Since(began))
	return c, nil
}

// initdb creates the data directory next to its final place and renames it there only on
// success, so that a run interrupted half-way never leaves a directory that looks usable.
func (c *Cluster) initdb(ctx context.Context, noSync bool) error {
	tmp := c.layout.data + ".init"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if err := own(tmp, c.acct, 0o700); err != nil {
		return err
	}
	args := []string{"-D", tmp, "-U", Superuser, "--auth-local=trust", "--auth-host=scram-sha-256",
		"--encoding=UTF8", "--locale=C"}
	if noSync {
		args = append(args, "--no-sync")
	}
	logf, err := c.openLog()
	if err != nil {
		return err
	}
	defer logf.Close()
	offset := logSize(c.layout.log)
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, "initdb"), args...)
	c.prepare(cmd, logf)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgembed: initdb failed: %w\n%s", err, logTail(c.layout.log, offset))
	}
	if err := os.Rename(tmp, c.layout.data); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	return nil
}

// start runs the postmaster and waits until it is ready. A server killed a moment ago can leave
// backends that are still exiting and holding its shared memory; postgres then refuses to
// start, so start retries for a few seconds when the log says exactly that.
func (c *Cluster) start(ctx context.Context, settings map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for attempt := 0; ; attempt++ {
		for _, lock := range []string{filepath.Join(c.layout.data, "postmaster.pid"), socketPath(c.layout.socket, c.port) + ".lock"} {
			if err := clearStaleLock(lock, c.layout.data); err != nil {
				return err
			}
		}
		offset := logSize(c.layout.log)
		err := c.launch(ctx, settings)
		if err == nil {
			return nil
		}
		tail := logTail(c.layout.log, offset)
		retryable := strings.Contains(tail, "is still in use") || strings.Contains(tail, "already exists")
		if !retryable || attempt >= 50 || ctx.Err() != nil {
			return fmt.Errorf("pgembed: starting postgres: %w\n%s", err, tail)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// launch starts one postmaster and waits for it to report "ready" in postmaster.pid.
func (c *Cluster) launch(ctx context.Context, settings map[string]string) error {
	listen := ""
	if c.tcp {
		listen = "127.0.0.1"
	}
	args := []string{"-D", c.layout.data, "-k", c.layout.socket, "-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=" + listen}
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		args = append(args, "-c", name+"="+settings[name])
	}
	logf, err := c.openLog()
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(c.binDir, "postgres"), args...)
	c.prepare(cmd, logf)
	// Pdeathsig fires when the forking OS thread exits, and a thread exits only when a goroutine
	// locked to it returns. A fresh goroutine never runs on such a thread, whoever calls Start.
	startErr := make(chan error, 1)
	go func() { startErr <- cmd.Start() }()
	if err := <-startErr; err != nil {
		return err
	}
	c.cmd = cmd
	c.done = make(chan struct{})
	done := c.done
	go func() {
		c.waitErr = cmd.Wait()
		close(done)
	}()

	pidFile := filepath.Join(c.layout.data, "postmaster.pid")
	delay := 2 * time.Millisecond
	for {
		if lf, err := readLockFile(pidFile); err == nil && lf.pid == cmd.Process.Pid && lf.status == "ready" {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("postgres exited during start: %w", c.waitErr)
		case <-ctx.Done():
			_ = c.shutdown(syscall.SIGQUIT, 10*time.Second)
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Millisecond)
	}
}

// prepare gives a server program its directory, output and identity.
func (c *Cluster) prepare(cmd *exec.Cmd, logf *os.File) {
	cmd.Dir = c.layout.root // the server user may not be able to enter the caller's cwd
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(c.acct)
}

// openLog opens the server log for appending; the child writes through the inherited
// descriptor, so the file can stay private to the caller.
func (c *Cluster) openLog() (*os.File, error) {
	f, err := os.OpenFile(c.layout.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgembed: %w", err)
	}
	return f, nil
}

// Stop shuts the server down with a fast shutdown (SIGINT: roll back open transactions,
// checkpoint, exit) and waits for it to exit. It is safe to call more than once and from
// several goroutines; every call returns the first call's result.
func (c *Cluster) Stop() error {
	if c.attached {
		return nil
	}
	c.stopOnce.Do(func() {
		began := time.Now()
		c.stopErr = c.shutdown(syscall.SIGINT, time.Minute)
		c.logger.Info("pgembed: stopped PostgreSQL", "dir", c.layout.root, "took", time.Since(began), "err", c.stopErr)
	})
	return c.stopErr
}

// shutdown signals the postmaster and waits, escalating to an immediate shutdown (SIGQUIT)
// and then SIGKILL when it does not exit within timeout.
func (c *Cluster) shutdown(sig syscall.Signal, timeout time.Duration) error {
	select {
	case <-c.done:
		if c.waitErr != nil {
			return fmt.Errorf("pgembed: postgres had already exited: %w", c.waitErr)
		}
		return nil
	default:
	}
	for _, step := range []struct {
		sig     syscall.Signal
		timeout time.Duration
	}{{sig, timeout}, {syscall.SIGQUIT, 10 * time.Second}, {syscall.SIGKILL, 10 * time.Second}} {
		if err := c.cmd.Process.Signal(step.sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("pgembed: signalling postgres: %w", err)
		}
		select {
		case <-c.done:
			if step.sig != sig {
				return fmt.Errorf("pgembed: postgres ignored %v and was stopped with %v", sig, step.sig)
			}
			if c.waitErr != nil {
				return fmt.Errorf("pgembed: postgres: %w\n%s", c.waitErr, logTail(c.layout.log, max(0, logSize(c.layout.log)-1024)))
			}
			return nil
		case <-time.After(step.timeout):
		}
	}
	return errors.New("pgembed: postgres did not exit")
}

// DSN returns a lib/pq connection string for database over the cluster's unix socket as the
// superuser; no password is needed because the socket directory is private to the cluster.
func (c *Cluster) DSN(database string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
		dsnValue(c.layout.socket), c.port, Superuser, dsnValue(database))
}

// dsnValue quotes a key/value connection string value when it needs it.
func dsnValue(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\\") {
		return s
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// Created reports whether this Start ran initdb, i.e. the cluster is brand new; `till serve`
// uses it to create its demo organization exactly once.
func (c *Cluster) Created() bool { return c.created }

// Dir is the cluster root actually in use: Options.Dir, or its fallback under the temp dir
// when the server user could not reach Options.Dir.
func (c *Cluster) Dir() string { return c.layout.root }

// DataDir is the PostgreSQL data directory.
func (c *Cluster) DataDir() string { return c.layout.data }

// SocketDir is the directory holding the unix socket (the DSN's host).
func (c *Cluster) SocketDir() string { return c.layout.socket }

// LogPath is the file the server's output goes to, for pointing people at it.
func (c *Cluster) LogPath() string { return c.layout.log }

// Port is the TCP port the server listens on at 127.0.0.1, or 0 when it has no TCP listener.
func (c *Cluster) Port() int {
	if !c.tcp {
		return 0
	}
	return c.port
}

// PID is the postmaster's process id.
func (c *Cluster) PID() int {
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// User is the operating-system user the server runs as.
func (c *Cluster) User() string { return c.acct.name }

// BinDir is the directory of the server binaries in use.
func (c *Cluster) BinDir() string { return c.binDir }

// Done is closed when the postmaster exits, whether through Stop or not, so that a long-running
// caller can notice that its database went away.
func (c *Cluster) Done() <-chan struct{} { return c.done }
