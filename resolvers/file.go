package resolvers

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/internal/blob"
	"till/storage"
)

// FileSettings tune file uploads. The zero value is upstream's behaviour.
type FileSettings struct {
	// MaxPartSize caps one part of an upload; 0 means blob.MaxPartSize, S3's limit. An
	// operator lowers it to bound what one presigned PUT may write.
	MaxPartSize int64
	// PresignTTL is how long the part upload URLs work; 0 means 10 minutes, upstream's
	// S3_FILES_PRESIGN_TTL.
	PresignTTL time.Duration
	// MediaURLTTL is how long the storage URLs that public media links redirect to work;
	// 0 means 15 minutes, longer than the 5 minutes a cache may keep the redirect.
	MediaURLTTL time.Duration
}

func (s FileSettings) presignTTL() time.Duration {
	if s.PresignTTL <= 0 {
		return 10 * time.Minute
	}
	return s.PresignTTL
}

func (s FileSettings) mediaURLTTL() time.Duration {
	if s.MediaURLTTL <= 0 {
		return 15 * time.Minute
	}
	return s.MediaURLTTL
}

// FileServiceRule is what a service accepts at creation, as upstream's *FileCreate schemas
// constrain mime_type and size. /v1 builds its body schema from these rules, so both APIs
// refuse the same files.
type FileServiceRule struct {
	Service storage.FileService
	// MimePattern is the mime_type regular expression (pydantic's pattern); "" accepts any.
	MimePattern string
	// MaxSize is the largest size in bytes; 0 means no limit.
	MaxSize int64
}

// fileServiceRules are upstream's FileCreate variants, in its order.
var fileServiceRules = []FileServiceRule{
	{Service: storage.FileServiceDownloadable},
	{Service: storage.FileServiceProductMedia, MimePattern: `^image\/(jpeg|png|gif|webp|svg\+xml)$`, MaxSize: 10 << 20},
	{Service: storage.FileServiceOrganizationAvatar, MimePattern: `^image\/(jpeg|png|gif|webp|svg\+xml)$`, MaxSize: 1 << 20},
	{Service: storage.FileServiceSupportCaseAttachment, MimePattern: `^(image\/(jpeg|png|gif|webp)|video\/(mp4|quicktime|webm)` +
		`|application\/pdf|text\/(csv|plain)|application\/msword` +
		`|application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document` +
		`|application\/vnd\.ms-excel` +
		`|application\/vnd\.openxmlformats-officedocument\.spreadsheetml\.sheet)$`, MaxSize: 250 << 20},
}

// FileServiceRules lists the rules of every file service, in upstream's order.
func FileServiceRules() []FileServiceRule { return append([]FileServiceRule(nil), fileServiceRules...) }

// fileMimePatterns are the compiled patterns, by service.
var fileMimePatterns = func() map[storage.FileService]*regexp.Regexp {
	m := map[storage.FileService]*regexp.Regexp{}
	for _, r := range fileServiceRules {
		if r.MimePattern != "" {
			m[r.Service] = regexp.MustCompile(r.MimePattern)
		}
	}
	return m
}()

// maxPlainName is the longest file name or version in bytes: blob keys allow 200-byte
// segments, and both become one segment of the object key.
const maxPlainName = 200

