package storage

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// FileDownload is the part of a file a holder of a downloadables benefit sees, read together
// with the downloadable in one statement so a portal page costs no file lookups. Path is the
// object's key in blob storage; it is used to sign the download and never shown.
type FileDownload struct {
	ID                   uuid.UUID  `db:"id"`
	Name                 string     `db:"name"`
	Path                 string     `db:"path"`
	MimeType             string     `db:"mime_type"`
	Size                 int64      `db:"size"`
	Version              *string    `db:"version"`
	ChecksumEtag         *string    `db:"checksum_etag"`
	ChecksumSha256Base64 *string    `db:"checksum_sha256_base64"`
	ChecksumSha256Hex    *string    `db:"checksum_sha256_hex"`
	LastModifiedAt       *time.Time `db:"last_modified_at"`
	IsUploaded           bool       `db:"is_uploaded"`
}

// DownloadableGrant is one file of a downloadables benefit held by a customer (or one of its
// members): a row of downloadables with its file. Revoking keeps the row, so granting again
// keeps the download count.
type DownloadableGrant struct {
	ID               uuid.UUID    `db:"id"`
	CreatedAt        time.Time    `db:"created_at"`
	ModifiedAt       *time.Time   `db:"modified_at"`
	OrganizationID   uuid.UUID    `db:"organization_id"`
	BenefitID        uuid.UUID    `db:"benefit_id"`
	CustomerID       uuid.UUID    `db:"customer_id"`
	MemberID         *uuid.UUID   `db:"member_id"`
	Status           string       `db:"status"`
	Downloaded       int          `db:"downloaded"`
	LastDownloadedAt *time.Time   `db:"last_downloaded_at"`
	File             FileDownload `db:"file"`
}

const downloadableColumns = `d.id, d.created_at, d.modified_at, d.organization_id, d.benefit_id, d.customer_id,
	d.member_id, d.status, d.downloaded, d.last_downloaded_at, f.id AS "file.id", f.name AS "file.name",
	f.path AS "file.path", f.mime_type AS "file.mime_type", f.size AS "file.size", f.version AS "file.version",
	f.checksum_etag AS "file.checksum_etag", f.checksum_sha256_base64 AS "file.checksum_sha256_base64",
	f.checksum_sha256_hex AS "file.checksum_sha256_hex", f.last_modified_at AS "file.last_modified_at",
	f.is_uploaded AS "file.is_uploaded"`

// downloadableAvailable is what a granted downloadable needs to be listed and downloaded:
// the file uploaded, enabled, neither deleted nor flagged malicious, the benefit not
// deleted, and a granted grant of the benefit held by the same customer or member. The
// grant check makes a revoked subscription hide its files even where a downloadable row
// was left granted.
const downloadableAvailable = `d.status = 'granted' AND d.deleted_at IS NULL
	AND f.deleted_at IS NULL AND f.is_uploaded AND f.is_enabled AND f.flagged_malicious_at IS NULL
	AND EXISTS (SELECT 1 FROM benefits b WHERE b.id = d.benefit_id AND b.deleted_at IS NULL)
	AND EXISTS (SELECT 1 FROM benefit_grants g WHERE g.benefit_id = d.benefit_id AND g.customer_id = d.customer_id
		AND g.member_id IS NOT DISTINCT FROM d.member_id AND g.granted_at IS NOT NULL AND g.deleted_at IS NULL)`

// DownloadableHolder is who holds a downloadables benefit: a customer, or one of its members.
type DownloadableHolder struct {
	OrganizationID uuid.UUID
	BenefitID      uuid.UUID
	CustomerID     uuid.UUID
	MemberID       *uuid.UUID
}

