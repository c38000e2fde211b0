package pgembed_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"till/internal/pgembed"
)

// helperEnv makes the test binary act as a throwaway parent process that starts a cluster and
// then waits to be killed, so tests can observe what a killed `till serve` leaves behind.
const helperEnv = "PGEMBED_TEST_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		c, err := pgembed.Start(context.Background(), pgembed.Options{Dir: dir, Settings: fastSettings()})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("pid", c.PID())
		select {}
	}
	os.Exit(m.Run())
}

// fastSettings trade durability for speed, as every test cluster should.
func fastSettings() map[string]string {
	return map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
}

// reachableTempDir is a t.TempDir that the server user can traverse even when the tests run as
// root (t.TempDir's parent is mode 0700), so no fallback kicks in.
func reachableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func start(t *testing.T, dir string) *pgembed.Cluster {
	t.Helper()
	began := time.Now()
	c, err := pgembed.Start(t.Context(), pgembed.Options{Dir: dir, Settings: fastSettings()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start (created=%v) took %v", c.Created(), time.Since(began))
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	return c
}

func open(t *testing.T, c *pgembed.Cluster) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func processUID(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatal("no Uid line in /proc status")
	return ""
}

func TestStartCreatesThenReusesTheCluster(t *testing.T) {
	// A long directory name also exercises the short socket directory fallback.
	dir := filepath.Join(reachableTempDir(t), strings.Repeat("d", 100))
	c := start(t, dir)
	if !c.Created() {
		t.Error("first Start: Created() = false, want true")
	}
	if c.Dir() != dir {
		t.Errorf("Dir() = %q, want %q (no fallback expected)", c.Dir(), dir)
	}
	if !strings.HasPrefix(c.SocketDir(), dir) {
		t.Cleanup(func() { os.RemoveAll(c.SocketDir()) })
	}
	if n := len(filepath.Join(c.SocketDir(), ".s.PGSQL.5432")); n > 107 {
		t.Errorf("socket path is %d bytes, over the unix limit", n)
	}
	if c.Port() != 0 {
		t.Errorf("Port() = %d, want 0 (socket only)", c.Port())
	}

	t.Run("the server runs as an unprivileged user", func(t *testing.T) {
		u, err := user.Lookup(c.User())
		if err != nil {
			t.Fatal(err)
		}
		if got := processUID(t, c.PID()); got != u.Uid {
			t.Errorf("postmaster uid = %s, want %s (%s)", got, u.Uid, c.User())
		}
		if os.Geteuid() == 0 && u.Uid == "0" {
			t.Error("running as root, but the server runs as root too")
		}
	})

	db := open(t, c)
	var who string
	if err := db.QueryRow(`SELECT current_user`).Scan(&who); err != nil {
		t.Fatal(err)
	}
	if who != pgembed.Superuser {
		t.Errorf("current_user = %q, want %q", who, pgembed.Superuser)
	}
	if _, err := db.Exec(`CREATE TABLE survivor (v text); INSERT INTO survivor VALUES ('kept')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	t.Run("a second server on the same data is refused", func(t *testing.T) {
		_, err := pgembed.Start(t.Context(), pgembed.Options{Dir: dir})
		if !errors.Is(err, pgembed.ErrAlreadyRunning) {
			t.Errorf("Start = %v, want ErrAlreadyRunning", err)
		}
	})

	t.Run("attaching uses the running server and leaves it running", func(t *testing.T) {
		other, err := pgembed.Start(t.Context(), pgembed.Options{Dir: dir, Attach: true})
		if err != nil {
			t.Fatalf("Start with Attach = %v", err)
		}
		adb := open(t, other)
		var v string
		if err := adb.QueryRow(`SELECT v FROM survivor`).Scan(&v); err != nil || v != "kept" {
			t.Fatalf("attached connection reads %q, %v", v, err)
		}
		adb.Close()
		if err := other.Stop(); err != nil {
			t.Fatalf("Stop of an attached cluster = %v", err)
		}
		if !alive(c.PID()) {
			t.Fatal("stopping the attached handle stopped the server")
		}
	})

	pid := c.PID()
	for i := range 2 {
		if err := c.Stop(); err != nil {
			t.Fatalf("Stop #%d: %v", i+1, err)
		}
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done() not closed after Stop")
	}
	if alive(pid) {
		t.Errorf("postmaster %d still running after Stop", pid)
	}
	if _, err := os.Stat(filepath.Join(c.DataDir(), "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("postmaster.pid left behind after a clean stop (stat: %v)", err)
	}

	c2 := start(t, dir)
	if c2.Created() {
		t.Error("second Start: Created() = true, want false")
	}
	var v string
	if err := open(t, c2).QueryRow(`SELECT v FROM survivor`).Scan(&v); err != nil || v != "kept" {
		t.Errorf("data after restart: %q, %v; want \"kept\"", v, err)
	}

	t.Run("CreateDatabase makes an application database once", func(t *testing.T) {
		for range 2 {
			if err := c2.CreateDatabase(t.Context(), "till app"); err != nil {
				t.Fatal(err)
			}
		}
		db, err := sql.Open("postgres", c2.DSN("till app"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Ping(); err != nil {
			t.Error(err)
		}
	})
}

func TestStartRecoversAfterTheParentWasKilled(t *testing.T) {
	dir := reachableTempDir(t)
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+dir)
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v (output %q)", err, line)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid ")))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}

	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	waitGone(t, pid) // the parent-death signal took the server down with its parent

	pidFile := filepath.Join(dir, "data", "postmaster.pid")
	stale, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("a killed server should leave postmaster.pid behind: %v", err)
	}

	c := start(t, dir)
	if c.Created() {
		t.Error("Created() = true after a restart")
	}
	if err := open(t, c).Ping(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}

	t.Run("a stale lock whose pid was reused by another process of the server user", func(t *testing.T) {
		u, err := user.Lookup(c.User())
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		sleeper := exec.Command("sleep", "60")
		if os.Geteuid() == 0 {
			sleeper.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		}
		if err := sleeper.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
		_, rest, _ := strings.Cut(string(stale), "\n")
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(sleeper.Process.Pid)+"\n"+rest), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(pidFile, uid, gid); err != nil {
			t.Fatal(err)
		}
		if err := open(t, start(t, dir)).Ping(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStartFallsBackWhenTheServerUserCannotReachDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root hands the server to another user")
	}
	private := t.TempDir() // mode 0700, owned by root
	dir := filepath.Join(private, "cluster")
	c := start(t, dir)
	t.Cleanup(func() { os.RemoveAll(c.Dir()) })
	if c.Dir() == dir || !strings.HasPrefix(c.Dir(), filepath.Join(os.TempDir(), "till-pg-")) {
		t.Fatalf("Dir() = %q, want a till-pg-* fallback under %s", c.Dir(), os.TempDir())
	}
	if err := open(t, c).Ping(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}

	again := start(t, dir)
	if again.Dir() != c.Dir() || again.Created() {
		t.Errorf("restart: Dir() = %q, Created() = %v; want %q, false", again.Dir(), again.Created(), c.Dir())
	}
}

func TestTCPPort(t *testing.T) {
	// Port 0 is "no listener", so the test needs a concrete free-ish port.
	port := 20000 + os.Getpid()%20000
	c, err := pgembed.Start(t.Context(), pgembed.Options{Dir: reachableTempDir(t), Port: port, Settings: fastSettings()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if c.Port() != port {
		t.Errorf("Port() = %d, want %d", c.Port(), port)
	}
	var listen string
	if err := open(t, c).QueryRow(`SHOW listen_addresses`).Scan(&listen); err != nil || listen != "127.0.0.1" {
		t.Errorf("listen_addresses = %q, %v; want 127.0.0.1", listen, err)
	}
	dsn, err := c.TCPDSN("postgres")
	if err != nil {
		t.Fatal(err)
	}
	ping := func(dsn string) error {
		db, err := sql.Open("postgres", dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.Ping()
	}
	if err := ping(dsn); err != nil {
		t.Errorf("another process cannot log in over TCP with %s: %v", dsn, err)
	}
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword(pgembed.Superuser, "wrong")
	if err := ping(u.String()); err == nil {
		t.Error("a wrong password was let in")
	}
	dir := c.Dir()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	again, err := pgembed.Start(t.Context(), pgembed.Options{Dir: dir, Port: port, Settings: fastSettings()})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	if same, err := again.TCPDSN("postgres"); err != nil || same != dsn || ping(same) != nil {
		t.Errorf("after a restart the URL is %q (%v), want the same working %q", same, err, dsn)
	}
	socketOnly, err := pgembed.Start(t.Context(), pgembed.Options{Dir: reachableTempDir(t), Settings: fastSettings()})
	if err != nil {
		t.Fatal(err)
	}
	defer socketOnly.Stop()
	if _, err := socketOnly.TCPDSN("postgres"); err == nil {
		t.Error("a socket-only cluster gave a TCP URL")
	}
}

// TestConcurrentFirstStartsMakeOneCluster races several first starts on one fresh directory
// (a server and admin commands started together): one runs initdb and starts the server, the
// others wait and attach to it.
func TestConcurrentFirstStartsMakeOneCluster(t *testing.T) {
	dir := reachableTempDir(t)
	const n = 4
	clusters := make([]*pgembed.Cluster, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clusters[i], errs[i] = pgembed.Start(t.Context(), pgembed.Options{Dir: dir, Settings: fastSettings(), Attach: true})
		}()
	}
	wg.Wait()
	created := 0
	var owner *pgembed.Cluster
	for i, c := range clusters {
		if errs[i] != nil {
			t.Fatalf("Start #%d: %v", i, errs[i])
		}
		if c.Created() {
			created++
			owner = c
		}
	}
	if created != 1 {
		t.Fatalf("%d starts ran initdb, want exactly 1", created)
	}
	for _, c := range clusters {
		db := open(t, c)
		if err := db.Ping(); err != nil {
			t.Errorf("a started or attached handle cannot connect: %v", err)
		}
		db.Close()
	}
	for _, c := range clusters {
		if c != owner {
			_ = c.Stop()
		}
	}
	if err := owner.Stop(); err != nil {
		t.Fatal(err)
	}
}
