package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// refsWorld is two organizations, each with a meter and a file.
type refsWorld struct {
	db                   *sqlx.DB
	mine, theirs         uuid.UUID
	myMeter, theirMeter  uuid.UUID
	myFile, theirFile    uuid.UUID
	myDeletedFile        uuid.UUID
	myCredit, myDownload *storage.Benefit
}

func newRefsWorld(t *testing.T) *refsWorld {
	t.Helper()
	ctx := context.Background()
	w := &refsWorld{db: storagetest.New(t)}
	org := func() uuid.UUID {
		o, err := storage.CreateOrganization(ctx, w.db, "Org", "org-"+uuid.NewString()[:8])
		if err != nil {
			t.Fatal(err)
		}
		return o.ID
	}
	meter := func(orgID uuid.UUID) uuid.UUID {
		m, err := storage.InsertMeter(ctx, w.db, orgID, storage.MeterWrite{Name: "Calls",
			Filter: storage.RawJSON(`{"conjunction": "and", "clauses": []}`), Aggregation: storage.RawJSON(`{"func": "count"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	w.mine, w.theirs = org(), org()
	w.myMeter, w.theirMeter = meter(w.mine), meter(w.theirs)
	w.myFile, w.theirFile, w.myDeletedFile = w.file(t, w.mine), w.file(t, w.theirs), w.file(t, w.mine)
	if _, err := w.db.Exec(`UPDATE files SET deleted_at = now() WHERE id = $1`, w.myDeletedFile); err != nil {
		t.Fatal(err)
	}
	w.myCredit = w.create(t, "meter_credit", credit(w.myMeter))
	w.myDownload = w.create(t, "downloadables", downloads(w.myFile))
	return w
}

func (w *refsWorld) file(t *testing.T, orgID uuid.UUID) uuid.UUID {
	t.Helper()
	id := uuid.New()
	if _, err := storage.CreateFile(context.Background(), w.db, orgID, storage.FileWrite{ID: id, Service: "downloadable",
		Name: "a.txt", Path: "downloadable/" + id.String(), MimeType: "text/plain", Size: 1, UploadID: "upload-" + id.String()}); err != nil {
		t.Fatal(err)
	}
	return id
}

func (w *refsWorld) create(t *testing.T, typ storage.BenefitType, props storage.RawJSON) *storage.Benefit {
	t.Helper()
	b, err := storage.CreateBenefit(context.Background(), w.db, w.mine, storage.BenefitWrite{Type: typ, Description: "Benefit",
		Visibility: "public", Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func credit(meter uuid.UUID) storage.RawJSON {
	b, _ := json.Marshal(map[string]any{"units": 1, "meter_id": meter})
	return b
}

func downloads(files ...uuid.UUID) storage.RawJSON {
	b, _ := json.Marshal(map[string]any{"files": files, "archived": map[string]bool{}})
	return b
}

// TestBenefitReferences checks that the benefit writes themselves, whoever calls them, store
// only properties naming the organization's own meters and live files, and say which object
// was refused.
func TestBenefitReferences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newRefsWorld(t)
	count := func(t *testing.T) int {
		t.Helper()
		var n int
		if err := w.db.Get(&n, `SELECT count(*) FROM benefits WHERE organization_id = $1`, w.mine); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, tc := range []struct {
		name  string
		typ   storage.BenefitType
		props storage.RawJSON
		want  *storage.RefError
	}{
		{"a meter credit on my meter is stored", "meter_credit", credit(w.myMeter), nil},
		{"a meter credit on their meter is refused", "meter_credit", credit(w.theirMeter), &storage.RefError{Table: "meters", ID: w.theirMeter}},
		{"a meter credit on an unknown meter is refused", "meter_credit", credit(w.myFile), &storage.RefError{Table: "meters", ID: w.myFile}},
		{"downloadables of my file are stored", "downloadables", downloads(w.myFile), nil},
		{"downloadables with their file are refused at it", "downloadables", downloads(w.myFile, w.theirFile),
			&storage.RefError{Table: "files", ID: w.theirFile, Index: 1}},
		{"downloadables with my deleted file are refused at it", "downloadables", downloads(w.myDeletedFile, w.myFile),
			&storage.RefError{Table: "files", ID: w.myDeletedFile}},
		{"a meter id in properties of another type names nothing", "custom", credit(w.theirMeter), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := count(t)
			_, err := storage.CreateBenefit(ctx, w.db, w.mine, storage.BenefitWrite{Type: tc.typ, Description: "Benefit",
				Visibility: "public", Properties: tc.props})
			checkRefError(t, err, tc.want)
			want := before
			if tc.want == nil {
				want++
			}
			if got := count(t); got != want {
				t.Errorf("benefits = %d, want %d", got, want)
			}
		})
	}

	for _, tc := range []struct {
		name    string
		benefit *storage.Benefit
		props   storage.RawJSON
		want    *storage.RefError
	}{
		{"moving my meter credit to their meter is refused", w.myCredit, credit(w.theirMeter), &storage.RefError{Table: "meters", ID: w.theirMeter}},
		{"adding their file to my downloadables is refused", w.myDownload, downloads(w.theirFile), &storage.RefError{Table: "files", ID: w.theirFile}},
		{"my downloadables may list my file again", w.myDownload, downloads(w.myFile), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := storage.UpdateBenefit(ctx, w.db, []uuid.UUID{w.mine, w.theirs}, tc.benefit.ID, storage.BenefitUpdate{Properties: storage.Set(tc.props)})
			checkRefError(t, err, tc.want)
			got, err := storage.GetBenefit(ctx, w.db, []uuid.UUID{w.mine}, tc.benefit.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.benefit.Properties
			if tc.want == nil {
				want = tc.props
			}
			var g, wnt any
			_ = json.Unmarshal(got.Properties, &g)
			_ = json.Unmarshal(want, &wnt)
			if diff := cmp.Diff(wnt, g); diff != "" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("updating an unknown benefit is not found", func(t *testing.T) {
		_, err := storage.UpdateBenefit(ctx, w.db, []uuid.UUID{w.mine}, uuid.New(), storage.BenefitUpdate{Properties: storage.Set(credit(w.theirMeter))})
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
}

// TestBenefitReferenceRacesFileDelete races a downloadables benefit naming a file against the
// file's deletion (lock the file, refuse when a benefit uses it, delete): however they
// interleave, no live benefit may end up naming a deleted file.
func TestBenefitReferenceRacesFileDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newRefsWorld(t)
	for range 50 {
		file := w.file(t, w.mine)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _ = storage.CreateBenefit(ctx, w.db, w.mine, storage.BenefitWrite{Type: "downloadables", Description: "Race",
				Visibility: "public", Properties: downloads(file)})
		}()
		go func() {
			defer wg.Done()
			_ = storage.InTx(ctx, w.db, func(tx *sqlx.Tx) error {
				if _, err := storage.LockFile(ctx, tx, []uuid.UUID{w.mine}, file); err != nil {
					return err
				}
				using, err := storage.DownloadablesUsingFile(ctx, tx, w.mine, file)
				if err != nil || len(using) > 0 {
					return errors.New("in use")
				}
				_, err = storage.DeleteFile(ctx, tx, file)
				return err
			})
		}()
		wg.Wait()
	}
	var dangling int
	if err := w.db.Get(&dangling, `SELECT count(*) FROM benefits b JOIN files f ON jsonb_exists(b.properties->'files', f.id::text)
		WHERE b.type = 'downloadables' AND b.deleted_at IS NULL AND f.deleted_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if dangling != 0 {
		t.Errorf("%d live benefits name a deleted file", dangling)
	}
}

func checkRefError(t *testing.T, err error, want *storage.RefError) {
	t.Helper()
	var got *storage.RefError
	switch {
	case want == nil && err != nil:
		t.Fatalf("err = %v, want none", err)
	case want == nil:
	case !errors.As(err, &got):
		t.Fatalf("err = %v, want %+v", err, want)
	default:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("RefError (-want +got):\n%s", diff)
		}
		if !errors.Is(err, storage.ErrReference) {
			t.Error("a RefError is not ErrReference")
		}
	}
}
