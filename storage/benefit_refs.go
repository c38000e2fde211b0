package storage

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// A benefit's properties may name objects: a meter_credit benefit its meter (meter_id), a
// downloadables benefit its files (files). They must belong to the benefit's organization,
// or one organization could point its benefits at another's objects and, because a meter in
// use cannot be archived and a file in use cannot be deleted, hold them hostage. The writes
// of benefits check this in the statement that writes, reading the ids from the properties
// being written, so no caller can skip the check and no concurrent change slips between a
// check and the write.

// RefError refuses a write naming an object that is not the organization's (or no longer
// exists): Table says which kind, ID which one and Index its position in the input's list.
// Another organization's object is reported exactly like a missing one.
type RefError struct {
	Table string
	ID    uuid.UUID
	Index int
}

func (e *RefError) Error() string { return fmt.Sprintf("storage: %s %s not found", e.Table, e.ID) }

// Unwrap lets errors.Is(err, ErrReference) match.
func (e *RefError) Unwrap() error { return ErrReference }

// benefitRefs lists the objects named by properties p (a jsonb expression) of a benefit of
// type typ, as rows (tbl, id, n) with n the 1-based position in the properties' list.
func benefitRefs(typ, p string) string {
	return `SELECT 'meters' AS tbl, (` + p + `->>'meter_id')::uuid AS id, 1::bigint AS n
			WHERE ` + typ + ` = 'meter_credit' AND ` + p + `->>'meter_id' IS NOT NULL
		UNION ALL
		SELECT 'files', x.id::uuid, x.n FROM jsonb_array_elements_text(CASE WHEN ` + typ + ` = 'downloadables'
			AND jsonb_typeof(` + p + `->'files') = 'array' THEN ` + p + `->'files' END) WITH ORDINALITY AS x(id, n)`
}

// benefitRefsCTE is the WITH clause of a benefit write: refs, the objects the new
// properties name, and ref_files, the live files of the organization among them, locked
// FOR SHARE. A concurrent deleteFile (which locks the file FOR UPDATE, then looks for
// benefits using it) either waits for this write and sees the benefit, or deletes first and
// this write finds the file gone. typ, p and org are SQL expressions.
func benefitRefsCTE(typ, p, org string) string {
	return `WITH refs AS (` + benefitRefs(typ, p) + `),
		ref_files AS (SELECT f.id FROM files f WHERE f.id IN (SELECT id FROM refs WHERE tbl = 'files')
			AND f.organization_id = ` + org + ` AND f.deleted_at IS NULL FOR SHARE)`
}

// benefitRefsOK is the condition a benefit write of organization org must meet: every meter
// in refs is the organization's and every file is in ref_files (see benefitRefsCTE).
func benefitRefsOK(org string) string {
	return `NOT EXISTS (SELECT 1 FROM refs r WHERE CASE r.tbl
		WHEN 'meters' THEN NOT EXISTS (SELECT 1 FROM meters m WHERE m.id = r.id AND m.organization_id = ` + org + `)
		ELSE r.id NOT IN (SELECT id FROM ref_files) END)`
}

// missingBenefitRef explains a refused benefit write: the first object the properties name
// that is not the organization's, meters first, files in list order. It only diagnoses: the
// write itself already refused atomically. With every object found, the benefit was missing.
func missingBenefitRef(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, typ BenefitType, props RawJSON) error {
	var rows []struct {
		Table string    `db:"tbl"`
		ID    uuid.UUID `db:"id"`
		N     int       `db:"n"`
	}
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT r.tbl, r.id, r.n FROM (`+benefitRefs("$2::text", "$3::jsonb")+`) r
		WHERE CASE r.tbl
			WHEN 'meters' THEN NOT EXISTS (SELECT 1 FROM meters m WHERE m.id = r.id AND m.organization_id = $1)
			ELSE NOT EXISTS (SELECT 1 FROM files f WHERE f.id = r.id AND f.organization_id = $1 AND f.deleted_at IS NULL) END
		ORDER BY r.tbl DESC, r.n LIMIT 1`, orgID, typ, props)
	switch {
	case err != nil:
		return mapErr(err)
	case len(rows) == 0:
		return ErrNotFound
	}
	return &RefError{Table: rows[0].Table, ID: rows[0].ID, Index: rows[0].N - 1}
}