// createFile starts a multipart upload and stores the file, then presigns every part. The
// body is checked before the organization, as upstream validates it first. A failure after
// the upload started aborts it, so no storage is left behind for a file that does not exist.
func (r *Resolver) createFile(ctx context.Context, in model.FileCreateInput) (*model.FileUpload, error) {
	w, parts, err := r.fileWrite(in)
	if err != nil {
		return nil, err
	}
	orgID, err := creationOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	if err := r.checkFileWrite(ctx, orgID, "You don't have the permission to create files."); err != nil {
		return nil, err
	}
	w.ID = uuid.New()
	segments := []string{string(w.Service), orgID.String(), w.ID.String()}
	if w.Version != nil {
		segments = append(segments, *w.Version)
	}
	if w.Path, err = blob.JoinKey(append(segments, w.Name)...); err != nil {
		return nil, Invalid("value_error", "The file name cannot be stored.", w.Name, "input", "name")
	}
	if r.blobs == nil {
		return nil, errors.New("files: no object storage configured")
	}
	if w.UploadID, err = r.blobs.CreateMultipart(ctx, w.Path, blob.UploadSpec{ContentType: w.MimeType, Size: w.Size,
		Parts: parts}); err != nil {
		return nil, fmt.Errorf("files: start upload: %w", err)
	}
	var out *model.FileUpload
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		f, err := storage.CreateFile(ctx, tx, orgID, w)
		if err != nil {
			return err
		}
		out, err = r.fileUpload(ctx, f, parts)
		return err
	})
	if err != nil {
		if aerr := r.blobs.AbortMultipart(context.WithoutCancel(ctx), w.Path, w.UploadID); aerr != nil {
			r.logger.ErrorContext(ctx, "files: abort upload", "path", w.Path, "error", aerr)
		}
		return nil, err
	}
	return out, nil
}

// fileWrite validates a create input into the row to store and the upload's parts.
func (r *Resolver) fileWrite(in model.FileCreateInput) (storage.FileWrite, []blob.Part, error) {
	w := storage.FileWrite{Service: in.Service, Name: in.Name, Version: in.Version, MimeType: in.MimeType,
		Size: int64(in.Size)}
	if msg := plainNameProblem("file name", in.Name); msg != "" {
		return w, nil, Invalid("value_error", msg, in.Name, "input", "name")
	}
	if in.Version != nil {
		if msg := plainNameProblem("version", *in.Version); msg != "" {
			return w, nil, Invalid("value_error", msg, *in.Version, "input", "version")
		}
	}
	if err := checkFileServiceRule(in.Service, in.MimeType, w.Size); err != nil {
		return w, nil, err
	}
	if in.ChecksumSha256Base64 != nil {
		digest, err := blob.DecodeSHA256(*in.ChecksumSha256Base64)
		if err != nil {
			return w, nil, Invalid("value_error", "The checksum is not a base64-encoded SHA-256 digest.",
				*in.ChecksumSha256Base64, "input", "checksumSha256Base64")
		}
		hexDigest := hex.EncodeToString(digest)
		w.ChecksumSHA256Base64, w.ChecksumSHA256Hex = in.ChecksumSha256Base64, &hexDigest
	}
	var parts []blob.Part
	if in.Upload != nil {
		parts = make([]blob.Part, len(in.Upload.Parts))
		for i, p := range in.Upload.Parts {
			parts[i] = blob.Part{Number: p.Number, Start: int64(p.ChunkStart), End: int64(p.ChunkEnd)}
			if p.ChecksumSha256Base64 != nil {
				parts[i].SHA256Base64 = *p.ChecksumSha256Base64
			}
		}
	}
	if err := blob.ValidateParts(w.Size, parts, r.files.MaxPartSize); err != nil {
		var pe *blob.PartError
		if !errors.As(err, &pe) {
			return w, nil, err
		}
		return w, nil, Invalid("value_error", partMessage(pe), nil, "input", "upload", "parts")
	}
	return w, parts, nil
}

// checkFileServiceRule applies a service's mime type and size limits with pydantic's
// wording, as upstream's schema would refuse them.
func checkFileServiceRule(service storage.FileService, mimeType string, size int64) error {
	for _, rule := range fileServiceRules {
		if rule.Service != service {
			continue
		}
		if re := fileMimePatterns[service]; re != nil && !re.MatchString(mimeType) {
			return &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "string_pattern_mismatch",
				Loc: []any{"input", "mimeType"}, Msg: "String should match pattern '" + rule.MimePattern + "'",
				Input: mimeType, Ctx: map[string]any{"pattern": rule.MimePattern}}}}
		}
		if rule.MaxSize > 0 && size > rule.MaxSize {
			return &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "less_than_equal",
				Loc: []any{"input", "size"}, Msg: fmt.Sprintf("Input should be less than or equal to %d", rule.MaxSize),
				Input: size, Ctx: map[string]any{"le": rule.MaxSize}}}}
		}
		return nil
	}
	return Invalid("enum", "Unknown file service.", service, "input", "service")
}

