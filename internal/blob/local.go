package blob

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// LocalConfig configures a Local store.
type LocalConfig struct {
	// Dir is the root directory; it is created when missing. Nothing is ever read or
	// written outside it: symlinks under it are followed only when relative and staying
	// inside (the rules of os.Root).
	Dir string
	// BaseURL is where Handler is mounted, e.g. "http://127.0.0.1:8000/blob/"; signed URLs
	// are BaseURL + escaped key + query.
	BaseURL string
	// Secret keys the HMAC of signed URLs; at least 32 bytes, dedicated to this use (derive
	// it, e.g. with HKDF from the server secret, rather than reusing a key).
	Secret []byte
	// Now is the clock for signing and expiry; nil means time.Now.
	Now func() time.Time
	// TransferTime, when set, is how long Handler lets a part upload or a download of n
	// bytes take: it moves the connection's read and write deadlines that far once a
	// request's signature is valid. A server's ordinary deadlines suit small requests and
	// would cut a large part off midway; an invalid request never gets the longer ones.
	// nil leaves the server's deadlines alone.
	TransferTime func(n int64) time.Duration
}

// Local stores objects as files under a directory: the embedded default, needing nothing
// but a disk. An object lives at Dir/<key>; its content type and ETag (the hex MD5 of the
// content, as S3 computes for single-part uploads) live in a hidden metadata file beside
// it (".<name>.meta"), because extended attributes are not available on every
// filesystem. Writes stream to a hidden temporary file in the same directory, are fsynced,
// then renamed over the key, so a crash or a failing reader never leaves a partial object
// under a key, and memory use does not grow with object size.
type Local struct {
	root   *os.Root
	dir    string // Dir with symlinks resolved, to explain refusals
	base   *url.URL
	secret []byte
	now    func() time.Time

	transferTime func(n int64) time.Duration

	stripes [64]sync.Mutex // per-key locks pairing each object's two files
	uploads uploadLocks    // multipart uploads' locks
	// boot is the kernel boot id that part records are bound to (bootID), or empty.
	boot string
}

var _ Store = (*Local)(nil)

// minSecretLen is the HMAC-SHA256 key size; shorter secrets weaken every signed URL.
const minSecretLen = 32

// NewLocal opens (creating if needed) the store's directory. Close releases it.
func NewLocal(cfg LocalConfig) (*Local, error) {
	if len(cfg.Secret) < minSecretLen {
		return nil, fmt.Errorf("blob: signing secret must be at least %d bytes", minSecretLen)
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("blob: base URL %q must be absolute", cfg.BaseURL)
	}
	base.RawQuery, base.Fragment, base.RawPath = "", "", ""
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("blob: create root: %w", err)
	}
	dir, err := filepath.EvalSymlinks(cfg.Dir)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("blob: resolve root: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: open root: %w", err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Local{root: root, dir: dir, base: base, secret: cfg.Secret, now: now, boot: bootID(),
		transferTime: cfg.TransferTime}, nil
}

// Close releases the root directory handle.
func (l *Local) Close() error { return l.root.Close() }

// names are the root-relative file names that make up one object.
type names struct {
	dir, obj, meta, tmpPrefix string
}

func namesOf(key string) names {
	dir, name := path.Split(key)
	dir = path.Clean(dir) // "" becomes "."
	return names{
		dir:       filepath.FromSlash(dir),
		obj:       filepath.FromSlash(key),
		meta:      filepath.FromSlash(path.Join(dir, "."+name+".meta")),
		tmpPrefix: filepath.FromSlash(path.Join(dir, "."+name+".tmp-")),
	}
}

// Put streams r to a temporary file, hashing it on the way, then renames the file and its
// metadata into place.
func (l *Local) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Object, error) {
	if err := begin(ctx, key); err != nil {
		return Object{}, err
	}
	n := namesOf(key)
	if err := l.root.MkdirAll(n.dir, 0o750); err != nil {
		return Object{}, l.writeErr(key, err)
	}
	tmp, m, err := l.writeTemp(ctx, n, r, size)
	if err != nil {
		return Object{}, fmt.Errorf("blob: %q: %w", key, err)
	}
	m.ContentType = contentTypeOrDefault(contentType)
	metaTmp, err := l.writeMetaTemp(n, m)
	if err != nil {
		_ = l.root.Remove(tmp)
		return Object{}, err
	}
	if err := l.commit(key, n, tmp, metaTmp); err != nil {
		return Object{}, err
	}
	l.syncDir(n.dir)
	obj := m.object(key)
	obj.LastModified = time.Unix(0, m.ModTime)
	return obj, nil
}

// commit renames the written files into place, content first: a crash between the renames
// leaves stale metadata, which describe detects by size and modification time, never a
// partial object. The key's lock keeps concurrent writers of one key from interleaving.
func (l *Local) commit(key string, n names, tmp, metaTmp string) error {
	defer l.lock(key)()
	if err := l.root.Rename(tmp, n.obj); err != nil {
		_ = l.root.Remove(tmp)
		_ = l.root.Remove(metaTmp)
		return l.writeErr(key, err)
	}
	if err := l.root.Rename(metaTmp, n.meta); err != nil {
		_ = l.root.Remove(metaTmp)
		return fmt.Errorf("blob: %q: store metadata: %w", key, err)
	}
	return nil
}

// lock takes the stripe of key and returns its unlock. Stripes bound the memory of
// per-key locking; unrelated keys sharing a stripe only wait for a rename.
func (l *Local) lock(key string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	mu := &l.stripes[h.Sum32()%uint32(len(l.stripes))]
	mu.Lock()
	return mu.Unlock
}

