package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/storage"
	"till/storage/storagetest"
)

func TestFileLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storagetest.New(t)
	org, err := storage.CreateOrganization(ctx, db, "Files", "files-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	other, err := storage.CreateOrganization(ctx, db, "Other", "other-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	create := func(orgID uuid.UUID, service storage.FileService) *storage.StoredFile {
		t.Helper()
		id := uuid.New()
		f, err := storage.CreateFile(ctx, db, orgID, storage.FileWrite{ID: id, Service: service, Name: "a.png",
			Path: string(service) + "/" + orgID.String() + "/" + id.String() + "/a.png", MimeType: "image/png", Size: 3,
			UploadID: "upload-" + id.String()})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	media := create(org.ID, "product_media")
	download := create(org.ID, "downloadable")
	foreign := create(other.ID, "downloadable")
	if media.IsUploaded || !media.IsEnabled || media.ID == uuid.Nil || *media.UploadID != "upload-"+media.ID.String() {
		t.Errorf("new file = %+v, want enabled, not uploaded, with its upload id", media)
	}
	if _, err := storage.CreateFile(ctx, db, org.ID, storage.FileWrite{ID: uuid.New(), Service: "downloadable",
		Name: "a.png", Path: media.Path, MimeType: "image/png", Size: 3, UploadID: "another"}); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("a second file at the same path: %v, want ErrConflict", err)
	}
	mine := []uuid.UUID{org.ID}
	if _, err := storage.GetFile(ctx, db, mine, foreign.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another organization's file: %v, want ErrNotFound", err)
	}
	if _, err := storage.PublicFile(ctx, db, media.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a file not uploaded is public: %v", err)
	}
	list := func(filter, ids []uuid.UUID) []uuid.UUID {
		t.Helper()
		p, err := storage.ListFiles(ctx, db, []uuid.UUID{org.ID, other.ID}, filter, ids, storage.Window{Page: 1, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		out := []uuid.UUID{}
		for _, f := range p.Items {
			out = append(out, f.ID)
		}
		return out
	}
	if got := list(nil, nil); len(got) != 0 {
		t.Errorf("listed %v before any upload completed, want none", got)
	}

	uploadedAt := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	for _, f := range []*storage.StoredFile{media, download, foreign} {
		tx := db.MustBegin()
		if _, err := storage.LockFile(ctx, tx, []uuid.UUID{f.OrganizationID}, f.ID); err != nil {
			t.Fatal(err)
		}
		got, err := storage.MarkFileUploaded(ctx, tx, f.ID, storage.FileUploaded{ETag: "abc-1", LastModifiedAt: uploadedAt}, uploadedAt)
		if err != nil || tx.Commit() != nil {
			t.Fatal(err)
		}
		if !got.IsUploaded || *got.ChecksumETag != "abc-1" || !got.LastModifiedAt.Equal(uploadedAt) || got.StorageVersion != nil {
			t.Errorf("uploaded file = %+v", got)
		}
	}
	db.MustExec(`UPDATE files SET created_at = now() - interval '1 hour' WHERE id = $1`, media.ID)
	if diff := cmp.Diff([]uuid.UUID{foreign.ID, download.ID, media.ID}, list(nil, nil)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uuid.UUID{media.ID}, list([]uuid.UUID{org.ID}, []uuid.UUID{media.ID, foreign.ID})); diff != "" {
		t.Errorf("filtered list (-want +got):\n%s", diff)
	}
	if _, err := storage.PublicFile(ctx, db, media.ID); err != nil {
		t.Errorf("uploaded product media is not public: %v", err)
	}
	if _, err := storage.PublicFile(ctx, db, download.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a downloadable is public: %v", err)
	}

	renamed, err := storage.UpdateFile(ctx, db, mine, media.ID, storage.FileUpdate{Name: storage.Set("b.png")})
	if err != nil || renamed.Name != "b.png" || renamed.Path != media.Path || renamed.ModifiedAt == nil {
		t.Errorf("renamed = %+v (%v), want the new name at the old path", renamed, err)
	}
	if _, err := storage.UpdateFile(ctx, db, mine, foreign.ID, storage.FileUpdate{Name: storage.Set("x")}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("renaming another organization's file: %v, want ErrNotFound", err)
	}

	benefit := uuid.New()
	db.MustExec(`INSERT INTO benefits (id, organization_id, type, description, properties)
		VALUES ($1, $2, 'downloadables', 'Files', jsonb_build_object('files', jsonb_build_array($3::text)))`,
		benefit, org.ID, download.ID.String())
	db.MustExec(`INSERT INTO benefits (organization_id, type, description, properties)
		VALUES ($1, 'custom', 'Note', jsonb_build_object('files', jsonb_build_array($2::text)))`, org.ID, media.ID.String())
	for id, want := range map[uuid.UUID][]uuid.UUID{download.ID: {benefit}, media.ID: {}} {
		got, err := storage.DownloadablesUsingFile(ctx, db, org.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("benefits using %s (-want +got):\n%s", id, diff)
		}
	}

	product, err := storage.CreateProduct(ctx, db, org.ID, storage.ProductWrite{Name: "Poster", Visibility: "public"})
	if err != nil {
		t.Fatal(err)
	}
	db.MustExec(`INSERT INTO product_medias (product_id, file_id, organization_id) VALUES ($1, $2, $3)`, product.ID, media.ID, org.ID)
	deleted, err := storage.DeleteFile(ctx, db, media.ID)
	if err != nil || deleted.ID != media.ID {
		t.Fatalf("delete = %+v, %v", deleted, err)
	}
	var medias int
	if err := db.Get(&medias, `SELECT count(*) FROM product_medias WHERE file_id = $1`, media.ID); err != nil || medias != 0 {
		t.Errorf("product medias left after delete: %d (%v)", medias, err)
	}
	if _, err := storage.GetFile(ctx, db, mine, media.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a deleted file is read: %v", err)
	}
	if _, err := storage.DeleteFile(ctx, db, media.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleting twice: %v, want ErrNotFound", err)
	}
}

func TestUserOrganizationRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storagetest.New(t)
	org, err := storage.CreateOrganization(ctx, db, "Roles", "roles-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	user := uuid.New()
	db.MustExec(`INSERT INTO users (id, email) VALUES ($1, 'roles@example.com')`, user)
	if _, err := storage.UserOrganizationRole(ctx, db, user, org.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("role before joining: %v, want ErrNotFound", err)
	}
	db.MustExec(`INSERT INTO user_organizations (user_id, organization_id, role) VALUES ($1, $2, 'admin')`, user, org.ID)
	if role, err := storage.UserOrganizationRole(ctx, db, user, org.ID); err != nil || role != "admin" {
		t.Errorf("role = %q (%v), want admin", role, err)
	}
}
