package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// downloadWorld is an organization with a downloadables benefit, a customer holding a granted
// grant of it, and files inserted directly: files are another use case's business.
type downloadWorld struct {
	db     *sqlx.DB
	holder storage.DownloadableHolder
	grant  uuid.UUID
}

func newDownloadWorld(t *testing.T) downloadWorld {
	t.Helper()
	db := storagetest.New(t)
	org, err := storage.CreateOrganization(context.Background(), db, "Files", "files-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	w := downloadWorld{db: db, holder: storage.DownloadableHolder{OrganizationID: org.ID}}
	w.get(t, &w.holder.CustomerID, `INSERT INTO customers (organization_id, email) VALUES ($1, 'c@example.com') RETURNING id`, org.ID)
	w.get(t, &w.holder.BenefitID, `INSERT INTO benefits (organization_id, type, description) VALUES ($1, 'downloadables', 'Files')
		RETURNING id`, org.ID)
	w.get(t, &w.grant, `INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, granted_at)
		VALUES ($1, $2, $3, now()) RETURNING id`, org.ID, w.holder.BenefitID, w.holder.CustomerID)
	return w
}

func (w downloadWorld) get(t *testing.T, dest any, query string, args ...any) {
	t.Helper()
	if err := w.db.GetContext(context.Background(), dest, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// file inserts an uploaded, enabled file of orgID.
func (w downloadWorld) file(t *testing.T, orgID uuid.UUID, name string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	w.db.MustExec(`INSERT INTO files (id, organization_id, service, name, path, mime_type, size, is_uploaded)
		VALUES ($1, $2, 'downloadable', $3, $4, 'text/plain', 3, true)`, id, orgID, name,
		fmt.Sprintf("downloadable/%s/%s/%s", orgID, id, name))
	return id
}

func TestGrantDownloadablesGrantsExistingFilesInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newDownloadWorld(t)
	a, b := w.file(t, w.holder.OrganizationID, "a.txt"), w.file(t, w.holder.OrganizationID, "b.txt")
	deleted := w.file(t, w.holder.OrganizationID, "gone.txt")
	w.db.MustExec(`UPDATE files SET deleted_at = now() WHERE id = $1`, deleted)
	other, err := storage.CreateOrganization(ctx, w.db, "Other", "other-"+uuid.NewString()[:8])
	if err != nil {
		t.Fatal(err)
	}
	foreign := w.file(t, other.ID, "foreign.txt")
	now := time.Now().UTC()

	got, err := storage.GrantDownloadables(ctx, w.db, w.holder, []uuid.UUID{b, deleted, uuid.New(), foreign, a, b}, now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uuid.UUID{b, a}, got); diff != "" {
		t.Errorf("granted files (-want +got):\n%s", diff)
	}
	var rows int
	w.get(t, &rows, `SELECT count(*) FROM downloadables WHERE customer_id = $1 AND status = 'granted'`, w.holder.CustomerID)
	if rows != 2 {
		t.Errorf("granted rows = %d, want 2 (one per existing file of the organization)", rows)
	}

	t.Run("revoking and granting again keeps the download count", func(t *testing.T) {
		var id uuid.UUID
		w.get(t, &id, `SELECT id FROM downloadables WHERE file_id = $1`, a)
		if _, err := storage.CountDownload(ctx, w.db, id, now); err != nil {
			t.Fatal(err)
		}
		w.db.MustExec(`UPDATE benefit_grants SET granted_at = NULL, revoked_at = now() WHERE id = $1`, w.grant)
		g := &storage.BenefitGrant{BenefitID: w.holder.BenefitID, CustomerID: w.holder.CustomerID}
		if err := storage.RevokeDownloadables(ctx, w.db, []*storage.BenefitGrant{g}, now); err != nil {
			t.Fatal(err)
		}
		var status string
		w.get(t, &status, `SELECT status FROM downloadables WHERE id = $1`, id)
		if status != "revoked" {
			t.Fatalf("status after revoke = %s, want revoked", status)
		}
		if _, err := storage.GrantDownloadables(ctx, w.db, w.holder, []uuid.UUID{a}, now); err != nil {
			t.Fatal(err)
		}
		var d struct {
			Status     string `db:"status"`
			Downloaded int    `db:"downloaded"`
		}
		w.get(t, &d, `SELECT status, downloaded FROM downloadables WHERE id = $1`, id)
		if d.Status != "granted" || d.Downloaded != 1 {
			t.Errorf("after granting again = %+v, want granted with 1 download", d)
		}
	})
}

func TestRevokeDownloadablesKeepsFilesOfAnotherLiveGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newDownloadWorld(t)
	f := w.file(t, w.holder.OrganizationID, "a.txt")
	if _, err := storage.GrantDownloadables(ctx, w.db, w.holder, []uuid.UUID{f}, time.Now()); err != nil {
		t.Fatal(err)
	}
	revoked := &storage.BenefitGrant{BenefitID: w.holder.BenefitID, CustomerID: w.holder.CustomerID}
	tests := []struct {
		name        string
		grantActive bool
		want        string
	}{
		{"a holder with another granted grant of the benefit keeps its files", true, "granted"},
		{"a holder without one loses them", false, "revoked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.grantActive {
				w.db.MustExec(`UPDATE benefit_grants SET granted_at = NULL, revoked_at = now() WHERE id = $1`, w.grant)
			}
			if err := storage.RevokeDownloadables(ctx, w.db, []*storage.BenefitGrant{revoked}, time.Now()); err != nil {
				t.Fatal(err)
			}
			var status string
			w.get(t, &status, `SELECT status FROM downloadables WHERE file_id = $1`, f)
			if status != tt.want {
				t.Errorf("status = %s, want %s", status, tt.want)
			}
		})
	}
}

func TestCountDownloadSaysWhyItRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		arrange string // SQL run with $1 = downloadable id
		want    error
	}{
		{"an available file is counted", "", nil},
		{"a revoked downloadable is not found", `UPDATE downloadables SET status = 'revoked' WHERE id = $1`, storage.ErrNotFound},
		{"a revoked grant hides the file", `UPDATE benefit_grants SET granted_at = NULL, revoked_at = now()
			WHERE benefit_id = (SELECT benefit_id FROM downloadables WHERE id = $1)`, storage.ErrNotFound},
		{"a deleted benefit hides the file", `UPDATE benefits SET deleted_at = now()
			WHERE id = (SELECT benefit_id FROM downloadables WHERE id = $1)`, storage.ErrNotFound},
		{"a deleted file is gone", `UPDATE files SET deleted_at = now() WHERE id = (SELECT file_id FROM downloadables WHERE id = $1)`,
			storage.ErrDownloadableGone},
		{"a disabled file is gone", `UPDATE files SET is_enabled = false WHERE id = (SELECT file_id FROM downloadables WHERE id = $1)`,
			storage.ErrDownloadableGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newDownloadWorld(t)
			f := w.file(t, w.holder.OrganizationID, "a.txt")
			if _, err := storage.GrantDownloadables(ctx, w.db, w.holder, []uuid.UUID{f}, time.Now()); err != nil {
				t.Fatal(err)
			}
			var id uuid.UUID
			w.get(t, &id, `SELECT id FROM downloadables WHERE file_id = $1`, f)
			if tt.arrange != "" {
				w.db.MustExec(tt.arrange, id)
			}
			d, err := storage.CountDownload(ctx, w.db, id, time.Now())
			if !errors.Is(err, tt.want) {
				t.Fatalf("CountDownload error = %v, want %v", err, tt.want)
			}
			var downloaded int
			w.get(t, &downloaded, `SELECT downloaded FROM downloadables WHERE id = $1`, id)
			if want := map[bool]int{true: 1, false: 0}[tt.want == nil]; downloaded != want {
				t.Errorf("downloaded = %d, want %d", downloaded, want)
			}
			if tt.want == nil && (d.File.ID != f || d.File.Name != "a.txt" || d.LastDownloadedAt == nil) {
				t.Errorf("counted downloadable = %+v", d)
			}
		})
	}
}
