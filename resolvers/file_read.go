package resolvers

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// fileVariant presents a file as the File variant of its service, so that a document
// selecting each variant's own fields with inline fragments emits exactly the keys of
// upstream's *FileRead schemas: flagged_malicious_at for downloadables, public_url for
// product media and avatars.
func (r *Resolver) fileVariant(f *storage.StoredFile) model.File {
	size := humanReadableSize(f.Size)
	switch f.Service {
	case storage.FileServiceProductMedia:
		return &model.ProductMediaFile{ID: f.ID, OrganizationID: f.OrganizationID, Name: f.Name, Path: f.Path,
			MimeType: f.MimeType, Size: int(f.Size), StorageVersion: f.StorageVersion, ChecksumEtag: f.ChecksumETag,
			ChecksumSha256Base64: f.ChecksumSHA256Base64, ChecksumSha256Hex: f.ChecksumSHA256Hex,
			LastModifiedAt: f.LastModifiedAt, Version: f.Version, Service: f.Service, IsUploaded: f.IsUploaded,
			CreatedAt: f.CreatedAt, SizeReadable: size, PublicURL: r.filePublicURL(f)}
	case storage.FileServiceOrganizationAvatar:
		return &model.OrganizationAvatarFile{ID: f.ID, OrganizationID: f.OrganizationID, Name: f.Name, Path: f.Path,
			MimeType: f.MimeType, Size: int(f.Size), StorageVersion: f.StorageVersion, ChecksumEtag: f.ChecksumETag,
			ChecksumSha256Base64: f.ChecksumSHA256Base64, ChecksumSha256Hex: f.ChecksumSHA256Hex,
			LastModifiedAt: f.LastModifiedAt, Version: f.Version, Service: f.Service, IsUploaded: f.IsUploaded,
			CreatedAt: f.CreatedAt, SizeReadable: size, PublicURL: r.filePublicURL(f)}
	case storage.FileServiceSupportCaseAttachment:
		return &model.SupportCaseAttachmentFile{ID: f.ID, OrganizationID: f.OrganizationID, Name: f.Name,
			Path: f.Path, MimeType: f.MimeType, Size: int(f.Size), StorageVersion: f.StorageVersion,
			ChecksumEtag: f.ChecksumETag, ChecksumSha256Base64: f.ChecksumSHA256Base64,
			ChecksumSha256Hex: f.ChecksumSHA256Hex, LastModifiedAt: f.LastModifiedAt, Version: f.Version,
			Service: f.Service, IsUploaded: f.IsUploaded, CreatedAt: f.CreatedAt, SizeReadable: size}
	}
	return &model.DownloadableFile{ID: f.ID, OrganizationID: f.OrganizationID, Name: f.Name, Path: f.Path,
		MimeType: f.MimeType, Size: int(f.Size), StorageVersion: f.StorageVersion, ChecksumEtag: f.ChecksumETag,
		ChecksumSha256Base64: f.ChecksumSHA256Base64, ChecksumSha256Hex: f.ChecksumSHA256Hex,
		LastModifiedAt: f.LastModifiedAt, Version: f.Version, Service: f.Service, IsUploaded: f.IsUploaded,
		CreatedAt: f.CreatedAt, FlaggedMaliciousAt: f.FlaggedMaliciousAt, SizeReadable: size}
}

// The public, token-less paths Till serves outside /v1, where the links resolvers hand out
// point: product media and avatars, and portal downloads.
const (
	MediaPath     = "/media/"
	DownloadsPath = "/downloads/"
)

// publicLink is Till's public URL followed by path.
func (r *Resolver) publicLink(path string) string {
	return strings.TrimRight(r.portalURL, "/") + path
}

// filePublicURL is the public link of a product image or avatar: Till's media route, which
// redirects to a short-lived storage URL. It names the file by id (the name is only there
// for people and download tools), so a renamed file keeps its old links working.
func (r *Resolver) filePublicURL(f *storage.StoredFile) string {
	return r.publicLink(MediaPath + f.ID.String() + "/" + url.PathEscape(f.Name))
}

// humanReadableSize prints a byte count as upstream's human_readable_size does
// (f"{num:3.1f} {unit}B" in steps of 1024): "512.0 B", "1.5 KB", "10.0 MB".
func humanReadableSize(size int64) string {
	num := float64(size)
	for _, unit := range []string{"", "K", "M", "G", "T", "P", "E", "Z"} {
		if num > -1024 && num < 1024 {
			return fmt.Sprintf("%3.1f %sB", num, unit)
		}
		num /= 1024
	}
	return fmt.Sprintf("%.1f YiB", num)
}

// file reads a live file of the caller's organizations, uploaded or not.
func (r *Resolver) file(ctx context.Context, id uuid.UUID) (model.File, error) {
	f, err := storage.GetFile(ctx, r.db, organizations(ctx), id)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	return r.fileVariant(f), nil
}

