package resolvers_test

import (
	"crypto/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/internal/blob"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

const (
	createFileDoc = `mutation($input: FileCreateInput!) { createFile(input: $input) {
		id path sizeReadable isUploaded upload { id path parts { number chunkStart chunkEnd url headers } } } }`
	getFileDoc = `query($id: UUID!) { file(id: $id) { __typename id name service sizeReadable
		... on ProductMediaFile { publicUrl } ... on DownloadableFile { flaggedMaliciousAt } } }`
)

// fileServer is a GraphQL server whose resolver stores files on a local store.
func fileServer(t *testing.T) *resolverstest.Server {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	l, err := blob.NewLocal(blob.LocalConfig{Dir: t.TempDir(), BaseURL: "http://till.test/blob/", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return resolverstest.New(t, func(d *resolvers.Deps) { d.Blobs = l })
}

// fileInput is a one-part create input of size bytes.
func fileInput(service, name, mime string, size int) vars {
	return vars{"service": service, "name": name, "mimeType": mime, "size": size,
		"upload": vars{"parts": []any{vars{"number": 1, "chunkStart": 0, "chunkEnd": size}}}}
}

func TestFileGraphQLPresentsTheServiceVariant(t *testing.T) {
	t.Parallel()
	s := fileServer(t)
	org := s.NewOrg(t, "files:write")
	var created struct {
		CreateFile struct {
			ID           uuid.UUID
			Path         string
			SizeReadable string
			IsUploaded   bool
			Upload       struct{ Parts []struct{ URL string } }
		}
	}
	s.Query(t, org.Token, createFileDoc, vars{"input": fileInput("product_media", "front cover.png", "image/png", 1536)}, &created)
	c := created.CreateFile
	if c.SizeReadable != "1.5 KB" || c.IsUploaded || len(c.Upload.Parts) != 1 || c.Upload.Parts[0].URL == "" {
		t.Errorf("created = %+v, want a 1.5 KB upload with one presigned part", c)
	}
	var got struct {
		File map[string]any
	}
	s.Query(t, org.Token, getFileDoc, vars{"id": c.ID}, &got)
	want := map[string]any{"__typename": "ProductMediaFile", "id": c.ID.String(), "name": "front cover.png",
		"service": "product_media", "sizeReadable": "1.5 KB",
		"publicUrl": resolverstest.PortalURL + "/media/" + c.ID.String() + "/front%20cover.png"}
	if diff := cmp.Diff(want, got.File); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	other := s.NewOrg(t, "files:read")
	if e := s.QueryError(t, other.Token, getFileDoc, vars{"id": c.ID}); e.Extensions.Code != "NOT_FOUND" || e.Extensions.Reason != "ResourceNotFound" {
		t.Errorf("another organization's file: %+v, want ResourceNotFound", e)
	}
}

func TestFileGraphQLAppliesTheServiceRules(t *testing.T) {
	t.Parallel()
	s := fileServer(t)
	org := s.NewOrg(t, "files:write")
	tests := []struct {
		name        string
		input       vars
		reason, typ string
		loc         []any
	}{
		{"product media must be an image", fileInput("product_media", "a.pdf", "application/pdf", 4),
			"RequestValidationError", "string_pattern_mismatch", []any{"input", "mimeType"}},
		{"an avatar is at most 1 MB", fileInput("organization_avatar", "a.png", "image/png", 1048577),
			"RequestValidationError", "less_than_equal", []any{"input", "size"}},
		{"a name that leaves its folder is refused", fileInput("downloadable", "../a.pdf", "application/pdf", 4),
			"PolarRequestValidationError", "value_error", []any{"input", "name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := s.QueryError(t, org.Token, createFileDoc, vars{"input": tt.input})
			if e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != tt.reason || len(e.Extensions.Fields) != 1 || e.Extensions.Fields[0].Type != tt.typ ||
				!cmp.Equal(e.Extensions.Fields[0].Loc, tt.loc) {
				t.Errorf("error = %+v, want BAD_USER_INPUT (%s) %s at %v", e, tt.reason, tt.typ, tt.loc)
			}
		})
	}
	var files int
	if err := s.DB.Get(&files, `SELECT count(*) FROM files`); err != nil || files != 0 {
		t.Errorf("refused creates stored %d files (%v)", files, err)
	}
}
