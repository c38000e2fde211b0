package resolvers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/blob"
	"till/storage"
)

// completeFileUpload assembles a file's uploaded parts on storage and marks it uploaded
// (upstream's FileService.complete_upload). The file's row stays locked from the checks to
// the commit, so concurrent completions are decided one at a time: the first succeeds and
// the others find the file uploaded. A refused or failed completion changes nothing, so the
// client can correct its parts and call again.
func (r *Resolver) completeFileUpload(ctx context.Context, id uuid.UUID, in model.FileUploadCompletedInput) (model.File, error) {
	parts := make([]blob.CompletedPart, len(in.Parts))
	for i, p := range in.Parts {
		parts[i] = blob.CompletedPart{Number: p.Number, ETag: p.ChecksumEtag}
		if p.ChecksumSha256Base64 != nil {
			parts[i].SHA256Base64 = *p.ChecksumSha256Base64
		}
	}
	var out *storage.StoredFile
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		f, err := storage.LockFile(ctx, tx, organizations(ctx), id)
		if err != nil {
			return notFoundOr(err, "")
		}
		if err := r.checkFileWrite(ctx, f.OrganizationID, "You don't have the permission to update this file."); err != nil {
			return err
		}
		if err := checkCompletion(f, in); err != nil {
			return err
		}
		obj, err := r.assemble(ctx, f, parts)
		if err != nil {
			return err
		}
		uploaded := storage.FileUploaded{ETag: obj.ETag, LastModifiedAt: obj.LastModified}
		if uploaded.LastModifiedAt.IsZero() {
			uploaded.LastModifiedAt = r.Now()
		}
		if obj.Version != "" {
			uploaded.StorageVersion = &obj.Version
		}
		out, err = storage.MarkFileUploaded(ctx, tx, f.ID, uploaded, r.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return r.fileVariant(out), nil
}

// checkCompletion refuses a completion that does not match the file: upstream trusts the
// body's path and id, which would let a client complete another upload under this file.
func checkCompletion(f *storage.StoredFile, in model.FileUploadCompletedInput) error {
	switch {
	case f.IsUploaded:
		return Invalid("value_error", "The file upload is already completed.", in.ID, "input", "id")
	case in.Path != f.Path:
		return Invalid("value_error", "The path is not this file's upload path.", in.Path, "input", "path")
	case f.UploadID == nil || in.ID != *f.UploadID:
		return Invalid("value_error", "The id is not this file's upload id.", in.ID, "input", "id")
	}
	return nil
}

// assemble completes the multipart upload. An upload the store no longer knows may have
// been completed by an earlier call whose transaction then failed; when the object is there,
// that completion is taken, so a retry repairs the row instead of stranding the file.
func (r *Resolver) assemble(ctx context.Context, f *storage.StoredFile, parts []blob.CompletedPart) (blob.Object, error) {
	if r.blobs == nil {
		return blob.Object{}, errors.New("files: no object storage configured")
	}
	obj, err := r.blobs.CompleteMultipart(ctx, f.Path, *f.UploadID, parts)
	var pe *blob.PartError
	switch {
	case err == nil && obj.Size != f.Size:
		// A bucket completes whatever parts it is given; Local refuses a short list itself.
		if derr := r.blobs.Delete(ctx, f.Path); derr != nil {
			return obj, fmt.Errorf("files: delete short object: %w", derr)
		}
		return obj, Invalid("value_error", fmt.Sprintf("The parts hold %d bytes, the file was created with %d; create the file again.",
			obj.Size, f.Size), len(parts), "input", "parts")
	case err == nil:
		return obj, nil
	case errors.As(err, &pe):
		return obj, partRefused(pe, parts)
	case errors.Is(err, blob.ErrUploadNotFound):
		if stored, serr := r.blobs.Stat(ctx, f.Path); serr == nil {
			return stored, nil
		}
		return obj, Invalid("value_error", "The upload no longer exists; create the file again.", *f.UploadID, "input", "id")
	}
	return obj, fmt.Errorf("files: complete upload: %w", err)
}

// partRefused reports a part the store refused at its index in the body when the part's
// number appears there (at its repetition when it appears twice), else at the list.
func partRefused(pe *blob.PartError, parts []blob.CompletedPart) error {
	loc := []any{"input", "parts"}
	at := -1
	if pe.Number != 0 {
		for i, p := range parts {
			if p.Number == pe.Number {
				if at >= 0 {
					at = i
					break
				}
				at = i
			}
		}
	}
	if at >= 0 {
		loc = append(loc, at)
	}
	return Invalid("value_error", partMessage(pe), pe.Number, loc...)
}
