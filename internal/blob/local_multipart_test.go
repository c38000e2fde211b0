package blob_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"till/internal/blob"
)

func (f *localFixture) harness() harness {
	return harness{name: "local", store: f.store, client: f.server.Client(), advance: f.clock.Advance}
}

// send issues method on rawURL with body (nil for none) and headers, returning the
// response and its body.
func send(t *testing.T, f *localFixture, method, rawURL string, body io.Reader, size int64, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	addHeaders(req.Header, header)
	resp, err := f.server.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, strings.TrimSpace(string(b))
}

func presign(t *testing.T, f *localFixture, up upload, n int, ttl time.Duration) blob.PresignedPart {
	t.Helper()
	pp, err := f.store.PresignPart(context.Background(), up.key, up.id, up.spec.Parts[n-1], ttl)
	if err != nil {
		t.Fatalf("PresignPart: %v", err)
	}
	return pp
}

// wantPartError completes up with parts and expects a *PartError for part n with reason.
func wantPartError(t *testing.T, s blob.Store, up upload, parts []blob.CompletedPart, n int, reason string) {
	t.Helper()
	_, err := s.CompleteMultipart(context.Background(), up.key, up.id, parts)
	var pe *blob.PartError
	if !errors.As(err, &pe) || pe.Number != n || pe.Reason != reason {
		t.Errorf("CompleteMultipart error = %v, want part %d %q", err, n, reason)
	}
}

func TestLocalRefusesTamperedPartURLs(t *testing.T) {
	f := newLocal(t)
	up := startUpload(t, f.store, "uploads/lp/tamper.bin", []int64{100, 50}, true)
	pp := presign(t, f, up, 1, time.Minute)
	cases := []struct {
		name   string
		tamper func(q url.Values)
		msg    string
	}{
		{"a flipped signature bit", func(q url.Values) { flipHex(q, "signature") }, "invalid signature"},
		{"another part number", func(q url.Values) { q.Set("part", "2") }, "invalid signature"},
		{"another start", func(q url.Values) { q.Set("start", "1") }, "invalid signature"},
		{"another end", func(q url.Values) { q.Set("end", "99") }, "invalid signature"},
		{"no digest", func(q url.Values) { q.Del("sha256") }, "invalid signature"},
		{"another upload", func(q url.Values) { q.Set("upload_id", strings.Repeat("0", 32)) }, "invalid signature"},
		{"a later expiry", func(q url.Values) { bump(q, "expires") }, "invalid signature"},
		{"no signature", func(q url.Values) { q.Del("signature") }, "invalid signature"},
	}
	body := up.data[:100]
	for _, c := range cases {
		t.Run("a URL with "+c.name+" is forbidden", func(t *testing.T) {
			u, _ := url.Parse(pp.URL)
			q := u.Query()
			c.tamper(q)
			u.RawQuery = q.Encode()
			resp, msg := send(t, f, http.MethodPut, u.String(), bytes.NewReader(body), 100, nil)
			if resp.StatusCode != http.StatusForbidden || msg != c.msg {
				t.Errorf("PUT = %d %q, want 403 %q", resp.StatusCode, msg, c.msg)
			}
		})
	}
	t.Run("an expired URL is forbidden", func(t *testing.T) {
		f.clock.Advance(time.Minute)
		resp, msg := send(t, f, http.MethodPut, pp.URL, bytes.NewReader(body), 100, nil)
		if resp.StatusCode != http.StatusForbidden || msg != "link expired" {
			t.Errorf("PUT = %d %q, want 403 link expired", resp.StatusCode, msg)
		}
	})
	wantPartError(t, f.store, up, []blob.CompletedPart{{Number: 1, ETag: "x"}, {Number: 2, ETag: "y"}}, 1, "not uploaded")
}

