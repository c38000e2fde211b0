package ratelimit

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const (
	orgA = "0b1e5a3c-7f2d-4e6a-9c1b-2d3e4f5a6b7c"
	orgB = "9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f"
)

// fakeClock is a settable time source for a Guard.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// recorder is the next handler: it records what reached it.
type recorder struct {
	calls         int
	body          []byte
	readErr       error
	contentLength int64
	bodyObject    io.ReadCloser
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.calls++
	rec.contentLength = r.ContentLength
	rec.bodyObject = r.Body
	rec.body, rec.readErr = io.ReadAll(r.Body)
	w.WriteHeader(http.StatusOK)
}

func newTestGuard(t *testing.T, cfg Config) (http.Handler, *recorder, *fakeClock) {
	t.Helper()
	g, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Now()}
	g.now = clock.now
	rec := &recorder{}
	return g.Handler(rec), rec, clock
}

func licenseRequest(remote, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/customer-portal/license-keys/validate", strings.NewReader(body))
	r.RemoteAddr = remote
	r.Header.Set("Content-Type", "application/json")
	return r
}

func keyBody(org, key string) string {
	return `{"key":"` + key + `","organization_id":"` + org + `"}`
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func assertTooMany(t *testing.T, w *httptest.ResponseRecorder, seconds string) {
	t.Helper()
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", w.Code)
	}
	if got := w.Header().Get("Retry-After"); got != seconds {
		t.Errorf("Retry-After %q, want %q", got, seconds)
	}
	if got := w.Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	want := `{"error":"TooManyRequests","detail":"Rate limit exceeded. Retry in ` + seconds + ` seconds."}`
	if got := w.Body.String(); got != want {
		t.Errorf("body %s, want %s", got, want)
	}
}

func ipOnly() Config {
	cfg := DefaultConfig()
	cfg.PerKey = Limit{}
	return cfg
}

func keyOnly(rate int) Config {
	cfg := DefaultConfig()
	cfg.PerIP = Limit{}
	cfg.PerKey = Limit{Rate: rate, Interval: time.Second, Block: time.Minute}
	return cfg
}

func TestHandlerLimitsEachIP(t *testing.T) {
	h, rec, clock := newTestGuard(t, ipOnly())
	for i := range 3 {
		if w := serve(h, licenseRequest("192.0.2.1:5000", "{}")); w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d", i, w.Code)
		}
	}
	assertTooMany(t, serve(h, licenseRequest("192.0.2.1:5001", "{}")), "60")
	if rec.calls != 3 {
		t.Fatalf("next saw %d requests, want 3", rec.calls)
	}
	if w := serve(h, licenseRequest("192.0.2.2:5000", "{}")); w.Code != http.StatusOK {
		t.Fatalf("another address was refused: %d", w.Code)
	}

	clock.advance(30*time.Second + 500*time.Millisecond)
	assertTooMany(t, serve(h, licenseRequest("192.0.2.1:5000", "{}")), "30")
	clock.advance(30 * time.Second)
	if w := serve(h, licenseRequest("192.0.2.1:5000", "{}")); w.Code != http.StatusOK {
		t.Fatalf("still refused after the block: %d", w.Code)
	}
}

func TestHandlerChecksIPBeforeReadingBody(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PerIP.Rate = 1
	h, _, _ := newTestGuard(t, cfg)
	serve(h, licenseRequest("192.0.2.1:1", keyBody(orgA, "K")))
	body := &countingReader{r: strings.NewReader(keyBody(orgA, "K"))}
	r := licenseRequest("192.0.2.1:1", "")
	r.Body, r.ContentLength = io.NopCloser(body), int64(body.r.Len())
	assertTooMany(t, serve(h, r), "60")
	if body.reads != 0 {
		t.Fatalf("body was read %d times for a request refused by address", body.reads)
	}
}

type countingReader struct {
	r     *strings.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) { c.reads++; return c.r.Read(p) }

