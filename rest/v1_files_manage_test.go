package rest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/blob"
	"till/resolvers/resolverstest"
)

func TestFileListShowsUploadedFilesNewestFirst(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	content := []byte("listed")
	older := w.uploaded(t, "downloadable", "older.txt", "text/plain", content)
	newer := w.uploaded(t, "support_case_attachment", "newer.txt", "text/plain", content)
	w.s.Exec(t, `UPDATE files SET created_at = now() - interval '1 hour' WHERE id = $1`, older)
	pending := w.create(t, w.org.Token, createBody("downloadable", "pending.txt", "text/plain", content, 4, false, "")).ID
	deleted := w.uploaded(t, "downloadable", "deleted.txt", "text/plain", content)
	w.s.Exec(t, `UPDATE files SET deleted_at = now() WHERE id = $1`, deleted)
	foreign := w.other.Token
	theirs := w.create(t, foreign, createBody("downloadable", "theirs.txt", "text/plain", content, 8, false, ""))
	w.complete(t, foreign, theirs.ID, w.put(t, theirs, content))
	both := w.s.NewUser(t, resolverstest.UserSpec{Scope: "files:read", Role: "member", Orgs: []uuid.UUID{w.org.ID, w.other.ID}}).Token

	tests := []struct {
		name, token, query string
		want               []uuid.UUID
		total              int
	}{
		{"an organization sees its uploaded files, newest first", w.org.Token, "", []uuid.UUID{newer, older}, 2},
		{"files:read is enough", w.read, "", []uuid.UUID{newer, older}, 2},
		{"ids narrow the list", w.org.Token, "?ids=" + older.String() + "&ids=" + pending.String(), []uuid.UUID{older}, 1},
		{"pages split the list", w.org.Token, "?limit=1&page=2", []uuid.UUID{older}, 2},
		{"another organization's files are invisible", w.org.Token, "?ids=" + theirs.ID.String(), []uuid.UUID{}, 0},
		{"a user sees the files of their organizations", both, "", []uuid.UUID{theirs.ID, newer, older}, 3},
		{"organization_id narrows a user's list", both, "?organization_id=" + w.other.ID.String(), []uuid.UUID{theirs.ID}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total := w.listFiles(t, tt.token, tt.query)
			if diff := cmp.Diff(tt.want, got); diff != "" || total != tt.total {
				t.Errorf("ids (-want +got):\n%s total = %d, want %d", diff, total, tt.total)
			}
		})
	}
	t.Run("a malformed id is a 422", func(t *testing.T) {
		rec := w.s.do(t, call{target: "/v1/files/?ids=nope", token: w.org.Token})
		want{status: http.StatusUnprocessableEntity, error: "RequestValidationError"}.check(t, rec)
	})
	t.Run("no token is 401", func(t *testing.T) {
		unauthorized().check(t, w.s.do(t, call{target: "/v1/files/"}))
	})
}

func TestFileUpdateRenamesWithoutMovingTheObject(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	id := w.uploaded(t, "downloadable", "draft.txt", "text/plain", []byte("text"))
	target := "/v1/files/" + id.String()
	patch := func(token, body string) *http.Response {
		return w.s.do(t, call{method: http.MethodPatch, target: target, token: token, body: body}).Result()
	}
	member := w.s.NewUser(t, resolverstest.UserSpec{Scope: "files:write", Role: "member", Orgs: []uuid.UUID{w.org.ID}}).Token
	tests := []struct {
		name, token, body string
		want              want
	}{
		{"name and version change, the path stays", w.org.Token, `{"name":"final.txt","version":"2"}`,
			want{status: http.StatusOK, has: []string{`"name":"final.txt"`, `"version":"2"`,
				`"path":"downloadable/` + w.org.ID.String() + "/" + id.String() + `/draft.txt"`}}},
		{"null and empty fields change nothing", w.org.Token, `{"name":null,"version":""}`,
			want{status: http.StatusOK, has: []string{`"name":"final.txt"`, `"version":"2"`}}},
		{"a name with a slash is refused", w.org.Token, `{"name":"a/b"}`,
			polarValidation(item{Type: "value_error", Loc: []any{"body", "name"}, Msg: "The file name must not contain a slash or a backslash."})},
		{"a hidden version is refused", w.org.Token, `{"version":".v"}`,
			polarValidation(item{Type: "value_error", Loc: []any{"body", "version"}, Msg: "The version must not start with a dot."})},
		{"a plain member may not rename", member, `{"name":"x.txt"}`,
			want{status: http.StatusForbidden, error: "NotPermitted", detail: "You don't have the permission to update this file."}},
		{"another organization's file is not found", w.other.Token, `{"name":"x.txt"}`,
			want{status: http.StatusNotFound, body: resourceNotFoundBody}},
		{"a files:read token is 403", w.read, `{"name":"x.txt"}`, insufficientScope("files:write")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, w.s.do(t, call{method: http.MethodPatch, target: target, token: tt.token, body: tt.body}))
		})
	}
	if res := patch(w.org.Token, `{}`); res.StatusCode != http.StatusOK {
		t.Errorf("an empty patch = %d, want 200", res.StatusCode)
	}
}

