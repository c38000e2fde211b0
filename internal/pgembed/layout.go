package pgembed

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// maxSocketPath is the longest unix socket path the kernel accepts (sun_path is 108 bytes
// including the terminating NUL on Linux; BSDs allow less, 104, which the margin below covers).
const maxSocketPath = 103

// account is the operating-system user the server processes run as. initdb and postgres refuse
// to run as root, so a root caller hands them to an unprivileged account.
type account struct {
	name     string
	uid, gid int
	drop     bool // the caller is root: switch to uid/gid and chown what the server writes
}

// serverAccount picks the user to run the server as: the caller itself, or when the caller is
// root the conventional `postgres` user, else `nobody`, which exists everywhere.
func serverAccount() (account, error) {
	if os.Geteuid() != 0 {
		name := strconv.Itoa(os.Geteuid())
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		return account{name: name, uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil || uid == 0 {
			errs = append(errs, fmt.Errorf("user %s: unusable uid/gid %s/%s", name, u.Uid, u.Gid))
			continue
		}
		return account{name: name, uid: uid, gid: gid, drop: true}, nil
	}
	return account{}, fmt.Errorf("pgembed: running as root and no unprivileged user to run PostgreSQL as: %w", errors.Join(errs...))
}

// layout is where one cluster's files live once the fallbacks are applied. Every path is
// derived from the absolute Options.Dir alone, so a restart finds the same data.
type layout struct {
	root     string // Options.Dir, or its fallback under the temp dir
	data     string // the PostgreSQL data directory
	socket   string // unix_socket_directories
	log      string // the server's stdout and stderr
	fellBack bool
}

// resolveLayout chooses and creates the cluster's directories for a server running as acct.
// The server user must be able to traverse to its data directory; when root asks for a place
// that user cannot reach (a checkout under mode-700 /root), the cluster lives under the temp
// dir instead, named after a hash of the requested path so that every restart reuses it.
func resolveLayout(dir string, acct account, port int, logger *slog.Logger) (layout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return layout{}, fmt.Errorf("pgembed: %w", err)
	}
	l := layout{root: abs}
	if acct.drop && !reachable(abs, acct) {
		l.root = filepath.Join(os.TempDir(), "till-pg-"+shortHash(abs))
		l.fellBack = true
		logger.Warn("pgembed: cluster directory is not reachable by the server user; using a directory under the temp dir instead (it may not survive a reboot)",
			"dir", abs, "fallback", l.root, "user", acct.name)
		if err := makeSharedDir(l.root, acct); err != nil {
			return layout{}, err
		}
	} else if err := makeDirs(abs); err != nil {
		return layout{}, err
	}
	if acct.drop && !reachable(l.root, acct) {
		return layout{}, fmt.Errorf("pgembed: user %s cannot reach %s; choose another directory", acct.name, l.root)
	}
	l.data = filepath.Join(l.root, "data")
	l.log = filepath.Join(l.root, "postgres.log")

	l.socket = filepath.Join(l.root, "run")
	if len(socketPath(l.socket, port)) > maxSocketPath {
		l.socket = filepath.Join(os.TempDir(), "till-pgs-"+shortHash(abs))
		if len(socketPath(l.socket, port)) > maxSocketPath {
			l.socket = filepath.Join("/tmp", "till-pgs-"+shortHash(abs))
		}
		logger.Info("pgembed: socket path too long under the cluster directory; using a short one", "socket_dir", l.socket)
		if err := makeSharedDir(l.socket, acct); err != nil {
			return layout{}, err
		}
	} else if err := os.MkdirAll(l.socket, 0o700); err != nil {
		return layout{}, fmt.Errorf("pgembed: %w", err)
	}
	// The socket directory is the only gate in front of trust authentication: keep it private.
	if err := own(l.socket, acct, 0o700); err != nil {
		return layout{}, err
	}
	return l, nil
}

// socketPath is the file name PostgreSQL binds in dir for port.
func socketPath(dir string, port int) string {
	return filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(port))
}

// shortHash names fallback directories: stable for one path, distinct between paths.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// reachable reports whether acct may search every existing directory on the way to path.
// Missing components do not count against it: makeDirs creates them world-searchable.
func reachable(path string, acct account) bool {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil && !canSearch(fi, acct) {
			return false
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// canSearch applies the owner/group/other execute bit that the kernel would use for acct.
// (The server runs without supplementary groups, so only its primary group counts.)
func canSearch(fi fs.FileInfo, acct account) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case int(st.Uid) == acct.uid:
		return perm&0o100 != 0
	case int(st.Gid) == acct.gid:
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}

// makeDirs is os.MkdirAll that makes each directory it creates mode 0755 regardless of the
// umask, so the server user can pass through them.
func makeDirs(path string) error {
	if fi, err := os.Stat(path); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("pgembed: %s is not a directory", path)
		}
		return nil
	}
	if parent := filepath.Dir(path); parent != path {
		if err := makeDirs(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("pgembed: %w", err)
	}
	return os.Chmod(path, 0o755)
}

// makeSharedDir creates a fallback directory in the world-writable temp dir. Because its name
// is predictable, an existing one is used only if it is a real directory owned by us or by the
// server user; anything else could be another user's trap.
func makeSharedDir(path string, acct account) error {
	if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("pgembed: %w", err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || (ok && int(st.Uid) != os.Geteuid() && int(st.Uid) != acct.uid) {
		return fmt.Errorf("pgembed: refusing to use %s: not a directory owned by us or by %s", path, acct.name)
	}
	if int(st.Uid) == os.Geteuid() {
		return os.Chmod(path, 0o755)
	}
	return nil
}

// own gives path to the server user with mode perm.
func own(path string, acct account, perm fs.FileMode) error {
	if acct.drop {
		if err := os.Lchown(path, acct.uid, acct.gid); err != nil {
			return fmt.Errorf("pgembed: %w", err)
		}
	}
	if err := os.Chmod(path, perm); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	return nil
}

// ownTree hands a data directory to the server user if it belongs to someone else, such as a
// cluster first created while the `postgres` user did not exist and `nobody` ran it.
func ownTree(root string, acct account) error {
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !acct.drop || !ok || int(st.Uid) == acct.uid {
		return nil
	}
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, acct.uid, acct.gid)
	})
}
