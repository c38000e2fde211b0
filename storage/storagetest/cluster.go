package storagetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"till/internal/pgembed"
)

// clusterPrefix starts the name of every private cluster directory; the owning test
// process's pid follows it, so that directories of processes that died can be swept.
const clusterPrefix = "till-storagetest-"

// startCluster starts this process's private cluster, tuned for speed over durability: a test
// database that a crash loses is no loss.
func (s *server) startCluster(ctx context.Context) error {
	parent := clusterParent()
	sweep(parent)
	dir, err := os.MkdirTemp(parent, clusterPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return fmt.Errorf("storagetest: %w", err)
	}
	s.tmpDir = dir
	// MkdirTemp makes the directory 0700; when tests run as root the server runs as another
	// user and must be able to enter it.
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("storagetest: %w", err)
	}
	s.cluster, err = pgembed.Start(ctx, pgembed.Options{
		Dir: dir,
		Settings: map[string]string{
			"fsync":              "off",
			"synchronous_commit": "off",
			"full_page_writes":   "off",
			"max_connections":    "300", // concurrency tests open many connections at once
		},
	})
	if err != nil {
		return fmt.Errorf("storagetest: starting a private PostgreSQL (set %s to use a running server instead): %w", EnvURL, err)
	}
	s.dsn = s.cluster.DSN("postgres")
	return nil
}

// clusterParent puts test clusters in memory when it can: measured here, initdb takes half the
// time on tmpfs (0.5 s against 1 s) and CREATE DATABASE … TEMPLATE a tenth (10 ms against
// 170 ms), because even with fsync off a disk file system pays for creating and deleting the
// files of every clone. Small /dev/shm mounts (Docker's default is 64 MB) are left alone, since
// PostgreSQL needs that space for its own shared memory.
func clusterParent() string {
	const shm, minFree = "/dev/shm", 1 << 30
	var st syscall.Statfs_t
	if err := syscall.Statfs(shm, &st); err == nil && uint64(st.Bavail)*uint64(st.Bsize) >= minFree {
		return shm
	}
	return os.TempDir()
}

// sweep removes the cluster directories of test processes that died without reaching Main's
// cleanup (a -timeout panic, a Ctrl-C). Their servers died with them, but in /dev/shm the
// files would hold memory until the next reboot.
func sweep(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), clusterPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}