func TestLocalRefusesPartBodiesThatDoNotFit(t *testing.T) {
	f := newLocal(t)
	up := startUpload(t, f.store, "uploads/lp/fit.bin", []int64{1000, 10}, false)
	good := up.data[:1000]
	other := sha256b64([]byte("other"))
	cases := []struct {
		name   string
		body   []byte
		size   int64 // Content-Length sent; -1 sends the body chunked
		header http.Header
		status int
		msg    string
		early  bool // refused before anything is written, so the old record stays
	}{
		{"a longer chunked body", append(append([]byte(nil), good...), 'x'), -1, nil, 413, "body is longer than the part", false},
		{"a shorter chunked body", good[:999], -1, nil, 400, "body is shorter than the part: 999 of 1000 bytes", false},
		{"a shorter Content-Length", good[:999], 999, nil, 400, "Content-Length must be the part size, 1000", true},
		{"a longer Content-Length", append(append([]byte(nil), good...), 'x'), 1001, nil, 400, "Content-Length must be the part size, 1000", true},
		{"a wrong x-amz-checksum-sha256", good, 1000, http.Header{"X-Amz-Checksum-Sha256": {other}}, 400,
			"BadDigest: the SHA-256 of the body does not match the part's checksum", false},
		{"a malformed x-amz-checksum-sha256", good, 1000, http.Header{"X-Amz-Checksum-Sha256": {"abc"}}, 400,
			"InvalidDigest: x-amz-checksum-sha256 is not a base64 SHA-256", true},
	}
	pp := presign(t, f, up, 1, time.Hour)
	// A recorded part first: every refused PUT must drop its record, since the range may
	// now hold other bytes.
	first := uploadParts(t, f.harness(), up, 1, 2)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader = bytes.NewReader(c.body)
			if c.size < 0 {
				body = io.MultiReader(body) // hides the length, so the client sends it chunked
			}
			resp, msg := send(t, f, http.MethodPut, pp.URL, body, c.size, c.header)
			if resp.StatusCode != c.status || msg != c.msg {
				t.Errorf("PUT = %d %q, want %d %q", resp.StatusCode, msg, c.status, c.msg)
			}
			if c.early {
				// Part 1 still passes: the list fails only at part 2.
				wantPartError(t, f.store, up, []blob.CompletedPart{first[0], {Number: 2, ETag: "x"}}, 2, "ETag does not match")
				return
			}
			wantPartError(t, f.store, up, first, 1, "not uploaded")
			uploadParts(t, f.harness(), up, 1) // restore the record for the next case
		})
	}
	t.Run("a presigned digest refuses another body", func(t *testing.T) {
		up := startUpload(t, f.store, "uploads/lp/digest.bin", []int64{10}, true)
		resp := putPart(t, f.harness(), up, 1, []byte("0123456789"))
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("PUT of another body = %d, want 400", resp.StatusCode)
		}
		wantPartError(t, f.store, up, []blob.CompletedPart{{Number: 1, ETag: "x", SHA256Base64: up.spec.Parts[0].SHA256Base64}}, 1, "not uploaded")
	})
	complete(t, mpHarness{harness: f.harness()}, up, uploadParts(t, f.harness(), up, 1, 2))
}

func TestLocalPartUploadedAgainWinsWhole(t *testing.T) {
	f := newLocal(t)
	up := startUpload(t, f.store, "uploads/lp/again.bin", []int64{8}, false)
	firstResp := putPart(t, f.harness(), up, 1, []byte("AAAAAAAA"))
	parts := uploadParts(t, f.harness(), up, 1)
	wantPartError(t, f.store, up, []blob.CompletedPart{{Number: 1, ETag: firstResp.Header.Get("ETag")}}, 1, "ETag does not match")
	complete(t, mpHarness{harness: f.harness()}, up, parts)
}

