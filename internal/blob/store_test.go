package blob_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"till/internal/blob"
)

const invoiceKey = "invoices/0b6c9a52-3f0e-4f6e-9a38-6c1d2f0e7a10/INV-0001.pdf"

// storeCases is the behaviour every Store must have, run against each implementation.
var storeCases = []struct {
	name string
	run  func(t *testing.T, h harness)
}{
	{"put then get returns the bytes and their metadata", testPutGet},
	{"stat describes the object as put did", testStat},
	{"an empty content type is stored as octet-stream", testDefaultContentType},
	{"an empty object round-trips", testEmptyObject},
	{"a multi-megabyte object round-trips", testLargeObject},
	{"a put of unknown size (-1) round-trips", testUnknownSize},
	{"putting again replaces content, type and etag", testOverwrite},
	{"delete removes the object and may be repeated", testDelete},
	{"a missing key is not found", testMissing},
	{"bad keys are refused by every method", testBadKeys},
	{"a reader shorter or longer than size stores nothing", testSizeMismatch},
	{"a reader failing mid-put stores nothing", testFailingReader},
	{"a signed URL downloads the object as an attachment", testSignedDownload},
	{"a signed URL without filename names the download after the key", testSignedDefaultName},
	{"a signed URL to a missing object answers 404", testSignedMissing},
	{"an expired signed URL is refused", testSignedExpired},
	{"signed URL lifetimes outside 1s..7d are refused", testSignedTTL},
}

func TestStores(t *testing.T) {
	for _, h := range harnesses(t) {
		t.Run(h.name, func(t *testing.T) {
			for _, c := range storeCases {
				t.Run(c.name, func(t *testing.T) { c.run(t, h) })
			}
		})
	}
}

func testPutGet(t *testing.T, h harness) {
	data := []byte("%PDF-1.7 invoice")
	put(t, h.store, invoiceKey, "application/pdf", data)
	got, obj := get(t, h.store, invoiceKey)
	if !bytes.Equal(got, data) {
		t.Errorf("content = %q, want %q", got, data)
	}
	want := blob.Object{Key: invoiceKey, Size: int64(len(data)), ContentType: "application/pdf", ETag: md5hex(data)}
	if diff := cmp.Diff(want, obj, cmpopts.IgnoreFields(blob.Object{}, "LastModified", "Version")); diff != "" {
		t.Errorf("Get object (-want +got):\n%s", diff)
	}
}

func testStat(t *testing.T, h harness) {
	data := []byte("stat me")
	put(t, h.store, "invoices/a/stat.pdf", "application/pdf", data)
	got, err := h.store.Stat(context.Background(), "invoices/a/stat.pdf")
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	want := blob.Object{Key: "invoices/a/stat.pdf", Size: 7, ContentType: "application/pdf", ETag: md5hex(data)}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(blob.Object{}, "LastModified", "Version")); diff != "" {
		t.Errorf("Stat (-want +got):\n%s", diff)
	}
	if got.LastModified.IsZero() {
		t.Error("Stat LastModified is zero")
	}
}

func testDefaultContentType(t *testing.T, h harness) {
	put(t, h.store, "uploads/b/raw", "", []byte("raw"))
	_, obj := get(t, h.store, "uploads/b/raw")
	if obj.ContentType != blob.DefaultContentType {
		t.Errorf("content type = %q, want %q", obj.ContentType, blob.DefaultContentType)
	}
}

func testEmptyObject(t *testing.T, h harness) {
	put(t, h.store, "uploads/c/empty.txt", "text/plain", nil)
	got, obj := get(t, h.store, "uploads/c/empty.txt")
	if len(got) != 0 || obj.Size != 0 || obj.ETag != md5hex(nil) {
		t.Errorf("empty object = %d bytes, size %d, etag %s", len(got), obj.Size, obj.ETag)
	}
}

