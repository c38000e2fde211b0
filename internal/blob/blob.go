// Package blob stores Till's objects (invoice PDFs now, uploaded files later) on local disk
// by default or in an S3-compatible bucket, behind one small Store interface, and hands out
// short-lived download URLs so the bytes never pass through the API's JSON.
//
// Keys are relative, slash-separated paths such as "invoices/<uuid>/INV-0001.pdf". Every
// key is validated before any disk or bucket is touched, with the same rules for both
// stores so that a key valid on one is valid on the other and data can move between them.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// Store is the object storage Till writes to. Implementations are safe for concurrent use.
type Store interface {
	// Put stores the bytes of r under key, replacing any object there. size is the exact
	// number of bytes r yields (-1 when unknown); a reader that yields more or fewer bytes
	// is an error and stores nothing. An empty contentType stores DefaultContentType.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Object, error)
	// Get opens the object for streaming; the caller closes the reader.
	Get(ctx context.Context, key string) (io.ReadCloser, Object, error)
	// Stat describes the object without reading it.
	Stat(ctx context.Context, key string) (Object, error)
	// Delete removes the object. Deleting a missing key is not an error, so retries are safe.
	Delete(ctx context.Context, key string) error
	// SignedURL returns a URL that downloads the object without credentials for ttl, as an
	// attachment named filename (the key's last segment when empty). Signing does not
	// check that the object exists: a URL to a missing object answers 404.
	SignedURL(ctx context.Context, key string, ttl time.Duration, filename string) (string, error)
	// Multipart uploads let clients send large objects straight to the store.
	Multipart
}

// Object describes a stored object.
type Object struct {
	Key         string
	Size        int64
	ContentType string
	// ETag identifies the content: the hex MD5 of the bytes for Local, and the bucket's
	// unquoted ETag for S3, which is the same hex MD5 for objects uploaded in one part.
	ETag string
	// LastModified is when the object was written. S3 may leave it zero in Put's result
	// when the bucket does not report it; Stat always has it.
	LastModified time.Time
	// Version is the bucket's version id when versioning is on, else empty (always for Local).
	Version string
	// ChecksumSHA256 is S3's composite checksum of an object assembled from parts that
	// carried SHA-256 digests ("<base64>-<parts>", see CompositeSHA256), else empty.
	// CompleteMultipart, Get and Stat all report it: S3 when asked with
	// x-amz-checksum-mode, Local from the metadata it keeps with the object.
	ChecksumSHA256 string
}

// DefaultContentType is stored when Put is given no content type.
const DefaultContentType = "application/octet-stream"

// MaxSignedURLTTL is the longest life of a signed URL, S3's limit for presigned URLs,
// applied to both stores so they behave alike.
const MaxSignedURLTTL = 7 * 24 * time.Hour

// Key limits: S3 caps keys at 1024 bytes; segments stay well under the usual 255-byte file
// name limit so Local's hidden temporary and metadata names next to an object still fit.
const (
	maxKeyLen     = 1024
	maxSegmentLen = 200
)

// ErrNotFound reports a missing object. Errors wrap it; test with errors.Is.
var ErrNotFound = errors.New("blob: object not found")

// ErrSizeMismatch reports a Put whose reader yielded more or fewer bytes than its size
// said, usually a truncated upload; nothing is stored.
var ErrSizeMismatch = errors.New("blob: reader length does not match size")

// ErrInvalidKey is what every *KeyError matches with errors.Is.
var ErrInvalidKey = errors.New("blob: invalid key")

// KeyError reports a key the stores refuse, and why. A refused key never reaches the disk
// or the bucket.
type KeyError struct {
	Key    string
	Reason string
}

func (e *KeyError) Error() string { return fmt.Sprintf("blob: invalid key %q: %s", e.Key, e.Reason) }

// Is makes errors.Is(err, ErrInvalidKey) true for every KeyError.
func (e *KeyError) Is(target error) bool { return target == ErrInvalidKey }

