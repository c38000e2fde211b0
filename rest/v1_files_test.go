package rest_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/blob"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/rest"
)

// filesWorld is the /v1 stack with a local object store served over real HTTP, so clients
// PUT parts to their presigned URLs as they would in production; two organizations with
// files:write tokens, and a token of the first with files:read only.
type filesWorld struct {
	s          *v1
	org, other org
	read       string
	blobs      *blob.Local
	srv        *httptest.Server
}

func newFilesWorld(t *testing.T) filesWorld {
	t.Helper()
	s := newV1(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	l, err := blob.NewLocal(blob.LocalConfig{Dir: t.TempDir(), BaseURL: srv.URL + "/blob/", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/blob/", l.Handler())
	s.rebuild(t, func(d *resolvers.Deps) { d.Blobs = l })
	w := filesWorld{s: s, org: s.NewOrg(t, "files:write"), other: s.NewOrg(t, "files:write"), blobs: l, srv: srv}
	w.read = s.NewToken(t, w.org.ID, "files:read")
	return w
}

// mediaHandler is the public media route as cmd/till mounts it.
func (w filesWorld) mediaHandler() http.Handler { return rest.MediaHandler(w.s.Resolver) }

// fileUpload is the part of a FileUpload body the tests use.
type fileUpload struct {
	ID     uuid.UUID `json:"id"`
	Path   string    `json:"path"`
	Upload struct {
		ID    string `json:"id"`
		Path  string `json:"path"`
		Parts []struct {
			Number     int               `json:"number"`
			ChunkStart int               `json:"chunk_start"`
			ChunkEnd   int               `json:"chunk_end"`
			SHA256     *string           `json:"checksum_sha256_base64"`
			URL        string            `json:"url"`
			Headers    map[string]string `json:"headers"`
		} `json:"parts"`
	} `json:"upload"`
}

// createBody is a FileCreate body for content split into parts of chunk bytes, with each
// part's SHA-256 when digests is set, and extra fields appended.
func createBody(service, name, mime string, content []byte, chunk int, digests bool, extra string) string {
	var parts []string
	for n, start := 1, 0; start < len(content) || n == 1; n, start = n+1, start+chunk {
		end := min(start+chunk, len(content))
		sum := "null"
		if digests {
			d := sha256.Sum256(content[start:end])
			sum = `"` + base64.StdEncoding.EncodeToString(d[:]) + `"`
		}
		parts = append(parts, fmt.Sprintf(`{"number":%d,"chunk_start":%d,"chunk_end":%d,"checksum_sha256_base64":%s}`,
			n, start, end, sum))
	}
	body := fmt.Sprintf(`{"service":%q,"name":%s,"mime_type":%q,"size":%d,"upload":{"parts":[%s]}`,
		service, jsonString(name), mime, len(content), strings.Join(parts, ","))
	if extra != "" {
		body += "," + extra
	}
	return body + "}"
}

// sizedBody is a one-part FileCreate body for a file of size bytes.
func sizedBody(service, name, mime string, size int64, extra string) string {
	body := fmt.Sprintf(`{"service":%q,"name":%s,"mime_type":%q,"size":%d,"upload":{"parts":[{"number":1,"chunk_start":0,"chunk_end":%d}]}`,
		service, jsonString(name), mime, size, size)
	if extra != "" {
		body += "," + extra
	}
	return body + "}"
}

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// create starts an upload through /v1 and returns the FileUpload.
func (w filesWorld) create(tb testing.TB, token, body string) fileUpload {
	tb.Helper()
	rec := w.s.do(tb, call{method: http.MethodPost, target: "/v1/files/", token: token, body: body})
	if rec.Code != http.StatusCreated {
		tb.Fatalf("creating file: %d %s", rec.Code, rec.Body)
	}
	var up fileUpload
	decodeJSON(tb, rec.Body.Bytes(), &up)
	return up
}

// put uploads every part of content through its presigned URL, with the headers the
// FileUpload lists, and returns the completion body with each part's ETag.
func (w filesWorld) put(tb testing.TB, up fileUpload, content []byte) string {
	tb.Helper()
	var parts []string
	for _, p := range up.Upload.Parts {
		req, err := http.NewRequest(http.MethodPut, p.URL, bytes.NewReader(content[p.ChunkStart:p.ChunkEnd]))
		if err != nil {
			tb.Fatal(err)
		}
		for k, v := range p.Headers {
			if !strings.EqualFold(k, "Content-Length") {
				req.Header.Set(k, v)
			}
		}
		resp, err := w.srv.Client().Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			tb.Fatalf("PUT part %d: %d", p.Number, resp.StatusCode)
		}
		sum := "null"
		if p.SHA256 != nil {
			sum = `"` + *p.SHA256 + `"`
		}
		parts = append(parts, fmt.Sprintf(`{"number":%d,"checksum_etag":%q,"checksum_sha256_base64":%s}`,
			p.Number, resp.Header.Get("ETag"), sum))
	}
	return fmt.Sprintf(`{"id":%q,"path":%q,"parts":[%s]}`, up.Upload.ID, up.Upload.Path, strings.Join(parts, ","))
}

// complete posts a completion body for a file.
func (w filesWorld) complete(tb testing.TB, token string, id uuid.UUID, body string) *httptest.ResponseRecorder {
	tb.Helper()
	return w.s.do(tb, call{method: http.MethodPost, target: "/v1/files/" + id.String() + "/uploaded", token: token, body: body})
}

// uploaded creates, uploads and completes a file of the organization and returns its id.
func (w filesWorld) uploaded(tb testing.TB, service, name, mime string, content []byte) uuid.UUID {
	tb.Helper()
	up := w.create(tb, w.org.Token, createBody(service, name, mime, content, 5, true, ""))
	if rec := w.complete(tb, w.org.Token, up.ID, w.put(tb, up, content)); rec.Code != http.StatusOK {
		tb.Fatalf("completing upload: %d %s", rec.Code, rec.Body)
	}
	return up.ID
}

func TestFileCreateStartsAnUpload(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	content := []byte("thirteen byte")
	digest := sha256.Sum256(content)
	whole := base64.StdEncoding.EncodeToString(digest[:])
	rec := w.s.do(t, call{method: http.MethodPost, target: "/v1/files/", token: w.org.Token,
		body: createBody("downloadable", "report 1.pdf", "application/pdf", content, 5, true,
			`"version":"v1.2","checksum_sha256_base64":"`+whole+`"`)})
	want{status: http.StatusCreated, has: []string{`"service":"downloadable"`, `"is_uploaded":false`,
		`"checksum_sha256_hex":"` + fmt.Sprintf("%x", digest) + `"`, `"size_readable":"13.0 B"`, `"version":"v1.2"`,
		`"storage_version":null`, `"checksum_etag":null`, `"last_modified_at":null`,
		`"organization_id":"` + w.org.ID.String() + `"`}}.check(t, rec)
	var up fileUpload
	decodeJSON(t, rec.Body.Bytes(), &up)
	wantPath := "downloadable/" + w.org.ID.String() + "/" + up.ID.String() + "/v1.2/report 1.pdf"
	if up.Path != wantPath || up.Upload.Path != wantPath || up.Upload.ID == "" {
		t.Errorf("path = %q, upload = %q %q; want %q and an upload id", up.Path, up.Upload.ID, up.Upload.Path, wantPath)
	}
	if len(up.Upload.Parts) != 3 || up.Upload.Parts[2].ChunkStart != 10 || up.Upload.Parts[2].ChunkEnd != 13 {
		t.Fatalf("parts = %+v, want 3 parts, the last [10, 13)", up.Upload.Parts)
	}
	for _, p := range up.Upload.Parts {
		if !strings.HasPrefix(p.URL, w.srv.URL+"/blob/") || p.SHA256 == nil || p.Headers["x-amz-checksum-sha256"] != *p.SHA256 {
			t.Errorf("part %d = %+v, want a store URL and its digest as a header", p.Number, p)
		}
	}
}

func TestFileSizeReadableIsUpstreams(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	for size, readable := range map[int64]string{0: "0.0 B", 512: "512.0 B", 1023: "1023.0 B", 1024: "1.0 KB",
		1536: "1.5 KB", 10485760: "10.0 MB", 5 << 30: "5.0 GB"} {
		rec := w.s.do(t, call{method: http.MethodPost, target: "/v1/files/", token: w.org.Token,
			body: sizedBody("downloadable", "f.bin", "application/octet-stream", size, "")})
		var got struct {
			SizeReadable string `json:"size_readable"`
		}
		decodeJSON(t, rec.Body.Bytes(), &got)
		if got.SizeReadable != readable {
			t.Errorf("size %d: size_readable = %q, want %q", size, got.SizeReadable, readable)
		}
	}
}

func TestFileCreateRefusesBadInput(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	w.s.rebuild(t, func(d *resolvers.Deps) { d.Files.MaxPartSize = 8 })
	post := func(body string) call { return call{method: http.MethodPost, target: "/v1/files/", body: body} }
	named := func(name string) call { return post(sizedBody("downloadable", name, "text/plain", 4, "")) }
	nameItem := func(msg string) want {
		return polarValidation(item{Type: "value_error", Loc: []any{"body", "name"}, Msg: msg})
	}
	partsItem := func(msg string) want {
		return polarValidation(item{Type: "value_error", Loc: []any{"body", "upload", "parts"}, Msg: msg})
	}
	withParts := func(size int, parts string) call {
		return post(fmt.Sprintf(`{"service":"downloadable","name":"a","mime_type":"text/plain","size":%d,"upload":{"parts":[%s]}}`,
			size, parts))
	}
	sum := func(s string) string { d := sha256.Sum256([]byte(s)); return base64.StdEncoding.EncodeToString(d[:]) }
	tests := []struct {
		name string
		call call
		want want
	}{
		{"a slash in the name is refused", named("../../etc/passwd"), nameItem("The file name must not contain a slash or a backslash.")},
		{"a backslash in the name is refused", named(`a\b`), nameItem("The file name must not contain a slash or a backslash.")},
		{"a dot name is refused", named("."), nameItem("The file name must not be . or ...")},
		{"a dot-dot name is refused", named(".."), nameItem("The file name must not be . or ...")},
		{"a hidden name is refused", named(".env"), nameItem("The file name must not start with a dot.")},
		{"a control character is refused", named("a\u0007b"), nameItem("The file name must not contain control characters.")},
		{"an empty name is refused", named(""), nameItem("The file name must not be empty.")},
		{"a name over 200 bytes is refused", named(strings.Repeat("é", 101)), nameItem("The file name must be at most 200 bytes long.")},
		{"a version with a slash is refused", post(sizedBody("downloadable", "a", "text/plain", 4, `"version":"1/2"`)),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "version"}, Msg: "The version must not contain a slash or a backslash."})},
		{"a checksum that is no SHA-256 is refused", post(sizedBody("downloadable", "a", "text/plain", 4, `"checksum_sha256_base64":"abcd"`)),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "checksum_sha256_base64"}})},
		{"product media must be an image", post(sizedBody("product_media", "a.pdf", "application/pdf", 4, "")),
			validation(item{Type: "string_pattern_mismatch", Loc: []any{"body", "product_media", "mime_type"},
				Msg: `String should match pattern '^image\/(jpeg|png|gif|webp|svg\+xml)$'`})},
		{"product media is at most 10 MB", post(sizedBody("product_media", "a.png", "image/png", 10485761, "")),
			validation(item{Type: "less_than_equal", Loc: []any{"body", "product_media", "size"},
				Msg: "Input should be less than or equal to 10485760", Ctx: map[string]any{"le": float64(10485760)}})},
		{"an avatar is at most 1 MB", post(sizedBody("organization_avatar", "a.png", "image/png", 1048577, "")),
			validation(item{Type: "less_than_equal", Loc: []any{"body", "organization_avatar", "size"},
				Msg: "Input should be less than or equal to 1048576"})},
		{"a support attachment must be of a listed type", post(sizedBody("support_case_attachment", "a.zip", "application/zip", 4, "")),
			validation(item{Type: "string_pattern_mismatch", Loc: []any{"body", "support_case_attachment", "mime_type"}})},
		{"a body without service names the discriminator", post(`{"name":"a"}`),
			validation(item{Type: "union_tag_not_found", Loc: []any{"body"}, Msg: "Unable to extract tag using discriminator 'service'"})},
		{"an unknown service lists the tags", post(`{"service":"avatar"}`),
			validation(item{Type: "union_tag_invalid", Loc: []any{"body"},
				Msg: "Input tag 'avatar' found using 'service' does not match any of the expected tags: " +
					"'downloadable', 'product_media', 'organization_avatar', 'support_case_attachment'"})},
		{"missing fields are reported under the tag", post(`{"service":"downloadable"}`),
			validation(
				item{Type: "missing", Loc: []any{"body", "downloadable", "name"}, Msg: "Field required"},
				item{Type: "missing", Loc: []any{"body", "downloadable", "mime_type"}, Msg: "Field required"},
				item{Type: "missing", Loc: []any{"body", "downloadable", "size"}, Msg: "Field required"},
				item{Type: "missing", Loc: []any{"body", "downloadable", "upload"}, Msg: "Field required"})},
		{"parts with a gap are refused", withParts(8, `{"number":1,"chunk_start":0,"chunk_end":3},{"number":2,"chunk_start":4,"chunk_end":8}`),
			partsItem("Part 2 starts at byte 4, expected 3.")},
		{"overlapping parts are refused", withParts(8, `{"number":1,"chunk_start":0,"chunk_end":5},{"number":2,"chunk_start":4,"chunk_end":8}`),
			partsItem("Part 2 starts at byte 4, expected 5.")},
		{"parts numbered from 2 are refused", withParts(4, `{"number":2,"chunk_start":0,"chunk_end":4}`),
			partsItem("Part 2 expected part number 1.")},
		{"a part number beyond 32 bits is judged by the same rule", withParts(4, `{"number":99999999999,"chunk_start":0,"chunk_end":4}`),
			partsItem("Part 99999999999 expected part number 1.")},
		{"no parts are refused", withParts(4, ``), partsItem("Invalid parts: no parts.")},
		{"parts that do not cover the size are refused", withParts(9, `{"number":1,"chunk_start":0,"chunk_end":4}`),
			partsItem("Invalid parts: parts cover 4 bytes, the size is 9.")},
		{"digests on some parts only are refused", withParts(8, `{"number":1,"chunk_start":0,"chunk_end":4,"checksum_sha256_base64":"`+
			sum("abcd")+`"},{"number":2,"chunk_start":4,"chunk_end":8}`),
			partsItem("Invalid parts: either every part or none carries a SHA-256.")},
		{"a part above the server's part size is refused", withParts(9, `{"number":1,"chunk_start":0,"chunk_end":9}`),
			partsItem("Part 1 larger than 8 bytes.")},
		{"an organization token cannot name an organization", post(sizedBody("downloadable", "a", "text/plain", 4,
			`"organization_id":"`+w.other.ID.String()+`"`)),
			polarValidation(item{Type: "organization_token", Loc: []any{"body", "organization_id"}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.token = w.org.Token
			tt.want.check(t, w.s.do(t, tt.call))
		})
	}
	var files int
	if err := w.s.DB.Get(&files, `SELECT count(*) FROM files`); err != nil || files != 0 {
		t.Errorf("refused creates stored %d files (%v), want none", files, err)
	}
}