func testLargeObject(t *testing.T, h harness) {
	data := make([]byte, 3<<20+17)
	_, _ = rand.Read(data)
	put(t, h.store, "uploads/d/big.bin", "application/octet-stream", data)
	got, obj := get(t, h.store, "uploads/d/big.bin")
	if !bytes.Equal(got, data) || obj.ETag != md5hex(data) {
		t.Errorf("big object differs: %d bytes back, etag %s", len(got), obj.ETag)
	}
}

func testUnknownSize(t *testing.T, h harness) {
	if h.noUnknownSize != "" {
		t.Skip(h.noUnknownSize)
	}
	data := bytes.Repeat([]byte("line\n"), 1000)
	obj, err := h.store.Put(context.Background(), "uploads/u/stream.txt", bytes.NewReader(data), -1, "text/plain")
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	got, stat := get(t, h.store, "uploads/u/stream.txt")
	if !bytes.Equal(got, data) || obj.Size != int64(len(data)) || stat.Size != int64(len(data)) {
		t.Errorf("unknown-size put: %d bytes back, Put size %d, Get size %d", len(got), obj.Size, stat.Size)
	}
}

func testOverwrite(t *testing.T, h harness) {
	put(t, h.store, "uploads/e/f.txt", "text/plain", []byte("first version"))
	second := []byte("second")
	put(t, h.store, "uploads/e/f.txt", "text/csv", second)
	got, obj := get(t, h.store, "uploads/e/f.txt")
	if !bytes.Equal(got, second) || obj.Size != 6 || obj.ContentType != "text/csv" || obj.ETag != md5hex(second) {
		t.Errorf("after overwrite: %q, %+v", got, obj)
	}
}

func testDelete(t *testing.T, h harness) {
	ctx := context.Background()
	put(t, h.store, "uploads/f/gone.txt", "text/plain", []byte("bye"))
	put(t, h.store, "uploads/f/kept.txt", "text/plain", []byte("stay"))
	for range 2 {
		if err := h.store.Delete(ctx, "uploads/f/gone.txt"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	mustBeMissing(t, h.store, "uploads/f/gone.txt")
	if got, _ := get(t, h.store, "uploads/f/kept.txt"); string(got) != "stay" {
		t.Errorf("neighbour = %q after delete", got)
	}
	if err := h.store.Delete(ctx, "uploads/never/was.txt"); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}
}

func testMissing(t *testing.T, h harness) {
	mustBeMissing(t, h.store, "invoices/nobody/nothing.pdf")
}

var badKeys = []string{
	"",
	"/etc/passwd",
	"../outside",
	"invoices/../../outside",
	"invoices/./x.pdf",
	"invoices//x.pdf",
	"invoices/x/",
	`invoices\..\x.pdf`,
	"invoices/x\x00.pdf",
	"invoices/x\n.pdf",
	"invoices/.hidden",
	"invoices/\xff.pdf",
}

func testBadKeys(t *testing.T, h harness) {
	ctx := context.Background()
	for _, key := range badKeys {
		calls := map[string]error{}
		_, calls["Put"] = h.store.Put(ctx, key, bytes.NewReader([]byte("x")), 1, "text/plain")
		_, _, calls["Get"] = h.store.Get(ctx, key)
		_, calls["Stat"] = h.store.Stat(ctx, key)
		calls["Delete"] = h.store.Delete(ctx, key)
		_, calls["SignedURL"] = h.store.SignedURL(ctx, key, time.Minute, "")
		for method, err := range calls {
			var ke *blob.KeyError
			if !errors.Is(err, blob.ErrInvalidKey) || !errors.As(err, &ke) || ke.Key != key {
				t.Errorf("%s(%q) error = %v, want a *KeyError", method, key, err)
			}
		}
	}
}

func testSizeMismatch(t *testing.T, h harness) {
	for _, size := range []int64{3, 20} {
		key := "uploads/g/size-" + strconv.FormatInt(size, 10)
		_, err := h.store.Put(context.Background(), key, bytes.NewReader([]byte("ten bytes!")), size, "text/plain")
		if !errors.Is(err, blob.ErrSizeMismatch) {
			t.Errorf("Put of 10 bytes declared as %d: error = %v, want ErrSizeMismatch", size, err)
		}
		mustBeMissing(t, h.store, key)
	}
}

func testFailingReader(t *testing.T, h harness) {
	if h.noTruncatedBody != "" {
		t.Skip(h.noTruncatedBody)
	}
	_, err := h.store.Put(context.Background(), "uploads/h/broken", &failingReader{n: 100 << 10}, 200<<10, "text/plain")
	if !errors.Is(err, errBoom) {
		t.Errorf("Put error = %v, want the reader's error", err)
	}
	mustBeMissing(t, h.store, "uploads/h/broken")
}

func testSignedDownload(t *testing.T, h harness) {
	data := []byte("%PDF-1.7 signed")
	put(t, h.store, invoiceKey, "application/pdf", data)
	u, err := h.store.SignedURL(context.Background(), invoiceKey, time.Hour, "Invoice März #1.pdf")
	if err != nil {
		t.Fatalf("SignedURL: %v", err)
	}
	resp, body := download(t, h.client, u)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("GET = %d %q, want 200 %q", resp.StatusCode, body, data)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Errorf("Content-Type = %q", ct)
	}
	if resp.ContentLength != int64(len(data)) {
		t.Errorf("Content-Length = %d", resp.ContentLength)
	}
	checkAttachment(t, resp, "Invoice März #1.pdf")
}

