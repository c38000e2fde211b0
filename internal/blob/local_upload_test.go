package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"till/internal/blob"
)

func TestLocalConcurrentPartPutsAllLand(t *testing.T) {
	f := newLocal(t)
	const parts, size = 48, 10<<10 + 7
	sizes := make([]int64, parts)
	for i := range sizes {
		sizes[i] = size
	}
	up := startUpload(t, f.store, "uploads/lp/parallel.bin", sizes, true)
	done := make([]blob.CompletedPart, parts)
	var wg sync.WaitGroup
	// Every part is sent twice at once, as a client retrying a slow part does; both
	// bodies are the same, so either may win.
	for i := range 2 * parts {
		wg.Go(func() {
			n := i%parts + 1
			p := up.spec.Parts[n-1]
			pp, err := f.store.PresignPart(context.Background(), up.key, up.id, p, time.Hour)
			if err != nil {
				t.Errorf("PresignPart: %v", err)
				return
			}
			req, _ := http.NewRequest(http.MethodPut, pp.URL, bytes.NewReader(up.data[p.Start:p.End]))
			req.Header.Set("x-amz-checksum-sha256", p.SHA256Base64)
			resp, err := f.server.Client().Do(req)
			if err != nil {
				t.Errorf("PUT part %d: %v", n, err)
				return
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("PUT part %d = %d", n, resp.StatusCode)
			}
			if i < parts {
				done[n-1] = blob.CompletedPart{Number: n, ETag: resp.Header.Get("ETag"), SHA256Base64: p.SHA256Base64}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	complete(t, mpHarness{harness: f.harness()}, up, done)
}

// patternReader yields n bytes of a repeating pattern without holding them.
type patternReader struct{ left int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), p.left))
	for i := range b[:n] {
		b[i] = byte(p.left - int64(i))
	}
	p.left -= int64(n)
	return n, nil
}

func TestLocalPartUploadStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	const size = 64 << 20
	f := newLocal(t)
	ctx := context.Background()
	spec := blob.UploadSpec{Size: size, Parts: []blob.Part{{Number: 1, End: size}}}
	id, err := f.store.CreateMultipart(ctx, "uploads/lp/big.bin", spec)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := f.store.PresignPart(ctx, "uploads/lp/big.bin", id, spec.Parts[0], time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req, _ := http.NewRequest(http.MethodPut, pp.URL, &patternReader{left: size})
	req.ContentLength = size
	resp, err := f.server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	runtime.ReadMemStats(&after)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT = %d", resp.StatusCode)
	}
	// Client and server together: the copy buffer and HTTP plumbing, nothing near the part.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("uploading a 64 MiB part allocated %d MiB", alloc>>20)
	}
	obj, err := f.store.CompleteMultipart(ctx, "uploads/lp/big.bin", id, []blob.CompletedPart{{Number: 1, ETag: resp.Header.Get("ETag")}})
	if err != nil || obj.Size != size {
		t.Fatalf("CompleteMultipart = %+v, %v", obj, err)
	}
	rc, _, err := f.store.Get(ctx, "uploads/lp/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, want := sha256.New(), sha256.New()
	_, _ = io.Copy(got, rc)
	_, _ = io.Copy(want, &patternReader{left: size})
	if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Error("content differs from what was uploaded")
	}
}