func TestHandlerLimitsEachLicenseKey(t *testing.T) {
	tests := []struct {
		name    string
		second  string // body of the request after two of keyBody(orgA, "K")
		limited bool
	}{
		{"same key", keyBody(orgA, "K"), true},
		{"other key", keyBody(orgA, "L"), false},
		{"same key in another organization", keyBody(orgB, "K"), false},
		{"keys are case-sensitive", keyBody(orgA, "k"), false},
		{"organization in upper case", keyBody(strings.ToUpper(orgA), "K"), true},
		{"organization in braces", keyBody("{"+orgA+"}", "K"), true},
		{"organization without hyphens", keyBody(strings.ReplaceAll(orgA, "-", ""), "K"), true},
		{"members reordered with extra fields", `{"organization_id":"` + orgA + `","label":"x","meta":{"a":[1,{"b":"}"}]},"key":"K"}`, true},
		{"escaped key", `{"key":"\u004b","organization_id":"` + orgA + `"}`, true},
		{"decoy member in other case", `{"key":"K","KEY":"decoy","organization_id":"` + orgA + `"}`, true},
		{"last duplicate wins", `{"key":"decoy","key":"K","organization_id":"` + orgA + `"}`, true},
		{"NaN elsewhere in the body", `{"key":"K","organization_id":"` + orgA + `","increment_usage":NaN}`, true},
		{"UTF-8 byte order mark", "\xef\xbb\xbf" + keyBody(orgA, "K"), true},
		{"UTF-16 little endian", utf16LE(keyBody(orgA, "K")), true},
		{"invalid JSON is left to the handler", `{"key":"K",`, false},
		{"missing organization", `{"key":"K"}`, false},
		{"non-string key", `{"key":1,"organization_id":"` + orgA + `"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, rec, _ := newTestGuard(t, keyOnly(2))
			for range 2 {
				if w := serve(h, licenseRequest("192.0.2.1:1", keyBody(orgA, "K"))); w.Code != http.StatusOK {
					t.Fatalf("first requests refused: %d", w.Code)
				}
			}
			w := serve(h, licenseRequest("192.0.2.2:1", tt.second))
			if tt.limited {
				assertTooMany(t, w, "60")
				if rec.calls != 2 {
					t.Fatalf("a refused request reached next")
				}
			} else if w.Code != http.StatusOK {
				t.Fatalf("status %d, want 200", w.Code)
			}
		})
	}
}

func utf16LE(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteByte(byte(r))
		b.WriteByte(byte(r >> 8))
	}
	return b.String()
}

func TestHandlerRestoresBody(t *testing.T) {
	const peek = 64
	small := keyBody(orgA, "K")
	large := `{"key":"K","organization_id":"` + orgA + `","label":"` + strings.Repeat("x", 100) + `"}`
	tests := []struct {
		name    string
		body    string
		chunked bool // unknown length, as with Transfer-Encoding: chunked
	}{
		{"small", small, false},
		{"invalid JSON", `{"key":`, false},
		{"exactly the peek size", strings.Repeat(" ", peek-2) + "{}", false},
		{"one byte over the peek size", strings.Repeat(" ", peek-1) + "{}", false},
		{"large", large, false},
		{"small of unknown length", small, true},
		{"large of unknown length", large, true},
		{"binary", "\x00\xff\xfe" + strings.Repeat("\x00", 10), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxBodyPeek = peek
			h, rec, _ := newTestGuard(t, cfg)
			r := licenseRequest("192.0.2.1:1", tt.body)
			want := r.ContentLength
			if tt.chunked {
				r.Body = io.NopCloser(strings.NewReader(tt.body)) // hides the length
				r.ContentLength, want = -1, -1
			}
			if w := serve(h, r); w.Code != http.StatusOK {
				t.Fatalf("status %d", w.Code)
			}
			if string(rec.body) != tt.body || rec.readErr != nil {
				t.Fatalf("next read %q (err %v), want %q", rec.body, rec.readErr, tt.body)
			}
			if rec.contentLength != want {
				t.Fatalf("ContentLength %d, want %d", rec.contentLength, want)
			}
		})
	}
}

func TestHandlerReplaysBodyReadError(t *testing.T) {
	boom := errors.New("connection reset")
	h, rec, _ := newTestGuard(t, DefaultConfig())
	r := licenseRequest("192.0.2.1:1", "")
	r.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"key":`), errReader{boom}))
	r.ContentLength = 100
	serve(h, r)
	if string(rec.body) != `{"key":` || !errors.Is(rec.readErr, boom) {
		t.Fatalf("next read %q, %v; want the partial body then %v", rec.body, rec.readErr, boom)
	}
}

