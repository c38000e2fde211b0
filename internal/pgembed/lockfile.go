package pgembed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockFile is the part of postmaster.pid (and of the socket's .lock file, same format) that
// this package reads: line 1 the postmaster's pid, line 2 its data directory, line 8 its
// status, which PostgreSQL sets to "ready" once it accepts connections (pg_ctl waits on it too).
type lockFile struct {
	pid     int
	dataDir string
	status  string
}

func readLockFile(path string) (lockFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return lockFile{}, err
	}
	lines := strings.Split(string(b), "\n")
	var lf lockFile
	if len(lines) > 0 {
		lf.pid, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	}
	if len(lines) > 1 {
		lf.dataDir = strings.TrimSpace(lines[1])
	}
	if len(lines) > 7 {
		lf.status = strings.TrimSpace(lines[7])
	}
	return lf, nil
}

// ErrAlreadyRunning reports that a live postmaster already serves the data directory, typically
// another `till serve` on the same checkout; two servers must never share one data directory.
var ErrAlreadyRunning = errors.New("pgembed: a PostgreSQL server is already running on this data directory")

// clearStaleLock removes a lock file left by a server that is gone, such as one killed along
// with its parent. PostgreSQL ignores such files itself when their pid is dead, but in a
// container pids are reused quickly, and a pid that now belongs to another process of the
// server user (another cluster's backend, say) would make it refuse to start. A lock whose pid
// is a live postmaster of this very data directory is respected.
func clearStaleLock(path, dataDir string) error {
	lf, err := readLockFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && lf.pid > 0 && processAlive(lf.pid) && servesDataDir(lf.pid, dataDir) {
		return fmt.Errorf("%w (pid %d, lock file %s)", ErrAlreadyRunning, lf.pid, path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pgembed: removing stale lock file: %w", err)
	}
	return nil
}

// processAlive reports whether pid exists (EPERM means it exists but is not ours to signal).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// servesDataDir reports whether pid looks like a postmaster started on dataDir, judged by its
// command line (postmasters keep their `-D dir` arguments). Without /proc it cannot tell and
// answers yes, leaving the decision to PostgreSQL's own check.
func servesDataDir(pid int, dataDir string) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		_, statErr := os.Stat("/proc/self")
		return statErr != nil
	}
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		if string(arg) == dataDir {
			return true
		}
	}
	return false
}

// logTail returns up to the last 2 KiB written to the log since offset, to explain a failure
// without sending the reader off to find the file.
func logTail(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 2048
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > max {
		offset = fi.Size() - max
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, max))
	return strings.TrimSpace(string(b))
}

// logSize is where the log ends now, so a later logTail shows only what came after.
func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// lockDir takes an exclusive lock on the cluster root for the duration of a start, so two
// processes starting on the same directory at once (a server and an admin command, say) do
// not both run initdb or both launch postgres: the second waits, then finds the server the
// first started. The lock is advisory (flock) and released when the process dies.
func lockDir(root string) (unlock func(), err error) {
	f, err := os.OpenFile(root+"/start.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgembed: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("pgembed: locking %s: %w", root, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
