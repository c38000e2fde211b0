package webhook_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"till/internal/webhook"
)

// request is what a test receiver saw.
type request struct {
	method string
	header http.Header
	body   []byte
}

// recorder is a test receiver: it records every request, then lets reply
// answer it.
type recorder struct {
	mu   sync.Mutex
	seen []request
}

func (r *recorder) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.seen...)
}

// receive starts an httptest server on loopback that records each request
// before handing it to reply.
func receive(t *testing.T, reply http.HandlerFunc) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.seen = append(rec.seen, request{method: r.Method, header: r.Header.Clone(), body: body})
		rec.mu.Unlock()
		reply(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

const testSecret = "whsec_Q3kX9mTzA0bLr7VwYc2NdE5fGh8JpKs1uUi4o0000000"

// verifier is a receiver's Standard Webhooks check, given base64(secret) as
// upstream's consumers must.
func verifier(t *testing.T) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(base64.StdEncoding.EncodeToString([]byte(testSecret)))
	if err != nil {
		t.Fatal(err)
	}
	return wh
}

func TestSendSucceedsOnAny2xx(t *testing.T) {
	body := []byte("{ \"type\": \"order.paid\",\n \"data\": {\"amount\": 1.50} }")
	tests := []struct {
		name     string
		reply    http.HandlerFunc
		status   int
		response string
	}{
		{"200 with a body", answer(http.StatusOK, "thanks"), 200, "thanks"},
		{"204 without a body", answer(http.StatusNoContent, ""), 204, ""},
		{"202 accepted", answer(http.StatusAccepted, "queued"), 202, "queued"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := receive(t, tt.reply)
			s := &webhook.Sender{AllowPrivate: true}
			res := s.Send(t.Context(), webhook.Delivery{URL: srv.URL + "/hook?x=1", Secret: testSecret, MsgID: "evt_1", Body: body})
			if !res.Success || res.Err != nil || res.StatusCode != tt.status || res.Response != tt.response {
				t.Fatalf("Send = %+v, want success with status %d and response %q", res, tt.status, tt.response)
			}
			if res.Duration <= 0 {
				t.Errorf("Duration = %v, want > 0", res.Duration)
			}
			got := rec.requests()
			if len(got) != 1 {
				t.Fatalf("receiver saw %d requests, want 1", len(got))
			}
			if got[0].method != http.MethodPost || !bytes.Equal(got[0].body, body) {
				t.Errorf("receiver saw %s %q, want POST of the exact body %q", got[0].method, got[0].body, body)
			}
			if err := verifier(t).Verify(got[0].body, got[0].header); err != nil {
				t.Errorf("receiver could not verify the delivery: %v", err)
			}
			if ua := got[0].header.Get("User-Agent"); ua != "polar.sh webhooks" {
				t.Errorf("User-Agent = %q", ua)
			}
		})
	}
}

func TestSendFailures(t *testing.T) {
	longBody := strings.Repeat("0123456789abcdef", 1024) // 16 KiB
	redirectTarget, targetRec := receive(t, answer(http.StatusOK, "moved here"))
	tests := []struct {
		name     string
		reply    http.HandlerFunc
		status   int
		response string // prefix of Response
		errText  string // substring of Err
	}{
		{"500 keeps a truncated body", answer(http.StatusInternalServerError, longBody), 500,
			longBody[:webhook.ResponseLimit], "HTTP 500"},
		{"404 without a body records the status as the response", answer(http.StatusNotFound, ""), 404,
			"webhook: endpoint answered HTTP 404", "HTTP 404"},
		{"302 is not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, redirectTarget.URL+"/elsewhere", http.StatusFound)
		}, 302, "", "redirects are not followed"},
		{"a dropped connection", func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, 0, webhook.ReasonClosed, "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := receive(t, tt.reply)
			s := &webhook.Sender{AllowPrivate: true}
			res := s.Send(t.Context(), webhook.Delivery{URL: srv.URL, Secret: testSecret, MsgID: "evt_1", Body: []byte("{}")})
			if res.Success || res.StatusCode != tt.status {
				t.Fatalf("Send = %+v, want a failure with status %d", res, tt.status)
			}
			if res.Err == nil || !strings.Contains(res.Err.Error(), tt.errText) {
				t.Errorf("Err = %v, want it to mention %q", res.Err, tt.errText)
			}
			if !strings.HasPrefix(res.Response, tt.response) || len(res.Response) > webhook.ResponseLimit {
				t.Errorf("Response = %.80q… (%d bytes), want prefix %.80q and at most %d bytes",
					res.Response, len(res.Response), tt.response, webhook.ResponseLimit)
			}
			if strings.Contains(res.Response, srv.URL) && tt.status == 0 {
				t.Errorf("Response %q repeats the endpoint URL", res.Response)
			}
			if n := len(rec.requests()); n != 1 {
				t.Errorf("receiver saw %d requests, want 1", n)
			}
		})
	}
	if n := len(targetRec.requests()); n != 0 {
		t.Errorf("redirect target saw %d requests; redirects must not be followed", n)
	}
}