// filesPage lists the caller's uploaded files, newest first (GET /v1/files/).
func (r *Resolver) filesPage(ctx context.Context, orgIDs, ids []uuid.UUID, a listArgs) (*model.FilePage, error) {
	p, w, err := rootWindow(ctx, a, nil, func(_ []storage.Sort, w storage.Window) (storage.Paged[*storage.StoredFile], error) {
		return storage.ListFiles(ctx, r.db, organizations(ctx), orgIDs, ids, w)
	})
	if err != nil {
		return nil, err
	}
	items := make([]model.File, len(p.Items))
	for i, f := range p.Items {
		items[i] = r.fileVariant(f)
	}
	return &model.FilePage{Items: items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// updateFile renames a file or changes its version. As upstream, a null or empty field is
// left alone; the object keeps its key, so only what clients see and downloads are named
// after changes.
func (r *Resolver) updateFile(ctx context.Context, id uuid.UUID, in model.FileUpdateInput) (model.File, error) {
	var u storage.FileUpdate
	if in.Name != nil && *in.Name != "" {
		if msg := plainNameProblem("file name", *in.Name); msg != "" {
			return nil, Invalid("value_error", msg, *in.Name, "input", "name")
		}
		u.Name = storage.Set(*in.Name)
	}
	if in.Version != nil && *in.Version != "" {
		if msg := plainNameProblem("version", *in.Version); msg != "" {
			return nil, Invalid("value_error", msg, *in.Version, "input", "version")
		}
		u.Version = storage.Set(*in.Version)
	}
	f, err := storage.GetFile(ctx, r.db, organizations(ctx), id)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	if err := r.checkFileWrite(ctx, f.OrganizationID, "You don't have the permission to update this file."); err != nil {
		return nil, err
	}
	if !u.IsZero() {
		f, err = storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.StoredFile, error) {
			return storage.UpdateFile(ctx, q, []uuid.UUID{f.OrganizationID}, id, u)
		})
		if err != nil {
			return nil, notFoundOr(err, "")
		}
	}
	return r.fileVariant(f), nil
}

// deleteFile soft-deletes a file and then removes its object, or discards its unfinished
// upload. A file that a downloadables benefit offers is refused: deleting it would take it
// away from the customers granted that benefit without anyone deciding so.
func (r *Resolver) deleteFile(ctx context.Context, id uuid.UUID) (model.File, error) {
	var f *storage.StoredFile
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		locked, err := storage.LockFile(ctx, tx, organizations(ctx), id)
		if err != nil {
			return notFoundOr(err, "")
		}
		if err := r.checkFileWrite(ctx, locked.OrganizationID, "You don't have the permission to delete this file."); err != nil {
			return err
		}
		benefits, err := storage.DownloadablesUsingFile(ctx, tx, locked.OrganizationID, id)
		if err != nil {
			return err
		}
		if len(benefits) > 0 {
			names := make([]string, len(benefits))
			for i, b := range benefits {
				names[i] = b.String()
			}
			return Invalid("value_error", fmt.Sprintf("The file is used by downloadables benefit(s) %s; remove it from them first.",
				strings.Join(names, ", ")), id.String(), "id")
		}
		f, err = storage.DeleteFile(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.discardFileObject(ctx, f)
	return r.fileVariant(f), nil
}

// discardFileObject removes a deleted file's bytes. The row is already deleted, so nothing
// serves them any more; a storage failure is logged rather than failing the delete, and
// leaves an unreachable object behind.
func (r *Resolver) discardFileObject(ctx context.Context, f *storage.StoredFile) {
	if r.blobs == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	var err error
	if !f.IsUploaded && f.UploadID != nil {
		err = r.blobs.AbortMultipart(ctx, f.Path, *f.UploadID)
	}
	if derr := r.blobs.Delete(ctx, f.Path); derr != nil && err == nil {
		err = derr
	}
	if err != nil {
		r.logger.ErrorContext(ctx, "files: discard object", "file_id", f.ID, "path", f.Path, "error", err)
	}
}

// PublicMediaURL is where a public media link redirects: a short-lived storage URL of an
// uploaded, enabled, live product image or avatar, downloaded under its current name.
// Other files, and unknown ids, are not found.
func (r *Resolver) PublicMediaURL(ctx context.Context, id uuid.UUID) (string, error) {
	f, err := storage.PublicFile(ctx, r.db, id)
	if err != nil {
		return "", notFoundOr(err, "")
	}
	if r.blobs == nil {
		return "", NotFound("")
	}
	return r.blobs.SignedURL(ctx, f.Path, r.files.mediaURLTTL(), f.Name)
}
