package blob_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"till/internal/blob"
)

// mpHarness is a store under the multipart table with its part size.
type mpHarness struct {
	harness
	// partSize is the size of non-last parts: S3 requires at least 5 MiB; Local takes
	// anything, and smaller parts keep its cases fast.
	partSize int64
}

func mpHarnesses(t *testing.T) []mpHarness {
	var out []mpHarness
	for _, h := range harnesses(t) {
		m := mpHarness{harness: h, partSize: 64<<10 + 3}
		if _, ok := h.store.(*blob.S3); ok {
			m.partSize = 5 << 20
		}
		out = append(out, m)
	}
	return out
}

var multipartCases = []struct {
	name string
	run  func(t *testing.T, h mpHarness)
}{
	{"three parts uploaded out of order assemble in order", testMultipartOutOfOrder},
	{"parts with SHA-256 digests assemble with a composite checksum", testMultipartWithDigests},
	{"a single part", testMultipartSinglePart},
	{"an empty file is one empty part", testMultipartEmptyFile},
	{"the last part may be empty", testMultipartEmptyLastPart},
	{"completing twice finds no upload the second time", testMultipartCompleteTwice},
	{"a wrong part list is refused and a correct one still completes", testMultipartBadLists},
	{"an aborted upload cannot complete", testMultipartAbort},
	{"invalid specs are refused", testMultipartInvalidSpec},
	{"bad keys are refused", testMultipartBadKeys},
}

func TestMultipart(t *testing.T) {
	for _, h := range mpHarnesses(t) {
		t.Run(h.name, func(t *testing.T) {
			for _, c := range multipartCases {
				t.Run(c.name, func(t *testing.T) { c.run(t, h) })
			}
		})
	}
}

// upload is one multipart upload under test.
type upload struct {
	key  string
	id   string
	spec blob.UploadSpec
	data []byte
}

// startUpload creates an upload of random data split into parts of the given sizes.
func startUpload(t *testing.T, s blob.Store, key string, sizes []int64, withSHA bool) upload {
	t.Helper()
	var total int64
	for _, n := range sizes {
		total += n
	}
	data := make([]byte, total)
	_, _ = rand.Read(data)
	spec := blob.UploadSpec{ContentType: "application/zip", Size: total}
	var start int64
	for i, n := range sizes {
		p := blob.Part{Number: i + 1, Start: start, End: start + n}
		if withSHA {
			p.SHA256Base64 = sha256b64(data[p.Start:p.End])
		}
		spec.Parts = append(spec.Parts, p)
		start += n
	}
	id, err := s.CreateMultipart(context.Background(), key, spec)
	if err != nil {
		t.Fatalf("CreateMultipart: %v", err)
	}
	t.Cleanup(func() { _ = s.Delete(context.Background(), key) })
	return upload{key: key, id: id, spec: spec, data: data}
}