func TestLocalDownloadAndPartURLsDoNotMix(t *testing.T) {
	f := newLocal(t)
	put(t, f.store, invoiceKey, "application/pdf", []byte("pdf"))
	get, err := f.store.SignedURL(context.Background(), invoiceKey, time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp, msg := send(t, f, http.MethodPut, get, strings.NewReader("evil"), 4, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("PUT to a download URL = %d %q, want 403", resp.StatusCode, msg)
	}
	up := startUpload(t, f.store, invoiceKey, []int64{3}, false)
	pp := presign(t, f, up, 1, time.Hour)
	if resp, msg := send(t, f, http.MethodGet, pp.URL, nil, 0, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET of a part URL = %d %q, want 403", resp.StatusCode, msg)
	}
}

// TestLocalDownloadsCannotReachUploads signs a download of an upload's data file with the
// store's own secret, as a flaw in key validation would let anyone do.
func TestLocalDownloadsCannotReachUploads(t *testing.T) {
	f := newLocal(t)
	up := startUpload(t, f.store, "uploads/lp/secret.bin", []int64{5}, false)
	uploadParts(t, f.harness(), up, 1)
	key := ".uploads/" + up.id + "/data"
	if _, err := f.store.SignedURL(context.Background(), key, time.Hour, ""); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("SignedURL(%q) error = %v, want ErrInvalidKey", key, err)
	}
	expires := strconv.FormatInt(f.clock.Now().Add(time.Hour).Unix(), 10)
	mac := hmac.New(sha256.New, testSecret)
	mac.Write([]byte("GET\n" + key + "\n" + expires + "\n"))
	u := f.server.URL + "/blob/" + key + "?expires=" + expires + "&signature=" + hex.EncodeToString(mac.Sum(nil))
	if resp, body := send(t, f, http.MethodGet, u, nil, 0, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET %s = %d %q, want 404", key, resp.StatusCode, body)
	}
}

func TestLocalPartURLsAllowBrowsers(t *testing.T) {
	f := newLocal(t)
	up := startUpload(t, f.store, "uploads/lp/cors.bin", []int64{4}, true)
	pp := presign(t, f, up, 1, time.Hour)
	preflight := http.Header{
		"Origin":                         {"https://shop.example"},
		"Access-Control-Request-Method":  {"PUT"},
		"Access-Control-Request-Headers": {"content-type,x-amz-checksum-sha256"},
	}
	resp, _ := send(t, f, http.MethodOptions, pp.URL, nil, 0, preflight)
	want := map[string]string{
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Methods": "PUT",
		"Access-Control-Allow-Headers": "Content-Type, Content-Length, x-amz-checksum-sha256, x-amz-sdk-checksum-algorithm",
		"Access-Control-Max-Age":       "3600",
	}
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("OPTIONS = %d, want 204", resp.StatusCode)
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("preflight %s = %q, want %q", k, got, v)
		}
	}
	putResp := putPart(t, f.harness(), up, 1, up.data)
	if putResp.StatusCode != http.StatusOK || putResp.Header.Get("X-Amz-Checksum-Sha256") != up.spec.Parts[0].SHA256Base64 {
		t.Errorf("PUT = %d, checksum %q", putResp.StatusCode, putResp.Header.Get("X-Amz-Checksum-Sha256"))
	}
	complete(t, mpHarness{harness: f.harness()}, up, []blob.CompletedPart{{Number: 1, ETag: putResp.Header.Get("ETag"), SHA256Base64: up.spec.Parts[0].SHA256Base64}})
	get, _ := f.store.SignedURL(context.Background(), up.key, time.Hour, "")
	getResp, _ := send(t, f, http.MethodGet, get, nil, 0, nil)
	for name, r := range map[string]*http.Response{"PUT": putResp, "GET": getResp} {
		if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Access-Control-Expose-Headers") != "ETag, x-amz-checksum-sha256" {
			t.Errorf("%s CORS headers = %q, %q", name, r.Header.Get("Access-Control-Allow-Origin"), r.Header.Get("Access-Control-Expose-Headers"))
		}
	}
}

