package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// partTarget is where one part of the file goes: its byte range, URL and headers.
type partTarget struct {
	start, end int64
	url        string
	headers    map[string]string
}

// putParts PUTs each target's bytes of f from uploadClients connections and returns the
// answered ETags in target order.
func putParts(f *os.File, targets []partTarget) ([]string, error) {
	etags := make([]string, len(targets))
	next := make(chan int, len(targets))
	for i := range targets {
		next <- i
	}
	close(next)
	errs := make(chan error, uploadClients)
	var wg sync.WaitGroup
	for range uploadClients {
		wg.Go(func() {
			for i := range next {
				t := targets[i]
				etag, err := putPart(t.url, t.headers, io.NewSectionReader(f, t.start, t.end-t.start), t.end-t.start)
				if err != nil {
					errs <- fmt.Errorf("part %d: %w", i+1, err)
					return
				}
				etags[i] = etag
			}
		})
	}
	wg.Wait()
	close(errs)
	return etags, <-errs
}

// putPart PUTs one part with the headers given and returns its ETag.
func putPart(url string, headers map[string]string, body io.Reader, size int64) (string, error) {
	req, err := http.NewRequest(http.MethodPut, url, body)
	if err != nil {
		return "", err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.ContentLength = size
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, msg)
	}
	return resp.Header.Get("ETag"), nil
}

// timeSink is the upload's other ceiling: the same parts PUT the same way to a server in
// this process that only does what no store can skip, reading each body from loopback and
// checking its SHA-256 against the part's digest, then drops the bytes. It tells what
// share of the upload's time storage itself takes.
func timeSink(b *testing.B, src string, parts []uploadPart) time.Duration {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(sinkPart)}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	f, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	targets := make([]partTarget, len(parts))
	for i, p := range parts {
		targets[i] = partTarget{start: p.ChunkStart, end: p.ChunkEnd, url: "http://" + ln.Addr().String() + "/" + strconv.Itoa(p.Number),
			headers: map[string]string{"x-amz-checksum-sha256": p.SHA256Base64}}
	}
	syncAll(b)
	start := time.Now()
	if _, err := putParts(f, targets); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// sinkPart hashes a part's body as it arrives and answers its ETag, or 400 when the
// digest differs from the x-amz-checksum-sha256 header.
func sinkPart(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	buf := make([]byte, 1<<20)
	if _, err := io.CopyBuffer(h, r.Body, buf); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sum := h.Sum(nil)
	if want, _ := base64.StdEncoding.DecodeString(r.Header.Get("x-amz-checksum-sha256")); !bytes.Equal(want, sum) {
		http.Error(w, "BadDigest", http.StatusBadRequest)
		return
	}
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
	w.WriteHeader(http.StatusOK)
}