// GrantDownloadables grants the holder the given files that exist in its organization and
// are not deleted: it creates their rows or sets revoked ones granted again, keeping their
// counts. It returns the ids of the granted files in the order of fileIDs; missing files
// are skipped, as upstream skips them.
func GrantDownloadables(ctx context.Context, q sqlx.ExtContext, h DownloadableHolder, fileIDs []uuid.UUID, now time.Time) ([]uuid.UUID, error) {
	if len(fileIDs) == 0 {
		return []uuid.UUID{}, nil
	}
	var got []uuid.UUID
	err := sqlx.SelectContext(ctx, q, &got, `INSERT INTO downloadables (created_at, organization_id, benefit_id,
			file_id, customer_id, member_id, status)
		SELECT $1, $2, $3, f.id, $4, $5, 'granted' FROM files f
		WHERE f.id = ANY($6) AND f.organization_id = $2 AND f.deleted_at IS NULL
		ON CONFLICT (customer_id, member_id, benefit_id, file_id) WHERE deleted_at IS NULL
		DO UPDATE SET status = 'granted', modified_at = CASE WHEN downloadables.status = 'granted'
			THEN downloadables.modified_at ELSE EXCLUDED.created_at END
		RETURNING file_id`, now, h.OrganizationID, h.BenefitID, h.CustomerID, h.MemberID, pq.Array(fileIDs))
	if err != nil {
		return nil, mapErr(err)
	}
	granted := make(map[uuid.UUID]bool, len(got))
	for _, id := range got {
		granted[id] = true
	}
	out := make([]uuid.UUID, 0, len(got))
	for _, id := range fileIDs {
		if granted[id] {
			out = append(out, id)
			delete(granted, id) // a file listed twice is granted once
		}
	}
	return out, nil
}

// RevokeDownloadables revokes the downloadables of the revoked grants' holders, except where
// the holder still has another granted grant of the same benefit (two orders of products
// with one benefit): losing one of them must not take the files away. Call it after the
// grants are revoked, in the same transaction.
func RevokeDownloadables(ctx context.Context, q sqlx.ExtContext, grants []*BenefitGrant, now time.Time) error {
	if len(grants) == 0 {
		return nil
	}
	benefits := make([]uuid.UUID, len(grants))
	customers := make([]uuid.UUID, len(grants))
	members := make([]uuid.NullUUID, len(grants))
	for i, g := range grants {
		benefits[i], customers[i] = g.BenefitID, g.CustomerID
		if g.MemberID != nil {
			members[i] = uuid.NullUUID{UUID: *g.MemberID, Valid: true}
		}
	}
	_, err := q.ExecContext(ctx, `UPDATE downloadables d SET status = 'revoked', modified_at = $4
		FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS h(benefit_id, customer_id, member_id)
		WHERE d.benefit_id = h.benefit_id AND d.customer_id = h.customer_id
			AND d.member_id IS NOT DISTINCT FROM h.member_id AND d.status = 'granted' AND d.deleted_at IS NULL
			AND NOT EXISTS (SELECT 1 FROM benefit_grants g WHERE g.benefit_id = d.benefit_id
				AND g.customer_id = d.customer_id AND g.member_id IS NOT DISTINCT FROM d.member_id
				AND g.granted_at IS NOT NULL AND g.deleted_at IS NULL)`,
		pq.Array(benefits), pq.Array(customers), pq.Array(members), now)
	return mapErr(err)
}