func TestLocalSweepUploads(t *testing.T) {
	f := newLocal(t)
	ctx := context.Background()
	old := startUpload(t, f.store, "uploads/lp/old.bin", []int64{3}, false)
	young := startUpload(t, f.store, "uploads/lp/young.bin", []int64{3}, false)
	oldParts := uploadParts(t, f.harness(), old, 1)
	youngParts := uploadParts(t, f.harness(), young, 1)
	past := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(f.root, ".uploads", old.id, "spec.json"), past, past); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 0} {
		n, err := f.store.SweepUploads(ctx, time.Hour)
		if err != nil || n != want {
			t.Errorf("sweep %d = %d, %v; want %d", i+1, n, err, want)
		}
	}
	if _, err := f.store.CompleteMultipart(ctx, old.key, old.id, oldParts); !errors.Is(err, blob.ErrUploadNotFound) {
		t.Errorf("completing a swept upload: %v, want ErrUploadNotFound", err)
	}
	complete(t, mpHarness{harness: f.harness()}, young, youngParts)
	if got := files(t, filepath.Join(f.root, ".uploads")); len(got) != 0 {
		t.Errorf("uploads left behind: %v", got)
	}
}

func TestLocalAbortLeavesOtherKeysUploads(t *testing.T) {
	f := newLocal(t)
	ctx := context.Background()
	up := startUpload(t, f.store, "uploads/lp/mine.bin", []int64{3}, false)
	parts := uploadParts(t, f.harness(), up, 1)
	for _, c := range []struct{ key, id string }{{"uploads/lp/other.bin", up.id}, {up.key, strings.Repeat("f", 32)}, {up.key, "../../etc"}} {
		if err := f.store.AbortMultipart(ctx, c.key, c.id); err != nil {
			t.Errorf("AbortMultipart(%q, %q): %v", c.key, c.id, err)
		}
	}
	complete(t, mpHarness{harness: f.harness()}, up, parts)
}

// Parts that span several copy buffers and start and end inside disk blocks, as upstream's
// 10,000,000-byte chunks do: the unaligned edges share blocks with their neighbours, the
// aligned middles are written directly, and the parts arrive at once and out of order.
func TestLocalLargeUnalignedPartsAssembleExactly(t *testing.T) {
	f := newLocal(t)
	sizes := []int64{2<<20 + 4093, 3<<20 + 1, 1 << 20, 5, 1<<20 + 4095}
	up := startUpload(t, f.store, "uploads/lp/large.bin", sizes, true)
	parts := make([]blob.CompletedPart, len(sizes))
	var wg sync.WaitGroup
	for _, n := range []int{4, 2, 5, 1, 3} {
		wg.Go(func() {
			p := up.spec.Parts[n-1]
			resp := putPart(t, f.harness(), up, n, up.data[p.Start:p.End])
			if resp.StatusCode != http.StatusOK {
				t.Errorf("part %d: %s", n, resp.Status)
				return
			}
			parts[n-1] = blob.CompletedPart{Number: n, ETag: resp.Header.Get("ETag"), SHA256Base64: p.SHA256Base64}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	complete(t, mpHarness{harness: f.harness()}, up, parts)
}

// A part left to the page cache is recorded under the kernel's boot id; after the machine
// restarts its bytes may be gone, so completion refuses it until it is sent again.
func TestLocalPartsFromAnotherBootMustBeSentAgain(t *testing.T) {
	f := newLocal(t)
	up := startUpload(t, f.store, "uploads/lp/boot.bin", []int64{4096 + 7}, false)
	parts := uploadParts(t, f.harness(), up, 1)
	record := filepath.Join(f.root, ".uploads", up.id, "part-1.json")
	raw, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"boot":"`)) {
		t.Skip("this kernel has no boot id: parts are fsynced instead")
	}
	stale := regexp.MustCompile(`"boot":"[^"]*"`).ReplaceAll(raw, []byte(`"boot":"another-boot"`))
	if err := os.WriteFile(record, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	wantPartError(t, f.store, up, parts, 1, "not uploaded: received before the server's machine restarted, upload it again")
	complete(t, mpHarness{harness: f.harness()}, up, uploadParts(t, f.harness(), up, 1))
}
