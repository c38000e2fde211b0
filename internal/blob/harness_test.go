package blob_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"till/internal/blob"
)

// harness is one Store under test with what the shared cases need to know about it.
type harness struct {
	name  string
	store blob.Store
	// advance moves the clock that signed URLs are checked against: a fake clock, or the
	// wall clock by sleeping for a server that reads the real time.
	advance func(time.Duration)
	// resolution is how coarsely the store dates a signed URL: zero for an exact fake
	// clock, a second for S3's X-Amz-Date. The expiry case keeps that far from the edge.
	resolution time.Duration
	// client downloads signed URLs.
	client *http.Client
	// noExpiry, noUnknownSize, noEmptyPart, noChecksum, noMultipartStatETag and
	// noTruncatedBody, when set, say why a case or check cannot run against this store.
	noExpiry, noUnknownSize, noEmptyPart, noChecksum, noMultipartStatETag, noTruncatedBody string
}

// clock is a settable time source, so expiry tests never sleep or read the wall clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// localFixture is a Local store served over HTTP, with the paths tests inspect.
type localFixture struct {
	store  *blob.Local
	clock  *clock
	root   string // the store's directory
	parent string // root's parent, which must never gain anything but root
	server *httptest.Server
}

func newLocal(t testing.TB) *localFixture {
	t.Helper()
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	clk := &clock{t: time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)}
	store, err := blob.NewLocal(blob.LocalConfig{
		Dir: root, BaseURL: srv.URL + "/blob/", Secret: testSecret, Now: clk.Now,
	})
	if err != nil {
		t.Fatalf("NewLocal: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	mux.Handle("/blob/", store.Handler())
	return &localFixture{store: store, clock: clk, root: root, parent: parent, server: srv}
}

// newS3 runs gofakes3 with its in-memory backend in process, over TLS like production
// buckets or over plain HTTP, and points an S3 store at it. It returns the client that
// trusts the server.
func newS3(t testing.TB, useTLS bool) (*blob.S3, *http.Client) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("till"); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	handler := gofakes3.New(backend).Server()
	srv := httptest.NewUnstartedServer(handler)
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	store, err := blob.NewS3(blob.S3Config{
		Endpoint:  u.Host,
		Region:    "us-east-1",
		Bucket:    "till",
		AccessKey: "test-access",
		SecretKey: "test-secret",
		UseSSL:    useTLS,
		PathStyle: true,
		Transport: srv.Client().Transport,
	})
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	return store, srv.Client()
}

// harnesses are every Store the shared cases run against: the local directory, S3 through
// gofakes3 in process (fast, but lenient: the skip reasons below say where), and S3 on a
// real server, versitygw, which checks what gofakes3 does not. -short leaves versitygw out.
func harnesses(t *testing.T) []harness {
	t.Helper()
	local := newLocal(t)
	hs := []harness{{name: "local", store: local.store, client: local.server.Client(), advance: local.clock.Advance}}
	hs = append(hs, gofakes3Harnesses(t)...)
	if testing.Short() {
		return hs
	}
	bin := versitygwBinary(t)
	for _, useTLS := range []bool{true, false} {
		name := "s3 on versitygw"
		if !useTLS {
			name += " over plain HTTP"
		}
		store, client := newVersitygw(t, bin, useTLS)
		h := harness{name: name, store: store, client: client, advance: time.Sleep, resolution: time.Second}
		if useTLS {
			// Over TLS the client sends the body unsigned with its Content-Length; when the
			// body stops short (the reader failed), versitygw stores the bytes it got. Over
			// plain HTTP the chunk signatures make it refuse the cut stream.
			h.noTruncatedBody = "versitygw " + versitygwVersion + " stores an unsigned PUT body cut short of its Content-Length"
		}
		hs = append(hs, h)
	}
	return hs
}

// gofakes3Harnesses are S3 stores on gofakes3 over TLS and over plain HTTP.
func gofakes3Harnesses(t *testing.T) []harness {
	t.Helper()
	s3TLS, tlsClient := newS3(t, true)
	s3HTTP, httpClient := newS3(t, false)
	fake := harness{
		// gofakes3 authenticates nothing: it ignores presigned query parameters,
		// X-Amz-Expires included, so an expired URL still downloads.
		noExpiry:            "gofakes3 does not check presigned URL expiry",
		noEmptyPart:         "gofakes3 refuses part PUTs without a positive Content-Length",
		noChecksum:          "gofakes3 ignores x-amz-checksum-sha256 and keeps no part checksums",
		noMultipartStatETag: "gofakes3 reports the MD5 of the whole object on HEAD, not the multipart ETag",
	}
	overTLS, overHTTP := fake, fake
	overTLS.name, overTLS.store, overTLS.client = "s3", s3TLS, tlsClient
	overHTTP.name, overHTTP.store, overHTTP.client = "s3 over plain HTTP", s3HTTP, httpClient
	// Without TLS the client signs bodies as aws-chunked streams; gofakes3 decodes those
	// for single PUTs but stores multipart parts (how unknown sizes are sent) still encoded.
	overHTTP.noUnknownSize = "gofakes3 does not decode aws-chunked multipart parts"
	return []harness{overTLS, overHTTP}
}

// put stores data under key with contentType, failing the test on error.
func put(t *testing.T, s blob.Store, key, contentType string, data []byte) blob.Object {
	t.Helper()
	obj, err := s.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), contentType)
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return obj
}

// get reads the whole object under key, failing the test on error.
func get(t *testing.T, s blob.Store, key string) ([]byte, blob.Object) {
	t.Helper()
	rc, obj, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return data, obj
}

// mustBeMissing checks that key is not found by Stat and Get.
func mustBeMissing(t *testing.T, s blob.Store, key string) {
	t.Helper()
	if _, err := s.Stat(context.Background(), key); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat(%q) error = %v, want ErrNotFound", key, err)
	}
	rc, _, err := s.Get(context.Background(), key)
	if !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Get(%q) error = %v, want ErrNotFound", key, err)
	}
	if rc != nil {
		_ = rc.Close()
	}
}

func md5hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// download GETs url with client and returns the response with its body read.
func download(t *testing.T, client *http.Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

// failingReader yields n bytes, then fails.
type failingReader struct{ n int }

var errBoom = errors.New("reader failed")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errBoom
	}
	k := min(len(p), f.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	f.n -= k
	return k, nil
}