func testSignedDefaultName(t *testing.T, h harness) {
	put(t, h.store, invoiceKey, "application/pdf", []byte("pdf"))
	u, err := h.store.SignedURL(context.Background(), invoiceKey, time.Minute, "")
	if err != nil {
		t.Fatalf("SignedURL: %v", err)
	}
	resp, _ := download(t, h.client, u)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET = %d", resp.StatusCode)
	}
	checkAttachment(t, resp, "INV-0001.pdf")
}

func checkAttachment(t *testing.T, resp *http.Response, filename string) {
	t.Helper()
	disp, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
	if err != nil || disp != "attachment" || params["filename"] != filename {
		t.Errorf("Content-Disposition = %q, want attachment named %q", resp.Header.Get("Content-Disposition"), filename)
	}
}

func testSignedMissing(t *testing.T, h harness) {
	u, err := h.store.SignedURL(context.Background(), "invoices/nobody/missing.pdf", time.Minute, "")
	if err != nil {
		t.Fatalf("SignedURL: %v", err)
	}
	if resp, _ := download(t, h.client, u); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET = %d, want 404", resp.StatusCode)
	}
}

func testSignedExpired(t *testing.T, h harness) {
	if h.noExpiry != "" {
		t.Skip(h.noExpiry)
	}
	// A minute on a fake clock; on a real one, as short as the store's dating allows, since
	// the case waits it out.
	ttl := time.Minute
	if h.resolution > 0 {
		ttl = 3 * h.resolution
	}
	put(t, h.store, invoiceKey, "application/pdf", []byte("pdf"))
	u, err := h.store.SignedURL(context.Background(), invoiceKey, ttl, "")
	if err != nil {
		t.Fatalf("SignedURL: %v", err)
	}
	h.advance(ttl - time.Second - h.resolution)
	if resp, _ := download(t, h.client, u); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET before expiry = %d, want 200", resp.StatusCode)
	}
	h.advance(time.Second + 2*h.resolution)
	if resp, _ := download(t, h.client, u); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET after expiry = %d, want 403", resp.StatusCode)
	}
}

func testSignedTTL(t *testing.T, h harness) {
	for _, ttl := range []time.Duration{0, -time.Minute, 500 * time.Millisecond, blob.MaxSignedURLTTL + time.Second} {
		if _, err := h.store.SignedURL(context.Background(), invoiceKey, ttl, ""); err == nil {
			t.Errorf("SignedURL with ttl %v succeeded", ttl)
		}
	}
}
