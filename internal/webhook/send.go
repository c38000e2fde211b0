package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout is the per-attempt limit upstream uses (contract §4.10):
// connecting, sending and reading the answer all fit inside it.
const DefaultTimeout = 10 * time.Second

// ResponseLimit is how many bytes of an endpoint's answer are read and kept
// in [Result.Response]: 2 KiB shows the gist of an error page in the
// delivery log, and the bound caps what a hostile endpoint can make the
// server read and store for every attempt.
const ResponseLimit = 2048

// Delivery is one attempt's input. Body is sent byte for byte and signed as
// is, so it must be the stored payload, not a re-encoding of it.
type Delivery struct {
	URL    string
	Secret string
	MsgID  string
	Body   []byte
}

// Result is what the delivery log records about one attempt.
type Result struct {
	// StatusCode is the endpoint's HTTP status, 0 when none arrived.
	StatusCode int
	// Response is the start of the answer's body (at most [ResponseLimit]
	// bytes, valid UTF-8, NUL bytes removed so PostgreSQL text accepts it),
	// or, when the endpoint sent no body, the failure's [Reason]: the
	// organization reads it, so it never carries Err's details.
	Response string
	// Success is true exactly when the endpoint answered 2xx.
	Success bool
	// Err explains a failure: a *[StatusError] for a non-2xx answer, a
	// *[BlockedAddrError] for a refused address, or the network error. It is
	// nil on success. It may name the server's resolver and the addresses a
	// host resolved to: it is for the operator's log, not the organization.
	Err error
	// Duration is the wall time of the attempt.
	Duration time.Duration
}

// StatusError is the failure of an attempt the endpoint answered with a
// status outside 2xx. Redirects are failures too: following them would let
// an endpoint send the signed payload somewhere else.
type StatusError struct {
	StatusCode int
	// Location is the redirect target of a 3xx answer, clipped, for the log.
	Location string
}

func (e *StatusError) Error() string {
	if e.Location != "" {
		return fmt.Sprintf("webhook: endpoint answered HTTP %d redirecting to %s; redirects are not followed",
			e.StatusCode, e.Location)
	}
	return fmt.Sprintf("webhook: endpoint answered HTTP %d", e.StatusCode)
}

// Sender delivers webhooks over HTTP. The zero value is ready to use with
// upstream's settings and the address guard on. Set the fields before the
// first Send: the HTTP client is built once from them and shared by all
// attempts (keeping connections to busy endpoints alive). A Sender must not
// be copied after first use.
type Sender struct {
	// Timeout bounds each attempt; zero means [DefaultTimeout].
	Timeout time.Duration
	// AllowPrivate lets deliveries reach loopback, private and other
	// non-global addresses, for self-hosters whose receivers live on their
	// own network. Off by default: see [IsGlobalIP].
	AllowPrivate bool
	// Now gives the attempt time put in webhook-timestamp; nil means
	// time.Now.
	Now func() time.Time

	once   sync.Once
	client *http.Client
}

// Send makes one delivery attempt: a POST of d.Body signed for the current
// time. It never retries; the caller schedules retries and records each
// Result. Cancelling ctx aborts the attempt, and the Result's Err then wraps
// ctx's error so the caller can tell shutdown from endpoint failure.
func (s *Sender) Send(ctx context.Context, d Delivery) Result {
	client := s.httpClient()
	start := time.Now()
	attemptCtx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	res := s.attempt(attemptCtx, client, d)
	if res.Err != nil && ctx.Err() == nil && errors.Is(attemptCtx.Err(), context.DeadlineExceeded) {
		res.Err = fmt.Errorf("webhook: no complete answer within %s: %w", s.timeout(), res.Err)
	}
	if res.Response == "" && res.Err != nil {
		res.Response = Reason(res.Err)
		if res.Response == ReasonTimeout {
			res.Response += ": no complete answer within " + s.timeout().String()
		}
	}
	res.Duration = time.Since(start)
	return res
}

// attempt performs the request and classifies the answer.
func (s *Sender) attempt(ctx context.Context, client *http.Client, d Delivery) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return Result{Err: fmt.Errorf("%w: %w", errInvalidURL, err)}
	}
	req.Header = Headers(d.Secret, d.MsgID, s.now(), d.Body)
	resp, err := client.Do(req)
	if err != nil {
		return Result{Err: withoutURL(err)}
	}
	defer resp.Body.Close()
	res := Result{
		StatusCode: resp.StatusCode,
		Response:   readResponse(resp.Body),
		Success:    resp.StatusCode >= 200 && resp.StatusCode < 300,
	}
	if !res.Success {
		res.Err = &StatusError{StatusCode: resp.StatusCode, Location: clip(resp.Header.Get("Location"), 256)}
	}
	return res
}

// withoutURL drops the *url.Error layer, whose message repeats the endpoint
// URL: the delivery log already names the endpoint, and URLs of chat
// webhooks carry their own secret, which must not spread into logs.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("webhook: %w", ue.Err)
	}
	return err
}

// readResponse reads at most ResponseLimit bytes of the answer and returns
// them as storable text. A read error (the endpoint stalling or dropping the
// connection mid-body) keeps what arrived: the status already decided the
// attempt.
func readResponse(body io.Reader) string {
	buf, _ := io.ReadAll(io.LimitReader(body, ResponseLimit))
	return clip(string(buf), ResponseLimit)
}

// clip makes s valid UTF-8 without NUL bytes, the two things a PostgreSQL
// text column rejects, cut to at most limit bytes on a rune boundary.
func clip(s string, limit int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// isRuneStart reports whether b begins a UTF-8 encoded rune.
func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

func (s *Sender) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

func (s *Sender) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// httpClient builds the client on first use. Its transport dials through
// the address guard, ignores proxy settings from the environment (a proxy
// would make the connection, so the guard would only ever see the proxy's
// address), and the client returns redirects to Send instead of following
// them.
func (s *Sender) httpClient() *http.Client {
	s.once.Do(func() {
		dialer := &net.Dialer{
			Timeout:   s.timeout(),
			KeepAlive: 30 * time.Second,
			Control:   dialGuard(s.AllowPrivate),
		}
		transport := &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    s.timeout(),
			MaxIdleConns:           100,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
		}
		s.client = &http.Client{
			Transport: transport,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	})
	return s.client
}