// RefreshBenefitDownloadables applies a downloadables benefit's new files to its holders:
// files no longer listed are revoked, active files are granted to every holder of a granted
// grant (archived ones are left as they are: kept by whoever has them, given to nobody new),
// and each granted grant's properties become {"files": [its granted file ids]} in the
// benefit's order. It returns the grants whose properties changed.
func RefreshBenefitDownloadables(ctx context.Context, q sqlx.ExtContext, orgID, benefitID uuid.UUID, files, active []uuid.UUID, now time.Time) ([]uuid.UUID, error) {
	if _, err := q.ExecContext(ctx, `UPDATE downloadables SET status = 'revoked', modified_at = $3
		WHERE benefit_id = $1 AND status = 'granted' AND deleted_at IS NULL AND file_id <> ALL($2)`,
		benefitID, pq.Array(files), now); err != nil {
		return nil, mapErr(err)
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO downloadables (created_at, organization_id, benefit_id,
			file_id, customer_id, member_id, status)
		SELECT DISTINCT $1::timestamptz, g.organization_id, g.benefit_id, f.id, g.customer_id, g.member_id, 'granted'
		FROM benefit_grants g JOIN files f ON f.organization_id = g.organization_id
		WHERE g.benefit_id = $2 AND g.organization_id = $3 AND g.granted_at IS NOT NULL AND g.deleted_at IS NULL
			AND f.id = ANY($4) AND f.deleted_at IS NULL
		ON CONFLICT (customer_id, member_id, benefit_id, file_id) WHERE deleted_at IS NULL
		DO UPDATE SET status = 'granted', modified_at = EXCLUDED.created_at WHERE downloadables.status = 'revoked'`,
		now, benefitID, orgID, pq.Array(active)); err != nil {
		return nil, mapErr(err)
	}
	var changed []uuid.UUID
	err := sqlx.SelectContext(ctx, q, &changed, `WITH fresh AS (
			SELECT g.id, jsonb_build_object('files', COALESCE((SELECT jsonb_agg(d.file_id::text
				ORDER BY array_position($2::uuid[], d.file_id), d.file_id)
				FROM downloadables d WHERE d.benefit_id = g.benefit_id AND d.customer_id = g.customer_id
					AND d.member_id IS NOT DISTINCT FROM g.member_id AND d.status = 'granted'
					AND d.deleted_at IS NULL), '[]'::jsonb)) AS properties
			FROM benefit_grants g
			WHERE g.benefit_id = $1 AND g.granted_at IS NOT NULL AND g.deleted_at IS NULL)
		UPDATE benefit_grants g SET properties = fresh.properties, modified_at = $3
		FROM fresh WHERE g.id = fresh.id AND g.properties IS DISTINCT FROM fresh.properties
		RETURNING g.id`, benefitID, pq.Array(files), now)
	return changed, mapErr(err)
}

// ErrDownloadableGone refuses a download whose downloadable is granted but whose file was
// deleted, disabled, flagged malicious or never finished uploading: the seller withdrew it,
// which the download handler tells apart from a file the customer no longer holds.
var ErrDownloadableGone = errors.New("storage: downloadable file unavailable")

// CountDownload records one download of an available downloadable in one statement
// (downloaded + 1, last_downloaded_at), so concurrent downloads all count, and returns it
// with its file. A downloadable that is missing, revoked, or whose grant or benefit is gone
// is ErrNotFound; one whose file is unavailable is ErrDownloadableGone.
func CountDownload(ctx context.Context, q sqlx.ExtContext, id uuid.UUID, now time.Time) (*DownloadableGrant, error) {
	var d DownloadableGrant
	err := sqlx.GetContext(ctx, q, &d, `UPDATE downloadables d SET downloaded = d.downloaded + 1, last_downloaded_at = $2
		FROM files f WHERE d.id = $1 AND f.id = d.file_id AND `+downloadableAvailable+`
		RETURNING `+downloadableColumns, id, now)
	if err = mapErr(err); !errors.Is(err, ErrNotFound) {
		return &d, err
	}
	var fileLive bool
	err = sqlx.GetContext(ctx, q, &fileLive, `SELECT f.deleted_at IS NULL AND f.is_uploaded AND f.is_enabled
			AND f.flagged_malicious_at IS NULL
		FROM downloadables d JOIN files f ON f.id = d.file_id
		WHERE d.id = $1 AND d.status = 'granted' AND d.deleted_at IS NULL`, id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, ErrNotFound
	case err != nil:
		return nil, mapErr(err)
	case !fileLive:
		return nil, ErrDownloadableGone
	}
	return nil, ErrNotFound // granted, but its grant or benefit is gone
}
