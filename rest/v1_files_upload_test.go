package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"till/resolvers/resolverstest"

	"github.com/google/uuid"
)

func TestFileUploadRoundTripsTheBytes(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	for _, digests := range []bool{true, false} {
		t.Run(fmt.Sprintf("with part digests %v", digests), func(t *testing.T) {
			content := []byte(strings.Repeat("0123456789abcdef", 3) + "xyz")
			up := w.create(t, w.org.Token, createBody("downloadable", "data.bin", "application/octet-stream", content, 16, digests, ""))
			rec := w.complete(t, w.org.Token, up.ID, w.put(t, up, content))
			want{status: http.StatusOK, has: []string{`"is_uploaded":true`, `"service":"downloadable"`,
				`"flagged_malicious_at":null`, `"size_readable":"51.0 B"`}}.check(t, rec)
			got := decodeFile(t, rec.Body.Bytes())
			if got["checksum_etag"] == nil || got["last_modified_at"] == nil {
				t.Errorf("completed file = %v, want its ETag and last_modified_at", got)
			}
			if _, has := got["public_url"]; has {
				t.Errorf("a downloadable has public_url: %v", got)
			}
			r, obj, err := w.blobs.Get(context.Background(), up.Path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			stored, _ := io.ReadAll(r)
			if string(stored) != string(content) || obj.ContentType != "application/octet-stream" || got["checksum_etag"] != obj.ETag {
				t.Errorf("stored %q (%s, etag %s), want the uploaded bytes with etag %v", stored, obj.ContentType, obj.ETag, got["checksum_etag"])
			}
		})
	}
}

// partsBody is a completion body of the upload with hand-written parts.
func partsBody(up fileUpload, parts string) string {
	return fmt.Sprintf(`{"id":%q,"path":%q,"parts":[%s]}`, up.Upload.ID, up.Upload.Path, parts)
}

func TestFileCompleteRefusesWhatDoesNotMatch(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	content := []byte("0123456789abcde")
	up := w.create(t, w.org.Token, createBody("downloadable", "a.txt", "text/plain", content, 5, true, ""))
	good := w.put(t, up, content)
	var completion struct {
		Parts []struct {
			Number int     `json:"number"`
			ETag   string  `json:"checksum_etag"`
			SHA256 *string `json:"checksum_sha256_base64"`
		} `json:"parts"`
	}
	decodeJSON(t, []byte(good), &completion)
	part := func(i int, etag, sum string) string {
		p := completion.Parts[i]
		if etag == "" {
			etag = p.ETag
		}
		if sum == "" {
			sum = *p.SHA256
		}
		return fmt.Sprintf(`{"number":%d,"checksum_etag":%q,"checksum_sha256_base64":%q}`, p.Number, etag, sum)
	}
	otherSum := completion.Parts[0].SHA256
	member := w.s.NewUser(t, resolverstest.UserSpec{Scope: "files:write", Role: "member", Orgs: []uuid.UUID{w.org.ID}}).Token
	tests := []struct {
		name, token, body string
		want              want
	}{
		{"another path is refused", w.org.Token, strings.Replace(good, up.Upload.Path, up.Upload.Path+"x", 1),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "path"}, Msg: "The path is not this file's upload path."})},
		{"another upload id is refused", w.org.Token, strings.Replace(good, up.Upload.ID, "x"+up.Upload.ID, 1),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "id"}, Msg: "The id is not this file's upload id."})},
		{"a wrong ETag is refused at its part", w.org.Token, partsBody(up, part(0, "", "")+","+part(1, `"0000"`, "")+","+part(2, "", "")),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "parts", 1}})},
		{"a wrong SHA-256 is refused at its part", w.org.Token, partsBody(up, part(0, "", "")+","+part(1, "", "")+","+part(2, "", *otherSum)),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "parts", 2}})},
		{"a missing part is refused", w.org.Token, partsBody(up, part(0, "", "")+","+part(2, "", "")),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "parts"}})},
		{"a repeated part is refused", w.org.Token, partsBody(up, part(0, "", "")+","+part(1, "", "")+","+part(1, "", "")+","+part(2, "", "")),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "parts", 2}})},
		{"a plain member may not complete", member, good,
			want{status: http.StatusForbidden, error: "NotPermitted", detail: "You don't have the permission to update this file."}},
		{"another organization's file is not found", w.other.Token, good, want{status: http.StatusNotFound, body: resourceNotFoundBody}},
		{"a files:read token is 403", w.read, good, insufficientScope("files:write")},
		{"a part without checksum_sha256_base64 is a schema error", w.org.Token,
			partsBody(up, `{"number":1,"checksum_etag":"x"}`),
			validation(item{Type: "missing", Loc: []any{"body", "parts", 0, "checksum_sha256_base64"}, Msg: "Field required"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := w.complete(t, tt.token, up.ID, tt.body)
			tt.want.check(t, rec)
			if rec.Code == http.StatusUnprocessableEntity && strings.Contains(tt.name, "part") {
				if msg := resttestMsg(t, rec.Body.Bytes()); !strings.HasPrefix(msg, "Part ") && !strings.HasPrefix(msg, "Invalid parts") &&
					!strings.HasPrefix(msg, "Field required") {
					t.Errorf("msg = %q, want the store's reason", msg)
				}
			}
		})
	}
	t.Run("the corrected call then succeeds, once", func(t *testing.T) {
		want{status: http.StatusOK, has: []string{`"is_uploaded":true`}}.check(t, w.complete(t, w.org.Token, up.ID, good))
		polarValidation(item{Type: "value_error", Loc: []any{"body", "id"}, Msg: "The file upload is already completed."}).
			check(t, w.complete(t, w.org.Token, up.ID, good))
	})
	t.Run("a deleted file is not found", func(t *testing.T) {
		w.s.Exec(t, `UPDATE files SET deleted_at = now() WHERE id = $1`, up.ID)
		want{status: http.StatusNotFound, error: "ResourceNotFound"}.check(t, w.complete(t, w.org.Token, up.ID, good))
	})
}