// TestSendReasonsNameNothingOfTheServersNetwork: the organization reads Response, so a
// failure without an answer is a fixed reason there, while Err keeps the details (resolver,
// addresses, host names) for the operator's log.
func TestSendReasonsNameNothingOfTheServersNetwork(t *testing.T) {
	srv, _ := receive(t, answer(http.StatusOK, ""))
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String() + "/hook"
	closed.Close()
	tests := []struct {
		name, url    string
		allowPrivate bool
		response     string
		detail       string // in Err, never in Response
	}{
		{"a host that does not resolve", "http://no-such-host.invalid/hook", true, webhook.ReasonUnresolved, "no-such-host.invalid"},
		{"a host that resolves to a refused address", srv.URL, false, webhook.ReasonUnresolved, "127.0.0.1"},
		{"a port nothing listens on", closedURL, true, webhook.ReasonRefused, "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &webhook.Sender{AllowPrivate: tt.allowPrivate, Timeout: 5 * time.Second}
			res := s.Send(t.Context(), webhook.Delivery{URL: tt.url, Secret: testSecret, MsgID: "m", Body: []byte("{}")})
			if res.Success || res.Response != tt.response {
				t.Errorf("Response = %q, want %q", res.Response, tt.response)
			}
			if res.Err == nil || !strings.Contains(res.Err.Error(), tt.detail) {
				t.Errorf("Err = %v, want the detail %q kept for the operator", res.Err, tt.detail)
			}
		})
	}
}

func TestSendRecordsRedirectStatusAndLocation(t *testing.T) {
	srv, _ := receive(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example/in", http.StatusMovedPermanently)
	})
	res := (&webhook.Sender{AllowPrivate: true}).Send(t.Context(), webhook.Delivery{URL: srv.URL, Secret: testSecret, MsgID: "m"})
	var se *webhook.StatusError
	if !errors.As(res.Err, &se) || se.StatusCode != 301 || se.Location != "https://elsewhere.example/in" {
		t.Fatalf("Err = %#v, want *StatusError{301, https://elsewhere.example/in}", res.Err)
	}
}

func TestSendTimesOutAHangingEndpoint(t *testing.T) {
	release := make(chan struct{})
	srv, _ := receive(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	s := &webhook.Sender{AllowPrivate: true, Timeout: 150 * time.Millisecond}
	res := s.Send(t.Context(), webhook.Delivery{URL: srv.URL, Secret: testSecret, MsgID: "m", Body: []byte("{}")})
	if res.Success || res.StatusCode != 0 || !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Fatalf("Send = %+v, want a timeout failure", res)
	}
	if !strings.Contains(res.Response, "no complete answer within 150ms") {
		t.Errorf("Response = %q, want the timeout reason", res.Response)
	}
	if res.Duration < 150*time.Millisecond || res.Duration > 5*time.Second {
		t.Errorf("Duration = %v, want about the 150ms timeout", res.Duration)
	}
}

func TestSendReportsCallerCancellation(t *testing.T) {
	srv, rec := receive(t, answer(http.StatusOK, ""))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := (&webhook.Sender{AllowPrivate: true}).Send(ctx, webhook.Delivery{URL: srv.URL, Secret: testSecret, MsgID: "m"})
	if res.Success || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("Send = %+v, want a failure wrapping context.Canceled", res)
	}
	if strings.Contains(res.Err.Error(), "no complete answer") {
		t.Errorf("Err = %v; a cancelled caller is not an endpoint timeout", res.Err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("receiver saw %d requests after cancellation", n)
	}
}

func TestSendResignsEachAttempt(t *testing.T) {
	srv, rec := receive(t, answer(http.StatusInternalServerError, ""))
	times := []time.Time{time.Unix(1767225600, 0), time.Unix(1767225600+64, 0)}
	calls := 0
	s := &webhook.Sender{AllowPrivate: true, Now: func() time.Time { calls++; return times[calls-1] }}
	d := webhook.Delivery{URL: srv.URL, Secret: testSecret, MsgID: "evt_stable", Body: []byte(`{"n":1}`)}
	s.Send(t.Context(), d)
	s.Send(t.Context(), d)

	got := rec.requests()
	if len(got) != 2 {
		t.Fatalf("receiver saw %d requests, want 2", len(got))
	}
	wh := verifier(t)
	for i, r := range got {
		if id := r.header.Get("webhook-id"); id != "evt_stable" {
			t.Errorf("attempt %d: webhook-id = %q, want the stable event id", i, id)
		}
		if ts := r.header.Get("webhook-timestamp"); ts != strconv.FormatInt(times[i].Unix(), 10) {
			t.Errorf("attempt %d: webhook-timestamp = %s, want the attempt time %d", i, ts, times[i].Unix())
		}
		if err := wh.VerifyIgnoringTimestamp(r.body, r.header); err != nil {
			t.Errorf("attempt %d does not verify: %v", i, err)
		}
	}
	if got[0].header.Get("webhook-signature") == got[1].header.Get("webhook-signature") {
		t.Error("both attempts carry the same signature; each attempt must be re-signed")
	}
}

func TestSendKeepsStorableResponseText(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"NUL bytes are dropped", "a\x00b", "ab"},
		{"invalid UTF-8 is replaced", "a\xffb", "a\uFFFDb"},
		{"a rune cut by the limit is dropped", strings.Repeat("a", webhook.ResponseLimit-1) + "é",
			strings.Repeat("a", webhook.ResponseLimit-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := receive(t, answer(http.StatusBadRequest, tt.body))
			res := (&webhook.Sender{AllowPrivate: true}).Send(t.Context(), webhook.Delivery{URL: srv.URL, Secret: testSecret, MsgID: "m"})
			if res.Response != tt.want || !utf8.ValidString(res.Response) {
				t.Errorf("Response = %q, want %q", res.Response, tt.want)
			}
		})
	}
}

func TestSendRejectsAnInvalidURL(t *testing.T) {
	res := (&webhook.Sender{}).Send(t.Context(), webhook.Delivery{URL: "http://[::1", Secret: testSecret, MsgID: "m"})
	if res.Success || res.Err == nil || res.Response == "" {
		t.Fatalf("Send = %+v, want a failure with a reason", res)
	}
}