// ValidateKey checks key against the rules shared by all stores: a relative slash-separated
// UTF-8 path of at most 1024 bytes, without empty, ".", ".." or dot-leading segments
// (Local keeps its own files under dot names), and without backslashes, NULs or other
// control characters, which would be ambiguous on disk or unsafe in headers.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return &KeyError{key, "empty"}
	case len(key) > maxKeyLen:
		return &KeyError{key, fmt.Sprintf("longer than %d bytes", maxKeyLen)}
	case !utf8.ValidString(key):
		return &KeyError{key, "not valid UTF-8"}
	case strings.HasPrefix(key, "/"):
		return &KeyError{key, "absolute path"}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if reason := segmentProblem(seg); reason != "" {
			return &KeyError{key, reason}
		}
	}
	return nil
}

// segmentProblem says what is wrong with one path segment, or "" when nothing is.
func segmentProblem(seg string) string {
	switch {
	case seg == "":
		return "empty segment"
	case seg == "." || seg == "..":
		return "dot segment"
	case strings.HasPrefix(seg, "."):
		return "segment starts with a dot"
	case len(seg) > maxSegmentLen:
		return fmt.Sprintf("segment longer than %d bytes", maxSegmentLen)
	}
	for _, r := range seg {
		switch {
		case r == '\\':
			return "backslash"
		case r == 0:
			return "NUL byte"
		case r < 0x20 || r == 0x7f:
			return "control character"
		}
	}
	return ""
}

// JoinKey builds a key from segments, each of which must be a single valid segment. Unlike
// path.Join it never cleans: JoinKey("invoices", id, "../x") is an error, not "invoices/x".
func JoinKey(segments ...string) (string, error) {
	key := strings.Join(segments, "/")
	for _, seg := range segments {
		reason := segmentProblem(seg)
		if strings.Contains(seg, "/") {
			reason = "segment contains a slash"
		}
		if reason != "" {
			return "", &KeyError{key, reason}
		}
	}
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// checkTTL refuses lifetimes that S3 would refuse, so both stores agree.
func checkTTL(ttl time.Duration) error {
	if ttl < time.Second || ttl > MaxSignedURLTTL {
		return fmt.Errorf("blob: signed URL ttl %v outside [1s, %v]", ttl, MaxSignedURLTTL)
	}
	return nil
}

// attachment is the Content-Disposition for a download named filename (or the key's last
// segment). mime.FormatMediaType quotes or RFC 2231-encodes the name, so no filename can
// break out of the header.
func attachment(key, filename string) string {
	if filename == "" {
		filename = path.Base(key)
	}
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": filename}); v != "" {
		return v
	}
	return "attachment"
}

func contentTypeOrDefault(ct string) string {
	if ct == "" {
		return DefaultContentType
	}
	return ct
}

// exactReader passes through exactly size bytes of r, failing when r ends early or has
// more. Clients that read with io.ReadFull stop at size and drop an error that arrives
// with the final bytes, so the surplus check happens before those bytes are handed over:
// when r has more, the last read returns no bytes and the error, and no consumer ever
// sees a complete, silently truncated object.
type exactReader struct {
	ctx  context.Context
	r    io.Reader
	left int64 // -1: size unknown, only the context is checked
	err  error // sticky once set
}

func newExactReader(ctx context.Context, r io.Reader, size int64) *exactReader {
	return &exactReader{ctx: ctx, r: r, left: size}
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if err := e.ctx.Err(); err != nil {
		return 0, err
	}
	if e.left < 0 {
		return e.r.Read(p)
	}
	if e.left == 0 {
		e.err = e.peekEnd()
		return 0, e.err
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case e.left == 0 && (err == nil || err == io.EOF):
		if e.err = e.peekEnd(); e.err != io.EOF {
			return 0, e.err
		}
		return n, nil
	case err == io.EOF:
		e.err = fmt.Errorf("%w: %d bytes missing", ErrSizeMismatch, e.left)
		return n, e.err
	}
	return n, err
}

// peekEnd returns io.EOF when r is exhausted and ErrSizeMismatch when it still has bytes.
func (e *exactReader) peekEnd() error {
	var b [1]byte
	for {
		n, err := e.r.Read(b[:])
		if n > 0 {
			return fmt.Errorf("%w: more bytes than declared", ErrSizeMismatch)
		}
		if err != nil {
			return err
		}
	}
}
