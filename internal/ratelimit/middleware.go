package ratelimit

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"time"
)

// Guard is the middleware of the license-key endpoints. Build one Guard and
// mount its Handler on all three routes, so validate, activate and
// deactivate share one budget per address and per key, as upstream's single
// rule over the three paths does.
type Guard struct {
	perIP    *Limiter
	perKey   *Limiter
	clientIP func(*http.Request) string
	maxPeek  int64
	now      func() time.Time
}

// New builds a Guard for cfg. clientIP names the address a request counts
// against; nil means ClientIP(nil), the TCP peer.
func New(cfg Config, clientIP func(*http.Request) string) (*Guard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	perIP, err := NewLimiter(cfg.PerIP)
	if err != nil {
		return nil, err
	}
	perKey, err := NewLimiter(cfg.PerKey)
	if err != nil {
		return nil, err
	}
	if clientIP == nil {
		clientIP = ClientIP(nil)
	}
	return &Guard{
		perIP:    perIP,
		perKey:   perKey,
		clientIP: clientIP,
		maxPeek:  cfg.maxBodyPeek(),
		now:      time.Now,
	}, nil
}

// Handler wraps next. The per-IP rule runs first because it needs no body;
// only then is the body read for the per-key rule. A refused request gets
// WriteTooManyRequests and never reaches next. next always reads exactly the
// bytes the client sent, and r.ContentLength is left as it was.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := g.now()
		if ok, wait := g.perIP.Allow(g.clientIP(r), now); !ok {
			WriteTooManyRequests(w, wait)
			return
		}
		if g.perKey.limit.Enabled() {
			if id, found := g.peekKeyID(r); found {
				if ok, wait := g.perKey.Allow(id, now); !ok {
					WriteTooManyRequests(w, wait)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Sweep drops expired entries from both rules; see Limiter.Sweep.
func (g *Guard) Sweep(now time.Time) int {
	return g.perIP.Sweep(now) + g.perKey.Sweep(now)
}

// peekKeyID reads the body, puts back a body yielding the same bytes (and
// the same read error, if any) and returns the per-key limiter key. A body
// over maxPeek is never held whole: next reads the peeked part followed by
// the unread rest.
func (g *Guard) peekKeyID(r *http.Request) (string, bool) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength > g.maxPeek {
		return "", false
	}
	orig := r.Body
	buf, err := io.ReadAll(io.LimitReader(orig, g.maxPeek+1))
	switch {
	case err != nil:
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), errReader{err}), orig}
		return "", false
	case int64(len(buf)) > g.maxPeek:
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), orig), orig}
		return "", false
	}
	r.Body = readCloser{bytes.NewReader(buf), orig}
	org, key, ok := licenseKeyOf(buf)
	if !ok {
		return "", false
	}
	return keyID(org, key), true
}

// keyID hashes the pair so a limiter entry has a fixed size however long a
// client makes its key. The NUL cannot occur in a canonical UUID, so
// distinct pairs never share an input.
func keyID(org, key string) string {
	sum := sha256.Sum256([]byte(org + "\x00" + key))
	return string(sum[:])
}

// readCloser is a replacement body that still closes the original.
type readCloser struct {
	io.Reader
	io.Closer
}

// errReader replays the error the original body returned.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
