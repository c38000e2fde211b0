package blob

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// SignedURL returns BaseURL + key + "?expires=<unix>&filename=<name>&signature=<hex>",
// which Handler serves until expires without any other credential. The signature is an
// HMAC-SHA256 over the method, key, expiry and filename, so none of them can be changed.
func (l *Local) SignedURL(ctx context.Context, key string, ttl time.Duration, filename string) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	if err := checkTTL(ttl); err != nil {
		return "", err
	}
	expires := ceilUnix(l.now().Add(ttl))
	q := url.Values{}
	q.Set("expires", strconv.FormatInt(expires, 10))
	if filename != "" {
		q.Set("filename", filename)
	}
	q.Set("signature", hex.EncodeToString(l.sign(key, expires, filename)))
	u := *l.base
	u.Path += key // URL.String escapes each segment
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// ceilUnix rounds t up to a whole second so a URL lives at least its ttl.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// sign is the URL signature. HEAD requests are checked against GET: they read the same
// object without its body. Keys hold no newline and expires is digits, so the message is
// unambiguous with filename last.
func (l *Local) sign(key string, expires int64, filename string) []byte {
	mac := hmac.New(sha256.New, l.secret)
	mac.Write([]byte(http.MethodGet + "\n" + key + "\n" + strconv.FormatInt(expires, 10) + "\n" + filename))
	return mac.Sum(nil)
}

// Handler serves GET and HEAD of signed URLs at BaseURL's path, which it expects to see in
// full: mount it there without stripping the prefix (http.ServeMux and chi's Mount both
// keep it). It answers 403 for a missing, tampered or expired signature, 404 for a missing
// object, and otherwise streams the file with its type, length, ETag and an attachment
// Content-Disposition, honouring Range and conditional requests. It also takes the PUTs
// of PresignPart's URLs and their CORS preflights.
func (l *Local) Handler() http.Handler { return http.HandlerFunc(l.serve) }

func (l *Local) serve(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.URL.Path, l.base.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	setCORS(w.Header())
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPut:
		l.servePart(w, r, key)
		return
	case r.Method == http.MethodOptions && q.Has("upload_id"):
		servePreflight(w)
		return
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD, PUT")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	filename := q.Get("filename")
	if msg := l.checkSignature(key, q.Get("expires"), q.Get("signature"), filename); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	f, obj, err := l.open(r.Context(), key)
	switch {
	case errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalidKey):
		http.NotFound(w, r)
		return
	case err != nil:
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	l.allowTransfer(w, false, obj.Size)
	h := w.Header()
	h.Set("Content-Type", obj.ContentType)
	h.Set("ETag", `"`+obj.ETag+`"`)
	h.Set("Content-Disposition", attachment(key, filename))
	// Objects may be user uploads served from Till's own origin: never let a browser
	// second-guess the stored type.
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", obj.LastModified, f)
}

// checkSignature returns "" for a valid unexpired signature, else the reason to refuse.
// The signature is compared in constant time before the expiry is looked at, so a forged
// URL learns nothing but "invalid".
func (l *Local) checkSignature(key, expiresParam, sigParam, filename string) string {
	expires, err := strconv.ParseInt(expiresParam, 10, 64)
	if err != nil {
		return "invalid signature"
	}
	sig, err := hex.DecodeString(sigParam)
	if err != nil || !hmac.Equal(sig, l.sign(key, expires, filename)) {
		return "invalid signature"
	}
	if !l.now().Before(time.Unix(expires, 0)) {
		return "link expired"
	}
	return ""
}

// allowTransfer gives a signed request the time its transfer of n bytes needs: the write
// deadline always (a download's body, or an upload's answer once its body arrived) and the
// read deadline for an upload. It uses the wall clock, not l.now, which only decides link
// expiry. A writer that cannot move deadlines (a test recorder) is left as is.
func (l *Local) allowTransfer(w http.ResponseWriter, upload bool, n int64) {
	if l.transferTime == nil {
		return
	}
	deadline := time.Now().Add(l.transferTime(n))
	rc := http.NewResponseController(w)
	if upload {
		_ = rc.SetReadDeadline(deadline)
	}
	_ = rc.SetWriteDeadline(deadline)
}