func TestFileCreateAuthorization(t *testing.T) {
	t.Parallel()
	w := newFilesWorld(t)
	body := sizedBody("downloadable", "a.txt", "text/plain", 4, "")
	both := w.s.NewUser(t, resolverstest.UserSpec{Scope: "files:write", Role: "owner", Orgs: []uuid.UUID{w.org.ID, w.other.ID}}).Token
	member := w.s.NewUser(t, resolverstest.UserSpec{Scope: "files:write", Role: "member", Orgs: []uuid.UUID{w.org.ID}}).Token
	stranger := w.s.NewOrg(t, "files:write")
	tests := []struct {
		name, token, body string
		want              want
	}{
		{"no token is 401", "", body, unauthorized()},
		{"a files:read token is 403", w.read, body, insufficientScope("files:write")},
		{"a user of several organizations must name one", both, body,
			polarValidation(item{Type: "missing", Loc: []any{"body", "organization_id"}})},
		{"a user may create in a named organization of theirs", both,
			sizedBody("downloadable", "a.txt", "text/plain", 4, `"organization_id":"`+w.other.ID.String()+`"`),
			want{status: http.StatusCreated, has: []string{`"organization_id":"` + w.other.ID.String() + `"`}}},
		{"an organization the user does not belong to is refused", both,
			sizedBody("downloadable", "a.txt", "text/plain", 4, `"organization_id":"`+stranger.ID.String()+`"`),
			polarValidation(item{Type: "value_error", Loc: []any{"body", "organization_id"}, Msg: "Organization not found."})},
		{"a plain member may not manage files", member, body,
			want{status: http.StatusForbidden, error: "NotPermitted", detail: "You don't have the permission to create files."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.check(t, w.s.do(t, call{method: http.MethodPost, target: "/v1/files/", token: tt.token, body: tt.body}))
		})
	}
}

// decodeFile decodes a FileRead body into a map, to check which keys its variant has.
func decodeFile(tb testing.TB, body []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	decodeJSON(tb, body, &m)
	return m
}
