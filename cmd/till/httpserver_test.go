package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"till/internal/blob"
)

// startHTTP serves handler as serve does (listener with the connection cap, server with the
// configured deadlines) at the address cfg names, until the test ends.
func startHTTP(t *testing.T, cfg config, handler http.Handler) {
	t.Helper()
	ln, err := listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(context.Background(), cfg, handler)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// testHTTPConfig is the configuration of a server at a free local address with vars set.
func testHTTPConfig(t *testing.T, vars map[string]string) config {
	t.Helper()
	vars["TILL_ADDR"] = freeAddr(t)
	vars["TILL_DATA_DIR"] = t.TempDir()
	cfg, err := loadConfig(getenvOf(vars))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// closedWithin reports whether the server ends c (after any answer it sends) before wait
// passes; wait only bounds how long a failing test hangs.
func closedWithin(c net.Conn, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

func TestStalledRequestBodyIsCutOff(t *testing.T) {
	cfg := testHTTPConfig(t, map[string]string{"TILL_HTTP_READ_TIMEOUT": "200ms"})
	readErr := make(chan error, 1)
	startHTTP(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
	}))
	c, err := net.Dial("tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /graphql HTTP/1.1\r\nHost: till\r\nContent-Length: 100\r\n\r\n0123456789")
	if !closedWithin(c, 10*time.Second) {
		t.Fatal("the server still holds a connection whose body stalled, long after TILL_HTTP_READ_TIMEOUT")
	}
	select {
	case err := <-readErr:
		if err == nil {
			t.Error("the handler read a whole body that never arrived")
		}
	case <-time.After(10 * time.Second):
		t.Error("the handler's body read never ended")
	}
}

func TestPartUploadGetsItsOwnDeadline(t *testing.T) {
	// The general deadlines are far shorter than the upload takes; at 10 bytes a second the
	// part's own deadline leaves it ten seconds more.
	cfg := testHTTPConfig(t, map[string]string{"TILL_HTTP_READ_TIMEOUT": "200ms", "TILL_HTTP_WRITE_TIMEOUT": "200ms",
		"TILL_HTTP_MIN_RATE": "10"})
	store, handler, err := openBlobStore(cfg, []byte("a-test-secret-of-enough-length!!"))
	if err != nil {
		t.Fatal(err)
	}
	local := store.(*blob.Local)
	mux := http.NewServeMux()
	mux.Handle(blobURLPath, handler)
	startHTTP(t, cfg, mux)

	const size = 100
	part := blob.Part{Number: 1, Start: 0, End: size}
	id, err := local.CreateMultipart(t.Context(), "files/slow.bin",
		blob.UploadSpec{ContentType: "application/octet-stream", Size: size, Parts: []blob.Part{part}})
	if err != nil {
		t.Fatal(err)
	}
	link, err := local.PresignPart(t.Context(), "files/slow.bin", id, part, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	body := &slowReader{chunks: 4, chunk: size / 4, pause: 150 * time.Millisecond}
	req, err := http.NewRequest(http.MethodPut, link.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the slow part upload failed: %v", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
		t.Fatalf("slow part upload answered %d %s, want 200 with an ETag", resp.StatusCode, answer)
	}
}

func TestLargeDownloadGetsItsOwnDeadline(t *testing.T) {
	// 32 MiB overflow the sockets' buffers, so the server's writes wait for the slow reader
	// well past the general write deadline; at 2 MB a second the download has 16 s more.
	cfg := testHTTPConfig(t, map[string]string{"TILL_HTTP_READ_TIMEOUT": "200ms", "TILL_HTTP_WRITE_TIMEOUT": "200ms",
		"TILL_HTTP_MIN_RATE": "2000000"})
	store, handler, err := openBlobStore(cfg, []byte("a-test-secret-of-enough-length!!"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(blobURLPath, handler)
	startHTTP(t, cfg, mux)
	const size = 32 << 20
	if _, err := store.Put(t.Context(), "files/big.bin", strings.NewReader(strings.Repeat("x", size)), size,
		"application/octet-stream"); err != nil {
		t.Fatal(err)
	}
	link, err := store.SignedURL(t.Context(), "files/big.bin", time.Minute, "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got int64
	buf := make([]byte, 1<<20)
	for {
		time.Sleep(40 * time.Millisecond)
		n, err := io.ReadFull(resp.Body, buf)
		got += int64(n)
		if err != nil {
			break
		}
	}
	if resp.StatusCode != http.StatusOK || got != size {
		t.Fatalf("slow download: status %d, %d of %d bytes", resp.StatusCode, got, size)
	}
}

// slowReader yields chunks of 'x' with a pause before each, like a slow uplink.
type slowReader struct {
	chunks, chunk int
	pause         time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	if s.chunks == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.pause)
	s.chunks--
	n := copy(p, strings.Repeat("x", s.chunk))
	return n, nil
}

func TestConnectionsPerClientAreCapped(t *testing.T) {
	cfg := testHTTPConfig(t, map[string]string{"TILL_MAX_CONNS_PER_IP": "2"})
	startHTTP(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writePlain(w, http.StatusOK, "ok") }))
	_, port, _ := net.SplitHostPort(cfg.Addr)
	dialFrom := func(ip string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c, err := d.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	served := func(c net.Conn) bool {
		t.Helper()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: till\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	for i := range 2 {
		if !served(dialFrom("127.0.0.1")) {
			t.Fatalf("connection %d of 2 from one client was not served", i+1)
		}
	}
	t.Run("the client's third connection is refused", func(t *testing.T) {
		if served(dialFrom("127.0.0.1")) {
			t.Error("a third connection from the same address was served with a cap of 2")
		}
	})
	t.Run("another client is still served", func(t *testing.T) {
		if !served(dialFrom("127.0.0.2")) {
			t.Error("a connection from another address was refused")
		}
	})
}