// plainNameProblem says why s cannot be a file name (or version): it becomes one segment of
// the object key and the name of downloads, so it must be a single plain name. Refusing is
// safer than cleaning: a name silently changed would not be the name the seller gave.
func plainNameProblem(what, s string) string {
	switch {
	case s == "":
		return fmt.Sprintf("The %s must not be empty.", what)
	case len(s) > maxPlainName:
		return fmt.Sprintf("The %s must be at most %d bytes long.", what, maxPlainName)
	case !utf8.ValidString(s):
		return fmt.Sprintf("The %s must be valid UTF-8.", what)
	case s == "." || s == "..":
		return fmt.Sprintf("The %s must not be . or ...", what)
	case strings.ContainsAny(s, `/\`):
		return fmt.Sprintf("The %s must not contain a slash or a backslash.", what)
	case strings.HasPrefix(s, "."):
		return fmt.Sprintf("The %s must not start with a dot.", what)
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return fmt.Sprintf("The %s must not contain control characters.", what)
		}
	}
	return ""
}

// partMessage words a refused part for a client: "Part 2 starts at byte 5, expected 4."
func partMessage(pe *blob.PartError) string {
	reason := pe.Reason
	if pe.Number == 0 {
		return "Invalid parts: " + reason + "."
	}
	return fmt.Sprintf("Part %d %s.", pe.Number, reason)
}

// fileUpload presigns every part of a new file's upload.
func (r *Resolver) fileUpload(ctx context.Context, f *storage.StoredFile, parts []blob.Part) (*model.FileUpload, error) {
	ttl := r.files.presignTTL()
	out := &model.FileUpload{ID: f.ID, OrganizationID: f.OrganizationID, Name: f.Name, Path: f.Path,
		MimeType: f.MimeType, Size: int(f.Size), StorageVersion: f.StorageVersion, ChecksumEtag: f.ChecksumETag,
		ChecksumSha256Base64: f.ChecksumSHA256Base64, ChecksumSha256Hex: f.ChecksumSHA256Hex,
		LastModifiedAt: f.LastModifiedAt, Version: f.Version, IsUploaded: f.IsUploaded, Service: f.Service,
		SizeReadable: humanReadableSize(f.Size),
		Upload:       &model.FileUploadMultipart{ID: *f.UploadID, Path: f.Path, Parts: make([]*model.FileUploadPart, len(parts))}}
	for i, p := range parts {
		signed, err := r.blobs.PresignPart(ctx, f.Path, *f.UploadID, p, ttl)
		if err != nil {
			return nil, fmt.Errorf("files: presign part %d: %w", p.Number, err)
		}
		headers, err := json.Marshal(nonNilHeaders(signed.Headers))
		if err != nil {
			return nil, err
		}
		part := &model.FileUploadPart{Number: p.Number, ChunkStart: int(p.Start), ChunkEnd: int(p.End), URL: signed.URL,
			ExpiresAt: signed.ExpiresAt.UTC(), Headers: storage.RawJSON(headers)}
		if p.SHA256Base64 != "" {
			part.ChecksumSha256Base64 = &p.SHA256Base64
		}
		out.Upload.Parts[i] = part
	}
	return out, nil
}

func nonNilHeaders(h map[string]string) map[string]string {
	if h == nil {
		return map[string]string{}
	}
	return h
}

// checkFileWrite refuses a user whose role in the organization does not allow managing its
// files: owners and admins may, plain members may not. Organization tokens act for their
// organization and always may.
func (r *Resolver) checkFileWrite(ctx context.Context, orgID uuid.UUID, detail string) error {
	p := auth.FromContext(ctx)
	if p.Kind != auth.KindUser {
		return nil
	}
	role, err := storage.UserOrganizationRole(ctx, r.db, p.UserID, orgID)
	if err != nil {
		return notFoundOr(err, "")
	}
	if role != "owner" && role != "admin" {
		return NotPermitted(detail)
	}
	return nil
}