// writeTemp copies r into a new temporary file and returns its name and metadata. On
// error the temporary file is already gone.
func (l *Local) writeTemp(ctx context.Context, n names, r io.Reader, size int64) (string, meta, error) {
	f, name, err := l.createTemp(n.tmpPrefix)
	if err != nil {
		return "", meta{}, err
	}
	m, err := copyAndSync(f, newExactReader(ctx, r, size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = l.root.Remove(name)
		return "", meta{}, err
	}
	return name, m, nil
}

// copyAndSync writes src to f, fsyncs it and describes what was written.
func copyAndSync(f *os.File, src io.Reader) (meta, error) {
	h := md5.New()
	if _, err := io.Copy(io.MultiWriter(f, h), src); err != nil {
		return meta{}, err
	}
	if err := f.Sync(); err != nil {
		return meta{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		return meta{}, err
	}
	return meta{ETag: hex.EncodeToString(h.Sum(nil)), Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}, nil
}

// createTemp creates a file named prefix plus a random suffix; O_EXCL means it never
// shares a file with a concurrent writer.
func (l *Local) createTemp(prefix string) (*os.File, string, error) {
	name := prefix + rand.Text()[:16]
	f, err := l.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	return f, name, err
}

// syncDir makes the renames in dir durable. It is best effort: some filesystems refuse to
// fsync directories, and the object is already complete either way.
func (l *Local) syncDir(dir string) {
	if d, err := l.root.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Get opens the object; the returned reader is the file itself, so Seek and ReadAt work.
func (l *Local) Get(ctx context.Context, key string) (io.ReadCloser, Object, error) {
	f, obj, err := l.open(ctx, key)
	if err != nil {
		return nil, Object{}, err
	}
	return f, obj, nil
}

// Stat describes the object from its file and metadata.
func (l *Local) Stat(ctx context.Context, key string) (Object, error) {
	f, obj, err := l.open(ctx, key)
	if err != nil {
		return Object{}, err
	}
	_ = f.Close()
	return obj, nil
}

// open is Get returning the concrete file, which Handler needs for ranges.
func (l *Local) open(ctx context.Context, key string) (*os.File, Object, error) {
	if err := begin(ctx, key); err != nil {
		return nil, Object{}, err
	}
	n := namesOf(key)
	unlock := l.lock(key)
	f, err := l.root.Open(n.obj)
	var m meta
	var merr error
	if err == nil {
		m, merr = l.loadMeta(n)
	}
	unlock()
	if err != nil {
		return nil, Object{}, l.readErr(key, err)
	}
	obj, err := describe(key, f, m, merr)
	if err != nil {
		_ = f.Close()
		return nil, Object{}, err
	}
	return f, obj, nil
}

// describe builds the Object for an open file and the metadata loaded with it, refusing
// directories, which are key prefixes rather than objects.
func describe(key string, f *os.File, m meta, merr error) (Object, error) {
	fi, err := f.Stat()
	if err != nil {
		return Object{}, fmt.Errorf("blob: %q: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		return Object{}, fmt.Errorf("blob: %q: %w", key, ErrNotFound)
	}
	if merr != nil || !m.describes(fi) {
		if m, err = rebuildMeta(f, fi); err != nil {
			return Object{}, fmt.Errorf("blob: %q: %w", key, err)
		}
	}
	obj := m.object(key)
	obj.LastModified = fi.ModTime()
	return obj, nil
}

// Delete removes the object's file, then its metadata. Removing content first means a
// crash in between leaves a harmless hidden file that the next Put of the key replaces.
func (l *Local) Delete(ctx context.Context, key string) error {
	if err := begin(ctx, key); err != nil {
		return err
	}
	n := namesOf(key)
	fi, err := l.root.Lstat(n.obj)
	if isMissing(err) || (err == nil && fi.IsDir()) {
		return nil
	}
	if err != nil {
		return l.writeErr(key, err)
	}
	defer l.lock(key)()
	if err := l.root.Remove(n.obj); err != nil && !isMissing(err) {
		return l.writeErr(key, err)
	}
	if err := l.root.Remove(n.meta); err != nil && !isMissing(err) {
		return fmt.Errorf("blob: %q: remove metadata: %w", key, err)
	}
	return nil
}

// begin runs the checks every operation starts with.
func begin(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	return ctx.Err()
}

// isMissing is true when a path, or one of its parents, does not exist as a directory.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// readErr turns a filesystem error from reading key into the package's vocabulary:
// ErrNotFound for missing paths, else what writeErr says.
func (l *Local) readErr(key string, err error) error {
	if isMissing(err) {
		return fmt.Errorf("blob: %q: %w", key, ErrNotFound)
	}
	return l.writeErr(key, err)
}

// writeErr reports a key that runs through a symlink out of the root (which os.Root
// refuses with an untyped error) as a KeyError, and wraps any other error.
func (l *Local) writeErr(key string, err error) error {
	if l.leavesRoot(key) {
		return &KeyError{key, "path leaves the store root through a symlink"}
	}
	return fmt.Errorf("blob: %q: %w", key, err)
}

// leavesRoot reports whether any existing prefix of key is a symlink that os.Root will not
// follow: an absolute one, one resolving outside the root, or one that does not resolve.
func (l *Local) leavesRoot(key string) bool {
	p := l.dir
	for seg := range strings.SplitSeq(key, "/") {
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		if err != nil {
			return false
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := os.Readlink(p)
		if err != nil || filepath.IsAbs(target) {
			return true
		}
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil || !within(l.dir, resolved) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}