func TestHandlerWithLimitsDisabled(t *testing.T) {
	h, rec, _ := newTestGuard(t, Config{})
	for i := range 100 {
		r := licenseRequest("192.0.2.1:1", keyBody(orgA, "K"))
		orig := r.Body
		if w := serve(h, r); w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d", i, w.Code)
		}
		if rec.bodyObject != orig {
			t.Fatal("the body was replaced although no per-key limit is set")
		}
	}
}

func TestOneGuardSharesBudgetAcrossRoutes(t *testing.T) {
	g, err := New(ipOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, action := range []string{"validate", "activate", "deactivate"} {
		mux.Handle("POST /v1/customer-portal/license-keys/"+action, g.Handler(ok))
	}
	var codes []int
	for _, action := range []string{"validate", "activate", "deactivate", "validate"} {
		r := httptest.NewRequest(http.MethodPost, "/v1/customer-portal/license-keys/"+action, strings.NewReader("{}"))
		r.RemoteAddr = "192.0.2.1:1"
		codes = append(codes, serve(mux, r).Code)
	}
	if codes[3] != http.StatusTooManyRequests || codes[0] != http.StatusOK {
		t.Fatalf("codes %v, want three 200 then 429", codes)
	}
}

// Through a real server the body arrives as net/http's own reader, with its
// Content-Length enforced; the handler must still read identical bytes.
func TestHandlerOverRealServer(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxBodyPeek = 32
	g, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	srv := httptest.NewServer(g.Handler(rec))
	defer srv.Close()
	for _, body := range []string{keyBody(orgA, "K"), "{}", strings.Repeat("y", 1000)} {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if string(rec.body) != body || rec.contentLength != int64(len(body)) {
			t.Fatalf("next read %d bytes with ContentLength %d, want %d identical bytes",
				len(rec.body), rec.contentLength, len(body))
		}
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	for _, cfg := range []Config{
		{PerIP: Limit{Rate: 1}},
		{PerKey: Limit{Rate: -1}},
		{MaxBodyPeek: -1},
	} {
		if _, err := New(cfg, nil); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestKeyIDSeparatesOrganizationAndKey(t *testing.T) {
	if keyID("a", "bc") == keyID("ab", "c") {
		t.Fatal("different pairs share a limiter key")
	}
	if got := len(keyID(orgA, strings.Repeat("K", 10_000))); got != 32 {
		t.Fatalf("limiter key of a long license key is %d bytes, want a fixed 32", got)
	}
}

func TestGuardSweepDropsExpiredEntriesOfBothRules(t *testing.T) {
	g, err := New(DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Now()}
	g.now = clock.now
	h := g.Handler(&recorder{})
	serve(h, licenseRequest("192.0.2.1:1", keyBody(orgA, "K")))
	serve(h, licenseRequest("192.0.2.2:1", keyBody(orgA, "L")))
	if got := g.Sweep(clock.t); got != 0 {
		t.Fatalf("Sweep removed %d live entries", got)
	}
	if got := g.Sweep(clock.t.Add(time.Second)); got != 4 {
		t.Fatalf("Sweep removed %d entries, want 2 addresses and 2 keys", got)
	}
}