func TestFileDeleteRemovesTheObject(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	ctx := context.Background()
	content := []byte("to be deleted")
	id := w.uploaded(t, "downloadable", "old.txt", "text/plain", content)
	var path string
	if err := w.s.DB.Get(&path, `SELECT path FROM files WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	del := func(token string, id uuid.UUID) *http.Response {
		return w.s.do(t, call{method: http.MethodDelete, target: "/v1/files/" + id.String(), token: token}).Result()
	}
	member := w.s.NewUser(t, resolverstest.UserSpec{Scope: "files:write", Role: "member", Orgs: []uuid.UUID{w.org.ID}}).Token
	if res := del(member, id); res.StatusCode != http.StatusForbidden {
		t.Errorf("a plain member's delete = %d, want 403", res.StatusCode)
	}
	if res := del(w.other.Token, id); res.StatusCode != http.StatusNotFound {
		t.Errorf("another organization's delete = %d, want 404", res.StatusCode)
	}
	rec := w.s.do(t, call{method: http.MethodDelete, target: "/v1/files/" + id.String(), token: w.org.Token})
	want{status: http.StatusNoContent, headers: map[string]string{"Content-Length": ""}}.check(t, rec)
	if rec.Body.Len() != 0 {
		t.Errorf("204 body = %q, want none", rec.Body)
	}
	if _, err := w.blobs.Stat(ctx, path); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("object after delete: %v, want ErrNotFound", err)
	}
	want{status: http.StatusNotFound, body: resourceNotFoundBody}.check(t,
		w.s.do(t, call{method: http.MethodDelete, target: "/v1/files/" + id.String(), token: w.org.Token}))

	t.Run("an unfinished upload is discarded", func(t *testing.T) {
		up := w.create(t, w.org.Token, createBody("downloadable", "half.txt", "text/plain", content, 5, false, ""))
		body := w.put(t, up, content)
		if res := del(w.org.Token, up.ID); res.StatusCode != http.StatusNoContent {
			t.Fatalf("delete = %d, want 204", res.StatusCode)
		}
		w.s.Exec(t, `UPDATE files SET deleted_at = NULL WHERE id = $1`, up.ID) // as if the delete had not happened
		polarValidation(item{Type: "value_error", Loc: []any{"body", "id"}, Msg: "The upload no longer exists; create the file again."}).
			check(t, w.complete(t, w.org.Token, up.ID, body))
	})
}

func TestFileDeleteKeepsFilesThatBenefitsOffer(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	id := w.uploaded(t, "downloadable", "manual.pdf", "application/pdf", []byte("%PDF-1.7"))
	benefits := make([]uuid.UUID, 2)
	for i := range benefits {
		benefits[i] = uuid.New()
		w.s.Exec(t, `INSERT INTO benefits (id, organization_id, type, description, properties, created_at)
			VALUES ($1, $2, 'downloadables', 'Manuals', jsonb_build_object('archived', '{}'::jsonb, 'files', jsonb_build_array($3::text)),
			now() - make_interval(mins => $4))`, benefits[i], w.org.ID, id.String(), 10-i)
	}
	rec := w.s.do(t, call{method: http.MethodDelete, target: "/v1/files/" + id.String(), token: w.org.Token})
	polarValidation(item{Type: "value_error", Loc: []any{"path", "id"},
		Msg: "The file is used by downloadables benefit(s) " + benefits[0].String() + ", " + benefits[1].String() +
			"; remove it from them first."}).check(t, rec)
	if ids, _ := w.listFiles(t, w.org.Token, ""); len(ids) != 1 || ids[0] != id {
		t.Errorf("files after the refused delete = %v, want the file", ids)
	}
	w.s.Exec(t, `UPDATE benefits SET properties = '{"archived": {}, "files": []}' WHERE id = $1`, benefits[0])
	w.s.Exec(t, `UPDATE benefits SET deleted_at = now() WHERE id = $1`, benefits[1])
	want{status: http.StatusNoContent}.check(t, w.s.do(t, call{method: http.MethodDelete, target: "/v1/files/" + id.String(), token: w.org.Token}))
}