func sha256b64(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// putPart presigns part n of up and PUTs body to it with the presigned headers.
func putPart(t *testing.T, h harness, up upload, n int, body []byte) *http.Response {
	t.Helper()
	p := up.spec.Parts[n-1]
	pp, err := h.store.PresignPart(context.Background(), up.key, up.id, p, time.Hour)
	if err != nil {
		t.Fatalf("PresignPart(%d): %v", n, err)
	}
	if got := pp.Headers["Content-Length"]; got != strconv.FormatInt(p.Size(), 10) {
		t.Errorf("presigned Content-Length = %q, want %d", got, p.Size())
	}
	return doPut(t, h.client, pp, body)
}

// doPut sends body to a presigned part URL and returns the response with its body read.
func doPut(t *testing.T, client *http.Client, pp blob.PresignedPart, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, pp.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range pp.Headers {
		if k != "Content-Length" {
			req.Header.Set(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("PUT part: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

// uploadParts PUTs the parts of up in order (part numbers) and returns the completion
// list in ascending order.
func uploadParts(t *testing.T, h harness, up upload, order ...int) []blob.CompletedPart {
	t.Helper()
	done := make([]blob.CompletedPart, len(up.spec.Parts))
	for _, n := range order {
		p := up.spec.Parts[n-1]
		resp := putPart(t, h, up, n, up.data[p.Start:p.End])
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT part %d = %d", n, resp.StatusCode)
		}
		done[n-1] = blob.CompletedPart{Number: n, ETag: resp.Header.Get("ETag"), SHA256Base64: p.SHA256Base64}
	}
	return done
}

func inOrder(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// complete completes up and checks the object: content, size, type and S3's multipart
// ETag derived from the parts' ETags.
func complete(t *testing.T, h mpHarness, up upload, parts []blob.CompletedPart) blob.Object {
	t.Helper()
	obj, err := h.store.CompleteMultipart(context.Background(), up.key, up.id, parts)
	if err != nil {
		t.Fatalf("CompleteMultipart: %v", err)
	}
	want := wantETag(t, parts)
	if obj.Key != up.key || obj.Size != up.spec.Size || obj.ContentType != "application/zip" || obj.ETag != want {
		t.Errorf("completed object = %+v, want size %d, application/zip, ETag %s", obj, up.spec.Size, want)
	}
	got, stat := get(t, h.store, up.key)
	if !bytes.Equal(got, up.data) {
		t.Errorf("content differs: %d bytes back, want %d", len(got), len(up.data))
	}
	if stat.Size != up.spec.Size || stat.ContentType != "application/zip" {
		t.Errorf("Get object = %+v", stat)
	}
	t.Run("Get reports the multipart ETag", func(t *testing.T) {
		if h.noMultipartStatETag != "" {
			t.Skip(h.noMultipartStatETag)
		}
		if stat.ETag != want {
			t.Errorf("Get ETag = %s, want %s", stat.ETag, want)
		}
	})
	return obj
}

var multipartETagForm = regexp.MustCompile(`^[0-9a-f]{32}-[0-9]+$`)

// wantETag is the MD5 of the binary part ETags, "-", the number of parts.
func wantETag(t *testing.T, parts []blob.CompletedPart) string {
	t.Helper()
	h := md5.New()
	for _, p := range parts {
		b, err := hex.DecodeString(blob.NormalizeETag(p.ETag))
		if err != nil || len(b) != 16 {
			t.Fatalf("part %d ETag %q is not 16 hex bytes", p.Number, p.ETag)
		}
		h.Write(b)
	}
	etag := hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(parts))
	if !multipartETagForm.MatchString(etag) {
		t.Fatalf("ETag %q is not of the multipart form", etag)
	}
	return etag
}

func testMultipartOutOfOrder(t *testing.T, h mpHarness) {
	up := startUpload(t, h.store, "uploads/mp/three.zip", []int64{h.partSize, h.partSize, h.partSize/2 + 1}, false)
	parts := uploadParts(t, h.harness, up, 3, 1, 2)
	mustBeMissing(t, h.store, up.key)
	obj := complete(t, h, up, parts)
	if !regexp.MustCompile(`^[0-9a-f]{32}-3$`).MatchString(obj.ETag) || obj.ChecksumSHA256 != "" {
		t.Errorf("ETag = %q, checksum = %q; want <hex>-3 and no checksum", obj.ETag, obj.ChecksumSHA256)
	}
}

func testMultipartWithDigests(t *testing.T, h mpHarness) {
	up := startUpload(t, h.store, "uploads/mp/digests.zip", []int64{h.partSize, h.partSize, 1000}, true)
	parts := uploadParts(t, h.harness, up, inOrder(3)...)
	obj := complete(t, h, up, parts)
	if h.noChecksum != "" {
		t.Skip(h.noChecksum)
	}
	sum, err := blob.CompositeSHA256(parts)
	if err != nil {
		t.Fatal(err)
	}
	if want := sum + "-3"; obj.ChecksumSHA256 != want {
		t.Errorf("ChecksumSHA256 = %q, want %q", obj.ChecksumSHA256, want)
	}
	if _, stat := get(t, h.store, up.key); stat.ChecksumSHA256 != obj.ChecksumSHA256 {
		t.Errorf("Get ChecksumSHA256 = %q, want %q", stat.ChecksumSHA256, obj.ChecksumSHA256)
	}
}

func testMultipartSinglePart(t *testing.T, h mpHarness) {
	up := startUpload(t, h.store, "uploads/mp/single.bin", []int64{4321}, false)
	complete(t, h, up, uploadParts(t, h.harness, up, 1))
}

func testMultipartEmptyFile(t *testing.T, h mpHarness) {
	if h.noEmptyPart != "" {
		t.Skip(h.noEmptyPart)
	}
	up := startUpload(t, h.store, "uploads/mp/empty.txt", []int64{0}, true)
	complete(t, h, up, uploadParts(t, h.harness, up, 1))
}

func testMultipartEmptyLastPart(t *testing.T, h mpHarness) {
	if h.noEmptyPart != "" {
		t.Skip(h.noEmptyPart)
	}
	up := startUpload(t, h.store, "uploads/mp/even.bin", []int64{h.partSize, h.partSize, 0}, false)
	complete(t, h, up, uploadParts(t, h.harness, up, 2, 3, 1))
}

func testMultipartCompleteTwice(t *testing.T, h mpHarness) {
	up := startUpload(t, h.store, "uploads/mp/twice.bin", []int64{h.partSize, 10}, false)
	parts := uploadParts(t, h.harness, up, 1, 2)
	complete(t, h, up, parts)
	_, err := h.store.CompleteMultipart(context.Background(), up.key, up.id, parts)
	if !errors.Is(err, blob.ErrUploadNotFound) {
		t.Errorf("second CompleteMultipart error = %v, want ErrUploadNotFound", err)
	}
}

func testMultipartBadLists(t *testing.T, h mpHarness) {
	up := startUpload(t, h.store, "uploads/mp/lists.bin", []int64{h.partSize, h.partSize, 77}, true)
	good := uploadParts(t, h.harness, up, inOrder(3)...)
	with := func(change func(p []blob.CompletedPart) []blob.CompletedPart) []blob.CompletedPart {
		return change(append([]blob.CompletedPart(nil), good...))
	}
	cases := []struct {
		name       string
		parts      []blob.CompletedPart
		number     int
		reason     string
		noChecksum bool
	}{
		{"a missing part", with(func(p []blob.CompletedPart) []blob.CompletedPart { return append(p[:1], p[2]) }), 2, "missing", false},
		{"a missing last part", good[:2], 3, "missing", false},
		{"no parts", nil, 1, "missing", false},
		{"a duplicated part", with(func(p []blob.CompletedPart) []blob.CompletedPart {
			return append(p[:2], p[1], p[2])
		}), 2, "duplicated", false},
		{"parts out of order", with(func(p []blob.CompletedPart) []blob.CompletedPart {
			return []blob.CompletedPart{p[1], p[0], p[2]}
		}), 1, "not in ascending order", false},
		{"a part the upload does not have", with(func(p []blob.CompletedPart) []blob.CompletedPart {
			return append(p, blob.CompletedPart{Number: 4, ETag: p[0].ETag})
		}), 4, "not uploaded", false},
		{"a wrong ETag", with(func(p []blob.CompletedPart) []blob.CompletedPart {
			p[1].ETag = `"` + md5hex([]byte("other")) + `"`
			return p
		}), 2, "ETag does not match", false},
		{"a wrong SHA-256", with(func(p []blob.CompletedPart) []blob.CompletedPart {
			p[2].SHA256Base64 = sha256b64([]byte("other"))
			return p
		}), 3, "SHA-256 does not match", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.noChecksum && h.noChecksum != "" {
				t.Skip(h.noChecksum)
			}
			_, err := h.store.CompleteMultipart(context.Background(), up.key, up.id, c.parts)
			var pe *blob.PartError
			if !errors.As(err, &pe) || !errors.Is(err, blob.ErrInvalidPart) || pe.Number != c.number || pe.Reason != c.reason {
				t.Errorf("CompleteMultipart error = %v, want part %d %q", err, c.number, c.reason)
			}
			mustBeMissing(t, h.store, up.key)
		})
	}
	complete(t, h, up, good)
}

func testMultipartAbort(t *testing.T, h mpHarness) {
	ctx := context.Background()
	up := startUpload(t, h.store, "uploads/mp/aborted.bin", []int64{h.partSize, 5}, false)
	parts := uploadParts(t, h.harness, up, 1, 2)
	for range 2 {
		if err := h.store.AbortMultipart(ctx, up.key, up.id); err != nil {
			t.Fatalf("AbortMultipart: %v", err)
		}
	}
	if _, err := h.store.CompleteMultipart(ctx, up.key, up.id, parts); !errors.Is(err, blob.ErrUploadNotFound) {
		t.Errorf("CompleteMultipart after abort error = %v, want ErrUploadNotFound", err)
	}
	mustBeMissing(t, h.store, up.key)
	if resp := putPart(t, h.harness, up, 2, up.data[h.partSize:]); resp.StatusCode != http.StatusNotFound {
		t.Errorf("PUT after abort = %d, want 404", resp.StatusCode)
	}
}

func testMultipartInvalidSpec(t *testing.T, h mpHarness) {
	for _, c := range validatePartsCases {
		_, err := h.store.CreateMultipart(context.Background(), "uploads/mp/invalid.bin", blob.UploadSpec{Size: c.size, Parts: c.parts})
		if !errors.Is(err, blob.ErrInvalidPart) {
			t.Errorf("%s: CreateMultipart error = %v, want a *PartError", c.name, err)
		}
	}
}

func testMultipartBadKeys(t *testing.T, h mpHarness) {
	ctx := context.Background()
	part := blob.Part{Number: 1, End: 1}
	spec := blob.UploadSpec{Size: 1, Parts: []blob.Part{part}}
	for _, key := range badKeys {
		calls := map[string]error{}
		_, calls["CreateMultipart"] = h.store.CreateMultipart(ctx, key, spec)
		_, calls["PresignPart"] = h.store.PresignPart(ctx, key, "0123456789abcdef0123456789abcdef", part, time.Minute)
		_, calls["CompleteMultipart"] = h.store.CompleteMultipart(ctx, key, "0123456789abcdef0123456789abcdef", nil)
		calls["AbortMultipart"] = h.store.AbortMultipart(ctx, key, "0123456789abcdef0123456789abcdef")
		for method, err := range calls {
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Errorf("%s(%q) error = %v, want a *KeyError", method, key, err)
			}
		}
	}
}
