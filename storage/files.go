package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// StoredFile is an organization's file: product media, an avatar, a downloadable or a
// support attachment. The row exists from the moment a client asks to upload it; the object
// itself is on blob storage under Path once the multipart upload UploadID is completed
// (IsUploaded). Files are soft-deleted, so ids that benefits or orders still name keep
// resolving for the record of what was sold; no read here returns a deleted file.
//
// The GraphQL API presents it as one of the File variants, so it is not named File, which
// would bind it to that interface.
type StoredFile struct {
	ID             uuid.UUID   `db:"id"`
	CreatedAt      time.Time   `db:"created_at"`
	ModifiedAt     *time.Time  `db:"modified_at"`
	OrganizationID uuid.UUID   `db:"organization_id"`
	Service        FileService `db:"service"`
	Name           string      `db:"name"`
	Version        *string     `db:"version"`
	Path           string      `db:"path"`
	MimeType       string      `db:"mime_type"`
	Size           int64       `db:"size"`
	StorageVersion *string     `db:"storage_version"`
	ChecksumETag   *string     `db:"checksum_etag"`
	// ChecksumSHA256Base64 and ChecksumSHA256Hex are the whole-file digest the client
	// declared when it started the upload, kept as given: upstream does not recompute them.
	ChecksumSHA256Base64 *string    `db:"checksum_sha256_base64"`
	ChecksumSHA256Hex    *string    `db:"checksum_sha256_hex"`
	LastModifiedAt       *time.Time `db:"last_modified_at"`
	UploadID             *string    `db:"upload_id"`
	IsUploaded           bool       `db:"is_uploaded"`
	IsEnabled            bool       `db:"is_enabled"`
	FlaggedMaliciousAt   *time.Time `db:"flagged_malicious_at"`
}

const fileColumns = `id, created_at, modified_at, organization_id, service, name, version, path, mime_type, size,
	storage_version, checksum_etag, checksum_sha256_base64, checksum_sha256_hex, last_modified_at, upload_id,
	is_uploaded, is_enabled, flagged_malicious_at`

// FileWrite holds a new file's fields, validated by the caller. ID is chosen by the caller
// because the object key (Path) contains it and the upload starts before the row exists.
type FileWrite struct {
	ID                   uuid.UUID
	Service              FileService
	Name                 string
	Version              *string
	Path                 string
	MimeType             string
	Size                 int64
	ChecksumSHA256Base64 *string
	ChecksumSHA256Hex    *string
	UploadID             string
}

// CreateFile stores a file whose upload has started and is not completed.
func CreateFile(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, w FileWrite) (*StoredFile, error) {
	var f StoredFile
	err := sqlx.GetContext(ctx, q, &f, `INSERT INTO files (id, organization_id, service, name, version, path,
		mime_type, size, checksum_sha256_base64, checksum_sha256_hex, upload_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING `+fileColumns,
		w.ID, orgID, w.Service, w.Name, w.Version, w.Path, w.MimeType, w.Size, w.ChecksumSHA256Base64,
		w.ChecksumSHA256Hex, w.UploadID)
	return &f, mapErr(err)
}

// GetFile reads a live file of the given organizations, uploaded or not.
func GetFile(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*StoredFile, error) {
	var f StoredFile
	err := sqlx.GetContext(ctx, q, &f, `SELECT `+fileColumns+` FROM files
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL`, id, pq.Array(orgs))
	return &f, mapErr(err)
}

// LockFile reads a live file of the given organizations and locks its row until the
// transaction ends, so that completing or deleting it is decided once: a second completion
// waits and then sees the first one's result.
func LockFile(ctx context.Context, tx *sqlx.Tx, orgs []uuid.UUID, id uuid.UUID) (*StoredFile, error) {
	var f StoredFile
	err := sqlx.GetContext(ctx, tx, &f, `SELECT `+fileColumns+` FROM files
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL FOR UPDATE`, id, pq.Array(orgs))
	return &f, mapErr(err)
}

