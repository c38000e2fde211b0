package blob_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLocalRefusesTamperedURLs(t *testing.T) {
	f := newLocal(t)
	put(t, f.store, invoiceKey, "application/pdf", []byte("pdf"))
	put(t, f.store, "invoices/other/INV-0002.pdf", "application/pdf", []byte("other"))
	signed, err := f.store.SignedURL(context.Background(), invoiceKey, time.Hour, "INV-0001.pdf")
	if err != nil {
		t.Fatalf("SignedURL: %v", err)
	}
	if resp, _ := download(t, f.server.Client(), signed); resp.StatusCode != http.StatusOK {
		t.Fatalf("untampered URL = %d, want 200", resp.StatusCode)
	}
	cases := []struct {
		name   string
		tamper func(u *url.URL, q url.Values)
	}{
		{"another key", func(u *url.URL, _ url.Values) { u.Path = "/blob/invoices/other/INV-0002.pdf" }},
		{"a later expiry", func(_ *url.URL, q url.Values) { bump(q, "expires") }},
		{"another filename", func(_ *url.URL, q url.Values) { q.Set("filename", "evil.html") }},
		{"no filename", func(_ *url.URL, q url.Values) { q.Del("filename") }},
		{"a flipped signature bit", func(_ *url.URL, q url.Values) { flipHex(q, "signature") }},
		{"no signature", func(_ *url.URL, q url.Values) { q.Del("signature") }},
		{"no expiry", func(_ *url.URL, q url.Values) { q.Del("expires") }},
		{"a non-numeric expiry", func(_ *url.URL, q url.Values) { q.Set("expires", "soon") }},
	}
	for _, c := range cases {
		t.Run("a URL with "+c.name+" is forbidden", func(t *testing.T) {
			u, _ := url.Parse(signed)
			q := u.Query()
			c.tamper(u, q)
			u.RawQuery = q.Encode()
			resp, body := download(t, f.server.Client(), u.String())
			if resp.StatusCode != http.StatusForbidden || strings.TrimSpace(string(body)) != "invalid signature" {
				t.Errorf("GET = %d %q, want 403 invalid signature", resp.StatusCode, body)
			}
		})
	}
}

func bump(q url.Values, name string) {
	n, _ := strconv.ParseInt(q.Get(name), 10, 64)
	q.Set(name, strconv.FormatInt(n+3600, 10))
}

func flipHex(q url.Values, name string) {
	s := []byte(q.Get(name))
	if s[0] == '0' {
		s[0] = '1'
	} else {
		s[0] = '0'
	}
	q.Set(name, string(s))
}

func TestLocalHandlerServesLikeAFileServer(t *testing.T) {
	f := newLocal(t)
	data := []byte("0123456789")
	put(t, f.store, invoiceKey, "application/pdf", data)
	signed, err := f.store.SignedURL(context.Background(), invoiceKey, time.Hour, "")
	if err != nil {
		t.Fatalf("SignedURL: %v", err)
	}
	etag := `"` + md5hex(data) + `"`
	cases := []struct {
		name, method string
		header       http.Header
		url          string
		status       int
		body         string
	}{
		{"GET streams the whole object", "GET", nil, signed, 200, "0123456789"},
		{"HEAD sends headers only", "HEAD", nil, signed, 200, ""},
		{"a Range request gets a partial body", "GET", http.Header{"Range": {"bytes=2-4"}}, signed, 206, "234"},
		{"a matching If-None-Match is not modified", "GET", http.Header{"If-None-Match": {etag}}, signed, 304, ""},
		{"POST is not allowed", "POST", nil, signed, 405, "method not allowed\n"},
		{"a path outside the base is not found", "GET", nil, strings.Replace(signed, "/blob/", "/blobs/", 1), 404, "404 page not found\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, c.url, nil)
			addHeaders(req.Header, c.header)
			resp, err := f.server.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || string(body) != c.body {
				t.Errorf("%s = %d %q, want %d %q", c.method, resp.StatusCode, body, c.status, c.body)
			}
			if c.status == 200 {
				checkServedHeaders(t, resp, etag)
			}
		})
	}
}

func addHeaders(dst, src http.Header) {
	for k, v := range src {
		dst[k] = v
	}
}

func checkServedHeaders(t *testing.T, resp *http.Response, etag string) {
	t.Helper()
	want := map[string]string{
		"Content-Type":           "application/pdf",
		"Content-Length":         "10",
		"Etag":                   etag,
		"Content-Disposition":    "attachment; filename=INV-0001.pdf",
		"X-Content-Type-Options": "nosniff",
		"Accept-Ranges":          "bytes",
	}
	got := map[string]string{}
	for k := range want {
		got[k] = resp.Header.Get(k)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}
