package blob

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// CreateMultipart starts a multipart upload in the bucket. When the parts carry digests the
// upload is created with the SHA256 checksum algorithm, so the bucket verifies every part
// and the completed object has S3's composite checksum.
func (s *S3) CreateMultipart(ctx context.Context, key string, spec UploadSpec) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	if err := ValidateParts(spec.Size, spec.Parts, 0); err != nil {
		return "", err
	}
	opts := minio.PutObjectOptions{ContentType: contentTypeOrDefault(spec.ContentType)}
	if spec.Parts[0].SHA256Base64 != "" {
		opts.UserMetadata = map[string]string{"X-Amz-Checksum-Algorithm": "SHA256"}
	}
	id, err := s.core().NewMultipartUpload(ctx, s.bucket, key, opts)
	if err != nil {
		return "", s3Err(key, err)
	}
	return id, nil
}

func (s *S3) core() minio.Core { return minio.Core{Client: s.client} }

// PresignPart presigns the part's PUT (UploadPart), with the digest header among the
// signed headers when the part has one, so a client cannot drop or change it.
func (s *S3) PresignPart(ctx context.Context, key, uploadID string, part Part, ttl time.Duration) (PresignedPart, error) {
	if err := begin(ctx, key); err != nil {
		return PresignedPart{}, err
	}
	if err := checkTTL(ttl); err != nil {
		return PresignedPart{}, err
	}
	if uploadID == "" {
		return PresignedPart{}, uploadNotFound(uploadID)
	}
	if err := checkPart(part); err != nil {
		return PresignedPart{}, err
	}
	params := url.Values{"partNumber": {strconv.Itoa(part.Number)}, "uploadId": {uploadID}}
	signed := http.Header{}
	if part.SHA256Base64 != "" {
		signed.Set(headerChecksumSHA256, part.SHA256Base64)
	}
	expires := time.Now().Add(ttl)
	u, err := s.client.PresignHeader(ctx, http.MethodPut, s.bucket, key, ttl, params, signed)
	if err != nil {
		return PresignedPart{}, s3Err(key, err)
	}
	return PresignedPart{URL: u.String(), Headers: partHeaders(part), ExpiresAt: expires}, nil
}

// CompleteMultipart checks parts against the bucket's list of uploaded parts first, with
// Local's rules, so both stores refuse the same lists with the same errors, then has the
// bucket assemble the object.
func (s *S3) CompleteMultipart(ctx context.Context, key, uploadID string, parts []CompletedPart) (Object, error) {
	if err := begin(ctx, key); err != nil {
		return Object{}, err
	}
	uploaded, err := s.listParts(ctx, key, uploadID)
	if err != nil {
		return Object{}, err
	}
	complete, err := checkS3Completion(uploaded, parts)
	if err != nil {
		return Object{}, err
	}
	info, err := s.core().CompleteMultipartUpload(ctx, s.bucket, key, uploadID, complete, minio.PutObjectOptions{})
	if err != nil {
		return Object{}, s3UploadErr(key, uploadID, err)
	}
	obj, err := s.Stat(ctx, key)
	if err != nil {
		return Object{}, err
	}
	// The completion's ETag and checksum are the multipart ones; a HEAD may not repeat them.
	obj.ETag = NormalizeETag(info.ETag)
	obj.ChecksumSHA256 = info.ChecksumSHA256
	if info.VersionID != "" {
		obj.Version = info.VersionID
	}
	return obj, nil
}

// listParts returns the upload's uploaded parts by number.
func (s *S3) listParts(ctx context.Context, key, uploadID string) (map[int]minio.ObjectPart, error) {
	parts := map[int]minio.ObjectPart{}
	marker := 0
	for {
		res, err := s.core().ListObjectParts(ctx, s.bucket, key, uploadID, marker, 1000)
		if err != nil {
			return nil, s3UploadErr(key, uploadID, err)
		}
		for _, p := range res.ObjectParts {
			parts[p.PartNumber] = p
		}
		if !res.IsTruncated || res.NextPartNumberMarker <= marker {
			return parts, nil
		}
		marker = res.NextPartNumberMarker
	}
}

// checkS3Completion applies Local's completion rules to the bucket's uploaded parts. The
// bucket does not know how many parts the upload was planned with, so a list that stops
// early is refused only when a later part was uploaded; callers keep the spec and can check
// the size.
func checkS3Completion(uploaded map[int]minio.ObjectPart, parts []CompletedPart) ([]minio.CompletePart, error) {
	if err := checkPartList(parts); err != nil {
		return nil, err
	}
	out := make([]minio.CompletePart, 0, len(parts))
	for _, p := range parts {
		up, ok := uploaded[p.Number]
		switch {
		case !ok:
			return nil, &PartError{p.Number, "not uploaded"}
		case NormalizeETag(p.ETag) != NormalizeETag(up.ETag):
			return nil, &PartError{p.Number, "ETag does not match"}
		case p.SHA256Base64 != "" && up.ChecksumSHA256 != "" && !sameSHA256(p.SHA256Base64, up.ChecksumSHA256):
			return nil, &PartError{p.Number, "SHA-256 does not match"}
		}
		out = append(out, minio.CompletePart{PartNumber: p.Number, ETag: up.ETag, ChecksumSHA256: p.SHA256Base64})
	}
	for n := range uploaded {
		if n > len(parts) {
			return nil, &PartError{len(parts) + 1, "missing"}
		}
	}
	return out, nil
}

// AbortMultipart aborts the upload; an unknown upload is already gone.
func (s *S3) AbortMultipart(ctx context.Context, key, uploadID string) error {
	if err := begin(ctx, key); err != nil {
		return err
	}
	err := s.core().AbortMultipartUpload(ctx, s.bucket, key, uploadID)
	if err != nil && !errors.Is(s3UploadErr(key, uploadID, err), ErrUploadNotFound) {
		return s3Err(key, err)
	}
	return nil
}

// s3UploadErr translates the bucket's multipart errors: NoSuchUpload into
// ErrUploadNotFound, refusals of the part list into *PartError.
func s3UploadErr(key, uploadID string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch resp.Code {
		case "NoSuchUpload":
			return uploadNotFound(uploadID)
		case "InvalidPart", "InvalidPartOrder", "EntityTooSmall", "BadDigest", "InvalidDigest":
			return &PartError{0, strings.TrimSpace(resp.Code + ": " + resp.Message)}
		}
	}
	return fmt.Errorf("blob: %q: %w", key, err)
}
