package pgembed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNoBinaries reports that no directory with the PostgreSQL server programs (initdb and
// postgres) was found. It is a sentinel so that callers such as `till serve` can tell "install
// PostgreSQL or point at a server" apart from a cluster that failed to start; its text says how
// to fix it because it usually reaches a person directly.
var ErrNoBinaries = errors.New("pgembed: PostgreSQL server binaries (initdb, postgres) not found; " +
	"install them (Debian/Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server; " +
	"macOS: brew install postgresql@16), or set PG_BINDIR to the directory that holds them, " +
	"or set DATABASE_URL (TEST_DATABASE_URL for tests) to use a running server instead")

// DefaultDirs returns the well-known install locations FindBinDir tries after PG_BINDIR and
// pg_config and before PATH. Globs are expanded and their matches tried newest version first,
// because distributions install several majors side by side. It is a function, not a variable,
// so that no caller can change the search for everyone else.
func DefaultDirs() []string {
	return []string{
		"/usr/lib/postgresql/*/bin",          // Debian, Ubuntu
		"/usr/pgsql-*/bin",                   // PGDG packages on RHEL, Fedora
		"/usr/local/pgsql/bin",               // built from source
		"/opt/homebrew/opt/postgresql@*/bin", // Homebrew on Apple silicon
		"/usr/local/opt/postgresql@*/bin",    // Homebrew on Intel
		"/Applications/Postgres.app/Contents/Versions/*/bin",
	}
}

// Search says where to look for the server binaries. Its zero value searches the real machine;
// tests (and tools that want a hermetic lookup) replace the environment and the install
// locations so that "no binaries" can be reproduced on a machine that has them.
type Search struct {
	// Getenv reads PG_BINDIR and PATH; nil means os.Getenv. A function returning "" for every
	// name simulates a cleared environment.
	Getenv func(string) string
	// Dirs are the install locations (globs allowed) tried after PG_BINDIR and pg_config; nil
	// means DefaultDirs(), and an empty non-nil slice means none.
	Dirs []string
}

// FindBinDir returns the directory holding initdb and postgres, trying in order $PG_BINDIR,
// `pg_config --bindir`, the newest /usr/lib/postgresql/*/bin and the other DefaultDirs, then
// PATH. It returns an error wrapping ErrNoBinaries when none has both programs.
func FindBinDir() (string, error) {
	return Search{}.BinDir()
}

// BinDir runs the FindBinDir search with s's environment and install locations.
func (s Search) BinDir() (string, error) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if dir := getenv("PG_BINDIR"); dir != "" {
		// An explicit choice that is wrong must not silently fall through to another version.
		if err := CheckBinDir(dir); err != nil {
			return "", fmt.Errorf("PG_BINDIR: %w", err)
		}
		return dir, nil
	}
	path := getenv("PATH")
	var tried []string
	if pgConfig := lookPath("pg_config", path); pgConfig != "" {
		if dir := pgConfigBinDir(pgConfig); dir != "" {
			if CheckBinDir(dir) == nil {
				return dir, nil
			}
			tried = append(tried, dir)
		}
	}
	dirs := s.Dirs
	if dirs == nil {
		dirs = DefaultDirs()
	}
	for _, pattern := range dirs {
		matches, _ := filepath.Glob(pattern)
		slices.SortFunc(matches, func(a, b string) int { return compareVersions(b, a) })
		for _, dir := range matches {
			if CheckBinDir(dir) == nil {
				return dir, nil
			}
		}
		tried = append(tried, pattern)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir != "" && CheckBinDir(dir) == nil {
			return dir, nil
		}
	}
	tried = append(tried, "PATH")
	return "", fmt.Errorf("%w (looked in PG_BINDIR, pg_config, %s)", ErrNoBinaries, strings.Join(tried, ", "))
}

// CheckBinDir reports whether dir holds executable initdb and postgres programs, the two this
// package runs; the error wraps ErrNoBinaries and names what is missing.
func CheckBinDir(dir string) error {
	for _, name := range []string{"initdb", "postgres"} {
		if !isExecutable(filepath.Join(dir, name)) {
			return fmt.Errorf("%w (no executable %s in %s)", ErrNoBinaries, name, dir)
		}
	}
	return nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// lookPath is exec.LookPath over an explicit PATH value, so that Search.Getenv governs it.
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	return ""
}

// pgConfigBinDir asks pg_config where the binaries are. Failures are ignored: pg_config often
// belongs to a client-only package and the other locations may still work.
func pgConfigBinDir(pgConfig string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, pgConfig, "--bindir").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// compareVersions orders paths so that embedded numbers compare numerically ("9.6" < "15" <
// "16"), which is what "newest first" means for versioned install directories.
func compareVersions(a, b string) int {
	for a != "" && b != "" {
		da, db := leadingDigits(a), leadingDigits(b)
		if da != "" && db != "" {
			na, _ := strconv.Atoi(da)
			nb, _ := strconv.Atoi(db)
			if na != nb {
				return na - nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && i < 9 {
		i++
	}
	return s[:i]
}
