package blob

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Multipart uploads let clients send large objects straight to storage in numbered parts,
// each through its own presigned PUT URL, and have the server assemble them: upstream's
// file upload flow. The byte ranges of the parts are fixed when the upload starts, so a
// store may write each part at its offset as it arrives (Local does) and never copy the
// object a second time.
type Multipart interface {
	// CreateMultipart starts an upload of spec.Size bytes to key, split into spec.Parts,
	// and returns its opaque id. Nothing is visible under key until it completes.
	CreateMultipart(ctx context.Context, key string, spec UploadSpec) (uploadID string, err error)
	// PresignPart returns the URL, and the headers the client must send with it, that PUT
	// one part of the upload for ttl. When the part carries a SHA-256 the store refuses a
	// body with another digest.
	PresignPart(ctx context.Context, key, uploadID string, part Part, ttl time.Duration) (PresignedPart, error)
	// CompleteMultipart assembles the upload from parts, which must list every part of
	// the upload once, in ascending order, with the ETag its PUT returned (and its SHA-256
	// when it had one). On success the object is under key and the upload is gone; on
	// failure nothing is under key and the upload can still be completed correctly.
	CompleteMultipart(ctx context.Context, key, uploadID string, parts []CompletedPart) (Object, error)
	// AbortMultipart discards an unfinished upload and its parts. An unknown id is not an
	// error, so retries are safe.
	AbortMultipart(ctx context.Context, key, uploadID string) error
}

// UploadSpec describes a multipart upload when it starts.
type UploadSpec struct {
	ContentType string
	Size        int64
	// Parts cover [0, Size) in order, without gaps or overlaps (ValidateParts).
	Parts []Part
}

// Part is one byte range of a multipart upload.
type Part struct {
	Number int   // 1 to MaxParts, ascending from 1 without gaps
	Start  int64 // first byte, inclusive
	End    int64 // last byte, exclusive
	// SHA256Base64 is the standard base64 of the part's SHA-256, or empty when the client
	// sent none.
	SHA256Base64 string
}

// Size is the number of bytes in the part.
func (p Part) Size() int64 { return p.End - p.Start }

// PresignedPart is what a client needs to upload one part.
type PresignedPart struct {
	URL       string
	Headers   map[string]string
	ExpiresAt time.Time
}

// CompletedPart is a part as the client reports it on completion.
type CompletedPart struct {
	Number int
	// ETag is the ETag header the part's PUT answered; surrounding quotes and whitespace
	// are ignored.
	ETag         string
	SHA256Base64 string
}

// Multipart limits, S3's: at most 10,000 parts of at most 5 GiB each.
const (
	MaxParts    = 10000
	MaxPartSize = 5 << 30
)

// ErrUploadNotFound reports an upload id that is unknown, aborted or already completed.
var ErrUploadNotFound = errors.New("blob: multipart upload not found")

// ErrInvalidPart is what every *PartError matches with errors.Is.
var ErrInvalidPart = errors.New("blob: invalid part")

// PartError reports a part the store refuses, and why. Number is 0 when the problem is
// with the list as a whole.
type PartError struct {
	Number int
	Reason string
}

func (e *PartError) Error() string {
	if e.Number == 0 {
		return "blob: invalid parts: " + e.Reason
	}
	return fmt.Sprintf("blob: invalid part %d: %s", e.Number, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidPart) true for every PartError.
func (e *PartError) Is(target error) bool { return target == ErrInvalidPart }

// ValidateParts checks that parts split size bytes the way both stores can take them:
// numbered 1, 2, … without gaps, contiguous ranges from 0 to size, at most MaxParts parts
// of at most maxPart bytes each (MaxPartSize when maxPart is 0), and well-formed SHA-256
// digests on every part or none. Only the last part may be empty, as upstream's client makes one when the size
// is a multiple of its chunk size.
func ValidateParts(size int64, parts []Part, maxPart int64) error {
	if maxPart <= 0 || maxPart > MaxPartSize {
		maxPart = MaxPartSize
	}
	switch {
	case size < 0:
		return &PartError{0, "negative size"}
	case len(parts) == 0:
		return &PartError{0, "no parts"}
	case len(parts) > MaxParts:
		return &PartError{0, fmt.Sprintf("more than %d parts", MaxParts)}
	}
	var next int64
	withDigest := 0
	for i, p := range parts {
		switch {
		case p.Number != i+1:
			return &PartError{p.Number, fmt.Sprintf("expected part number %d", i+1)}
		case p.Start != next:
			return &PartError{p.Number, fmt.Sprintf("starts at byte %d, expected %d", p.Start, next)}
		case p.End < p.Start:
			return &PartError{p.Number, "ends before it starts"}
		case p.Size() > maxPart:
			return &PartError{p.Number, fmt.Sprintf("larger than %d bytes", maxPart)}
		case p.Size() == 0 && i != len(parts)-1:
			return &PartError{p.Number, "empty part before the last"}
		}
		if p.SHA256Base64 != "" {
			if _, err := DecodeSHA256(p.SHA256Base64); err != nil {
				return &PartError{p.Number, err.Error()}
			}
			withDigest++
		}
		next = p.End
	}
	if withDigest != 0 && withDigest != len(parts) {
		return &PartError{0, "either every part or none carries a SHA-256"}
	}
	if next != size {
		return &PartError{0, fmt.Sprintf("parts cover %d bytes, the size is %d", next, size)}
	}
	return nil
}

// DecodeSHA256 decodes a standard base64 SHA-256 digest.
func DecodeSHA256(b64 string) ([]byte, error) {
	d, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(d) != sha256.Size {
		return nil, errors.New("checksum is not a base64 SHA-256 digest")
	}
	return d, nil
}

// CompositeSHA256 is S3's checksum of a multipart object: the base64 SHA-256 of the
// concatenated binary SHA-256 digests of its parts, as upstream sends on completion. It is
// empty when no part carries a digest, and an error when only some do.
func CompositeSHA256(parts []CompletedPart) (string, error) {
	h := sha256.New()
	with := 0
	for _, p := range parts {
		if p.SHA256Base64 == "" {
			continue
		}
		with++
		d, err := DecodeSHA256(p.SHA256Base64)
		if err != nil {
			return "", &PartError{p.Number, err.Error()}
		}
		h.Write(d)
	}
	switch with {
	case 0:
		return "", nil
	case len(parts):
	default:
		return "", &PartError{0, "either every part or none carries a SHA-256"}
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// NormalizeETag strips the whitespace and quotes clients keep around an ETag header.
func NormalizeETag(etag string) string {
	return strings.Trim(strings.TrimSpace(etag), `"`)
}

// checkPartList applies the rules of a completion list that need no knowledge of the
// upload, the same for every store: part numbers strictly ascending from 1, without
// duplicates or gaps.
func checkPartList(parts []CompletedPart) error {
	for i, p := range parts {
		switch {
		case p.Number < 1 || p.Number > MaxParts:
			return &PartError{p.Number, "not part of the upload"}
		case i > 0 && p.Number == parts[i-1].Number:
			return &PartError{p.Number, "duplicated"}
		case i > 0 && p.Number < parts[i-1].Number:
			return &PartError{p.Number, "not in ascending order"}
		}
	}
	for i, p := range parts {
		if p.Number != i+1 {
			return &PartError{i + 1, "missing"}
		}
	}
	return nil
}