// PublicFile reads a file anyone may fetch: uploaded, enabled, live, of a public service
// (product media or an organization avatar). Other files are not found.
func PublicFile(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (*StoredFile, error) {
	var f StoredFile
	err := sqlx.GetContext(ctx, q, &f, `SELECT `+fileColumns+` FROM files
		WHERE id = $1 AND deleted_at IS NULL AND is_uploaded AND is_enabled
		  AND service IN ('product_media', 'organization_avatar')`, id)
	return &f, mapErr(err)
}

// FileUploaded is what storage reported when the upload was assembled.
type FileUploaded struct {
	ETag           string
	LastModifiedAt time.Time
	StorageVersion *string
}

// MarkFileUploaded records a completed upload. The upload id is kept: it names the upload
// the object came from.
func MarkFileUploaded(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, u FileUploaded, now time.Time) (*StoredFile, error) {
	var f StoredFile
	err := sqlx.GetContext(ctx, q, &f, `UPDATE files SET is_uploaded = true, checksum_etag = $2,
		last_modified_at = $3, storage_version = $4, modified_at = $5
		WHERE id = $1 AND deleted_at IS NULL RETURNING `+fileColumns,
		id, u.ETag, u.LastModifiedAt, u.StorageVersion, now)
	return &f, mapErr(err)
}

// ListFiles returns one window of the uploaded live files of the given organizations, newest
// first, narrowed to orgFilter and ids when they are not empty, with the total count. Files
// whose upload never completed are left out, as upstream lists them.
func ListFiles(ctx context.Context, q sqlx.ExtContext, orgs, orgFilter, ids []uuid.UUID, w Window) (Paged[*StoredFile], error) {
	f := orgFilters("organization_id", orgs, "deleted_at IS NULL", "is_uploaded")
	anyOf(f, "organization_id", orgFilter)
	anyOf(f, "id", ids)
	return listWindow[*StoredFile](ctx, q, listSQL{Columns: fileColumns, From: "files", ID: "id", Where: f.where,
		Args: f.args, Default: []Sort{{Column: "created_at", Desc: true}}}, w)
}

// FileUpdate is a change to a file: each set field writes its column, the others keep what
// they hold. The path is not among them: the object stays where it was uploaded.
type FileUpdate struct {
	Name    Omittable[string]
	Version Omittable[string]
}

func (u FileUpdate) assignments() []assignment {
	return []assignment{u.Name.to("name"), u.Version.to("version")}
}

// IsZero reports whether u changes nothing, so a caller can skip the write (and the
// modified_at stamp) altogether.
func (u FileUpdate) IsZero() bool { return isZero(u) }

// UpdateFile writes the set fields of u to a live file of the given organizations.
func UpdateFile(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, u FileUpdate) (*StoredFile, error) {
	sets, args := setClause("modified_at = now()", u, []any{id, pq.Array(orgs)})
	var f StoredFile
	err := sqlx.GetContext(ctx, q, &f, `UPDATE files SET `+sets+`
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL RETURNING `+fileColumns, args...)
	return &f, mapErr(err)
}

// DeleteFile soft-deletes a live file and detaches it from the products that show it, as
// upstream deletes the product media rows with the file.
func DeleteFile(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (*StoredFile, error) {
	var f StoredFile
	err := sqlx.GetContext(ctx, q, &f, `UPDATE files SET deleted_at = now(), modified_at = now()
		WHERE id = $1 AND deleted_at IS NULL RETURNING `+fileColumns, id)
	if err != nil {
		return nil, mapErr(err)
	}
	if _, err := q.ExecContext(ctx, `DELETE FROM product_medias WHERE file_id = $1`, id); err != nil {
		return nil, mapErr(err)
	}
	return &f, nil
}

// DownloadablesUsingFile lists the live downloadables benefits of an organization whose
// properties.files names the file, oldest first.
func DownloadablesUsingFile(ctx context.Context, q sqlx.ExtContext, orgID, fileID uuid.UUID) ([]uuid.UUID, error) {
	ids := []uuid.UUID{}
	err := sqlx.SelectContext(ctx, q, &ids, `SELECT id FROM benefits
		WHERE organization_id = $1 AND type = 'downloadables' AND deleted_at IS NULL
		  AND jsonb_typeof(properties->'files') = 'array' AND jsonb_exists(properties->'files', $2)
		ORDER BY created_at, id`, orgID, fileID.String())
	return ids, mapErr(err)
}

// UserOrganizationRole is a user's role (owner, admin, member) in an organization they
// belong to; ErrNotFound when they do not.
func UserOrganizationRole(ctx context.Context, q sqlx.ExtContext, userID, orgID uuid.UUID) (string, error) {
	var role string
	err := sqlx.GetContext(ctx, q, &role, `SELECT role FROM user_organizations
		WHERE user_id = $1 AND organization_id = $2 AND deleted_at IS NULL`, userID, orgID)
	return role, mapErr(err)
}
