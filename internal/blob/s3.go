package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config locates a bucket on any S3-compatible server (AWS, MinIO, versitygw, …).
type S3Config struct {
	// Endpoint is host[:port] without a scheme, e.g. "s3.eu-west-1.amazonaws.com".
	Endpoint string
	// Region is the bucket's region; empty asks the server once, on first use.
	Region    string
	Bucket    string
	AccessKey string
	SecretKey string
	UseSSL    bool
	// PathStyle forces http://endpoint/bucket/key addressing, which self-hosted servers
	// usually need; otherwise the client chooses (virtual-hosted for AWS).
	PathStyle bool
	// Transport, when set, carries the client's requests, e.g. to trust a private CA.
	Transport http.RoundTripper
}

// S3 stores objects in a bucket, which must already exist. Presigned URLs go straight to
// the bucket, so downloads cost Till nothing.
type S3 struct {
	client *minio.Client
	bucket string
}

var _ Store = (*S3)(nil)

// unknownSizePart bounds the memory an upload of unknown size buffers: the client holds one
// part at a time, and its default part for unknown sizes is hundreds of MiB.
const unknownSizePart = 16 << 20

// NewS3 builds the client; it does not contact the server.
func NewS3(cfg S3Config) (*S3, error) {
	if strings.Contains(cfg.Endpoint, "://") {
		return nil, fmt.Errorf("blob: S3 endpoint %q must be host[:port]; use UseSSL for https", cfg.Endpoint)
	}
	if cfg.Bucket == "" {
		return nil, errors.New("blob: S3 bucket is required")
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       cfg.UseSSL,
		Region:       cfg.Region,
		BucketLookup: lookup,
		Transport:    cfg.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("blob: S3 client: %w", err)
	}
	return &S3{client: client, bucket: cfg.Bucket}, nil
}

// Put streams r to the bucket: in one request when it fits a part, else as a multipart
// upload, holding at most one part in memory.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Object, error) {
	if err := begin(ctx, key); err != nil {
		return Object{}, err
	}
	opts := minio.PutObjectOptions{ContentType: contentTypeOrDefault(contentType)}
	switch {
	case size < 0:
		size, opts.PartSize = -1, unknownSizePart
	case size == 0:
		// Over plain HTTP the client signs payloads as a chunked stream, and sends an empty
		// one without the Content-Length S3 requires; an empty body needs no hash anyway.
		opts.DisableContentSha256 = true
	}
	body, err := s3Body(ctx, r, size)
	if err != nil {
		return Object{}, s3Err(key, err)
	}
	info, err := s.client.PutObject(ctx, s.bucket, key, body, size, opts)
	if err != nil {
		return Object{}, s3Err(key, err)
	}
	return Object{
		Key:          key,
		Size:         info.Size,
		ContentType:  opts.ContentType,
		ETag:         strings.Trim(info.ETag, `"`),
		LastModified: info.LastModified,
		Version:      info.VersionID,
	}, nil
}

// s3Body wraps r to enforce size. For an empty object the client never reads the body,
// so r is checked to be empty here.
func s3Body(ctx context.Context, r io.Reader, size int64) (io.Reader, error) {
	er := newExactReader(ctx, r, size)
	if size != 0 {
		return er, nil
	}
	if _, err := er.Read(make([]byte, 1)); err != io.EOF {
		return nil, err
	}
	return bytes.NewReader(nil), nil
}

// Get opens the object. The client is lazy, so Get stats it first to report a missing
// object here rather than on the first Read. Like Stat it asks for the object's checksum.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, Object, error) {
	if err := begin(ctx, key); err != nil {
		return nil, Object{}, err
	}
	o, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{Checksum: true})
	if err != nil {
		return nil, Object{}, s3Err(key, err)
	}
	info, err := o.Stat()
	if err != nil {
		_ = o.Close()
		return nil, Object{}, s3Err(key, err)
	}
	return o, objectOf(info), nil
}

// Stat describes the object with a HEAD request, asking for its checksum
// (x-amz-checksum-mode), which S3 reports only when asked.
func (s *S3) Stat(ctx context.Context, key string) (Object, error) {
	if err := begin(ctx, key); err != nil {
		return Object{}, err
	}
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{Checksum: true})
	if err != nil {
		return Object{}, s3Err(key, err)
	}
	return objectOf(info), nil
}

// Delete removes the object; S3 itself treats a missing key as already deleted.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := begin(ctx, key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s3Err(key, err)
	}
	return nil
}

// SignedURL presigns a GET that makes the bucket answer with an attachment
// Content-Disposition (response-content-disposition), so browsers save the file.
func (s *S3) SignedURL(ctx context.Context, key string, ttl time.Duration, filename string) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	if err := checkTTL(ttl); err != nil {
		return "", err
	}
	params := url.Values{"response-content-disposition": {attachment(key, filename)}}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, key, ttl, params)
	if err != nil {
		return "", s3Err(key, err)
	}
	return u.String(), nil
}

func objectOf(info minio.ObjectInfo) Object {
	return Object{
		Key:          info.Key,
		Size:         info.Size,
		ContentType:  info.ContentType,
		ETag:         strings.Trim(info.ETag, `"`),
		LastModified: info.LastModified,
		Version:      info.VersionID,
		// S3 reports a composite checksum as "<base64>-<parts>", the form Object keeps.
		ChecksumSHA256: info.ChecksumSHA256,
	}
}

// mapErr translates the bucket's "NoSuchKey" (which the client also reports for a bodiless
// 404 to HEAD) into ErrNotFound. A missing bucket stays its own error: it is a
// configuration mistake, not a missing object.
func s3Err(key string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.Code == minio.NoSuchKey {
		return fmt.Errorf("blob: %q: %w", key, ErrNotFound)
	}
	return fmt.Errorf("blob: %q: %w", key, err)
}