// resttestMsg is the msg of the first 422 item.
func resttestMsg(tb testing.TB, body []byte) string {
	tb.Helper()
	var v struct {
		Detail []struct {
			Msg string `json:"msg"`
		} `json:"detail"`
	}
	decodeJSON(tb, body, &v)
	if len(v.Detail) == 0 {
		return ""
	}
	return v.Detail[0].Msg
}

func TestFileCompleteSucceedsOnceUnderRace(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	content := []byte("raced upload bytes")
	up := w.create(t, w.org.Token, createBody("downloadable", "race.txt", "text/plain", content, 6, true, ""))
	body := w.put(t, up, content)
	const racers = 12
	codes := make([]int, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = w.complete(t, w.org.Token, up.ID, body).Code
		}()
	}
	wg.Wait()
	counts := map[int]int{}
	for _, c := range codes {
		counts[c]++
	}
	if counts[http.StatusOK] != 1 || counts[http.StatusUnprocessableEntity] != racers-1 {
		t.Errorf("statuses = %v, want exactly one 200 and %d 422", counts, racers-1)
	}
	var uploaded bool
	if err := w.s.DB.Get(&uploaded, `SELECT is_uploaded FROM files WHERE id = $1`, up.ID); err != nil || !uploaded {
		t.Errorf("is_uploaded = %v (%v), want true", uploaded, err)
	}
}

func TestMediaLinksRedirectToTheImage(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	png := []byte("\x89PNG fake image bytes")
	media := w.uploaded(t, "product_media", "cover art.png", "image/png", png)
	avatar := w.uploaded(t, "organization_avatar", "me.png", "image/png", png)
	download := w.uploaded(t, "downloadable", "x.png", "image/png", png)
	pending := w.create(t, w.org.Token, createBody("product_media", "p.png", "image/png", png, 8, false, "")).ID
	disabled := w.uploaded(t, "product_media", "off.png", "image/png", png)
	w.s.Exec(t, `UPDATE files SET is_enabled = false WHERE id = $1`, disabled)
	gone := w.uploaded(t, "product_media", "gone.png", "image/png", png)
	w.s.do(t, call{method: http.MethodDelete, target: "/v1/files/" + gone.String(), token: w.org.Token})

	rec := w.s.do(t, call{target: "/v1/files/?ids=" + media.String(), token: w.org.Token})
	publicURL := portalURL + "/media/" + media.String() + "/cover%20art.png"
	want{status: http.StatusOK, has: []string{`"public_url":"` + publicURL + `"`, `"service":"product_media"`}}.check(t, rec)
	if strings.Contains(rec.Body.String(), "flagged_malicious_at") {
		t.Errorf("product media has flagged_malicious_at: %s", rec.Body)
	}

	handler := w.mediaHandler()
	for _, id := range []uuid.UUID{media, avatar} {
		res := serve(handler, request(http.MethodGet, "/media/"+id.String()+"/any-name.png", ""))
		if res.Code != http.StatusFound || res.Header().Get("Cache-Control") != "public, max-age=300" {
			t.Fatalf("GET media %s = %d %v, want a cacheable 302", id, res.Code, res.Header())
		}
		resp, err := w.srv.Client().Get(res.Header().Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(got) != string(png) {
			t.Errorf("following the redirect = %d %q, want the image", resp.StatusCode, got)
		}
	}
	for name, path := range map[string]string{
		"a downloadable":            "/media/" + download.String() + "/x.png",
		"an upload not completed":   "/media/" + pending.String() + "/p.png",
		"a disabled file":           "/media/" + disabled.String() + "/off.png",
		"a deleted file":            "/media/" + gone.String() + "/gone.png",
		"an unknown id":             "/media/" + uuid.NewString() + "/a.png",
		"something that is no id":   "/media/../etc/passwd",
		"an id without a separator": "/media/" + strings.ReplaceAll(media.String(), "-", ""),
	} {
		if res := serve(handler, request(http.MethodGet, path, "")); res.Code != http.StatusNotFound {
			t.Errorf("%s: GET %s = %d, want 404", name, path, res.Code)
		}
	}
}

// fileRead is the part of a FileRead body the list tests use.
type fileRead struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
	Path string    `json:"path"`
}

// listFiles lists files through /v1 and returns their ids in order and the total count.
func (w filesWorld) listFiles(tb testing.TB, token, query string) ([]uuid.UUID, int) {
	tb.Helper()
	rec := w.s.do(tb, call{target: "/v1/files/" + query, token: token})
	if rec.Code != http.StatusOK {
		tb.Fatalf("listing files: %d %s", rec.Code, rec.Body)
	}
	var page struct {
		Items      []fileRead `json:"items"`
		Pagination struct {
			TotalCount int `json:"total_count"`
		} `json:"pagination"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
		tb.Fatal(err)
	}
	ids := make([]uuid.UUID, len(page.Items))
	for i, f := range page.Items {
		ids[i] = f.ID
	}
	return ids, page.Pagination.TotalCount
}
