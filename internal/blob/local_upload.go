package blob

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

// PresignPart returns BaseURL + key + "?upload_id=…&part=…&start=…&end=…[&sha256=…]
// &expires=…&signature=…", which Handler accepts as a PUT of exactly that byte range until
// expires. The range and digest travel in the URL, signed, so the handler can check a
// request before touching the disk and never needs to read the upload's spec; completion
// checks every part's range against the spec. The upload's existence is not checked here,
// as S3 does not check it when presigning either.
func (l *Local) PresignPart(ctx context.Context, key, uploadID string, part Part, ttl time.Duration) (PresignedPart, error) {
	if err := begin(ctx, key); err != nil {
		return PresignedPart{}, err
	}
	if err := checkTTL(ttl); err != nil {
		return PresignedPart{}, err
	}
	if !validUploadID(uploadID) {
		return PresignedPart{}, uploadNotFound(uploadID)
	}
	if err := checkPart(part); err != nil {
		return PresignedPart{}, err
	}
	expires := ceilUnix(l.now().Add(ttl))
	q := url.Values{}
	q.Set("upload_id", uploadID)
	q.Set("part", strconv.Itoa(part.Number))
	q.Set("start", strconv.FormatInt(part.Start, 10))
	q.Set("end", strconv.FormatInt(part.End, 10))
	if part.SHA256Base64 != "" {
		q.Set("sha256", part.SHA256Base64)
	}
	q.Set("expires", strconv.FormatInt(expires, 10))
	q.Set("signature", hex.EncodeToString(l.signPart(key, uploadID, part, expires)))
	u := *l.base
	u.Path += key
	u.RawQuery = q.Encode()
	return PresignedPart{URL: u.String(), Headers: partHeaders(part), ExpiresAt: time.Unix(expires, 0)}, nil
}

// checkPart refuses a part no upload can have, the per-part rules of ValidateParts.
func checkPart(p Part) error {
	switch {
	case p.Number < 1 || p.Number > MaxParts:
		return &PartError{p.Number, fmt.Sprintf("number outside 1..%d", MaxParts)}
	case p.Start < 0 || p.End < p.Start:
		return &PartError{p.Number, "invalid byte range"}
	case p.Size() > MaxPartSize:
		return &PartError{p.Number, fmt.Sprintf("larger than %d bytes", int64(MaxPartSize))}
	}
	if p.SHA256Base64 != "" {
		if _, err := DecodeSHA256(p.SHA256Base64); err != nil {
			return &PartError{p.Number, err.Error()}
		}
	}
	return nil
}

// partHeaders are the headers a part's PUT must carry, the same for every store: its
// length and, when the part has one, its digest, which the store verifies.
func partHeaders(p Part) map[string]string {
	h := map[string]string{"Content-Length": strconv.FormatInt(p.Size(), 10)}
	if p.SHA256Base64 != "" {
		h[headerChecksumSHA256] = p.SHA256Base64
	}
	return h
}

const headerChecksumSHA256 = "x-amz-checksum-sha256"

// signPart is the signature of a part URL. Its message starts with "PUT", download URLs'
// with "GET", so neither kind of signature ever verifies as the other; keys hold no
// newline and every other field is digits, hex or base64, so the message is unambiguous.
func (l *Local) signPart(key, uploadID string, p Part, expires int64) []byte {
	mac := hmac.New(sha256.New, l.secret)
	mac.Write([]byte(http.MethodPut + "\n" + key + "\n" + uploadID + "\n" + strconv.Itoa(p.Number) + "\n" +
		strconv.FormatInt(p.Start, 10) + "\n" + strconv.FormatInt(p.End, 10) + "\n" + p.SHA256Base64 + "\n" +
		strconv.FormatInt(expires, 10)))
	return mac.Sum(nil)
}

// checkPartSignature parses a part URL's query and returns the part, the upload id and ""
// when the signature is valid and unexpired, else the reason to refuse. As for downloads,
// the signature is compared before the expiry is looked at.
func (l *Local) checkPartSignature(key string, q url.Values) (Part, string, string) {
	num, err1 := strconv.Atoi(q.Get("part"))
	start, err2 := strconv.ParseInt(q.Get("start"), 10, 64)
	end, err3 := strconv.ParseInt(q.Get("end"), 10, 64)
	expires, err4 := strconv.ParseInt(q.Get("expires"), 10, 64)
	sig, err5 := hex.DecodeString(q.Get("signature"))
	p := Part{Number: num, Start: start, End: end, SHA256Base64: q.Get("sha256")}
	id := q.Get("upload_id")
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil || !hmac.Equal(sig, l.signPart(key, id, p, expires)) {
		return Part{}, "", "invalid signature"
	}
	if !l.now().Before(time.Unix(expires, 0)) {
		return Part{}, "", "link expired"
	}
	return p, id, ""
}

// setCORS lets browsers use signed URLs from any origin: the URL itself is the credential,
// and upstream's browser client reads the ETag of each part it uploads.
func setCORS(h http.Header) {
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "ETag, "+headerChecksumSHA256)
}

// servePreflight answers a browser's CORS preflight for a part URL.
func servePreflight(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", http.MethodPut)
	h.Set("Access-Control-Allow-Headers", "Content-Type, Content-Length, "+headerChecksumSHA256+", x-amz-sdk-checksum-algorithm")
	h.Set("Access-Control-Max-Age", "3600")
	w.WriteHeader(http.StatusNoContent)
}

// Errors of a part PUT, each with the status the handler answers.
var (
	errPartTooLarge = errors.New("body is longer than the part")
	errPartTooShort = errors.New("body is shorter than the part")
	errBadDigest    = errors.New("BadDigest: the SHA-256 of the body does not match the part's checksum")
)

// servePart handles the PUT of a part URL for key.
func (l *Local) servePart(w http.ResponseWriter, r *http.Request, key string) {
	p, id, msg := l.checkPartSignature(key, r.URL.Query())
	if msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	if r.ContentLength >= 0 && r.ContentLength != p.Size() {
		http.Error(w, fmt.Sprintf("Content-Length must be the part size, %d", p.Size()), http.StatusBadRequest)
		return
	}
	l.allowTransfer(w, true, p.Size())
	want := [][]byte{}
	for _, b64 := range []string{p.SHA256Base64, r.Header.Get(headerChecksumSHA256)} {
		if b64 == "" {
			continue
		}
		d, err := DecodeSHA256(b64)
		if err != nil {
			http.Error(w, "InvalidDigest: "+headerChecksumSHA256+" is not a base64 SHA-256", http.StatusBadRequest)
			return
		}
		want = append(want, d)
	}
	rec, err := l.receivePart(id, p, r.Body, want)
	switch {
	case errors.Is(err, ErrUploadNotFound):
		http.Error(w, "upload not found", http.StatusNotFound)
	case errors.Is(err, errPartTooLarge):
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
	case errors.Is(err, errPartTooShort), errors.Is(err, errBadDigest), errors.Is(err, errReadBody):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case err != nil:
		http.Error(w, "internal error", http.StatusInternalServerError)
	default:
		w.Header().Set("ETag", `"`+rec.ETag+`"`)
		w.Header().Set(headerChecksumSHA256, rec.SHA256)
		w.WriteHeader(http.StatusOK)
	}
}

// receivePart writes body into the upload's data file at p's range and records the part.
// Part PUTs share the upload's lock, which completion takes exclusively; PUTs of the same
// part take its own lock, so the last one wins whole. The old record goes first: from then
// on the range may hold any bytes, and only a body that fully arrives and matches its
// digests is recorded again.
func (l *Local) receivePart(id string, p Part, body io.Reader, want [][]byte) (partRecord, error) {
	if !validUploadID(id) {
		return partRecord{}, ErrUploadNotFound
	}
	defer l.uploads.rlock(id)()
	u := uploadNamesOf(id)
	f, err := l.root.OpenFile(u.data, os.O_WRONLY, 0)
	if isMissing(err) {
		return partRecord{}, ErrUploadNotFound
	}
	if err != nil {
		return partRecord{}, err
	}
	defer f.Close()
	defer l.uploads.lockPart(id, p.Number)()
	if err := l.root.Remove(u.part(p.Number)); err != nil && !isMissing(err) {
		return partRecord{}, err
	}
	pf := partFile{buffered: f, direct: openDirect(l.root, u.data)}
	if pf.direct != nil {
		defer pf.direct.Close()
	}
	sum, err := pf.writePart(body, p)
	if err != nil {
		return partRecord{}, err
	}
	for _, d := range want {
		if !hmac.Equal(d, sum) {
			return partRecord{}, errBadDigest
		}
	}
	if err := l.secure(f, p); err != nil {
		return partRecord{}, err
	}
	rec := partRecord{Number: p.Number, Start: p.Start, End: p.End, Boot: l.boot,
		SHA256: base64.StdEncoding.EncodeToString(sum), ETag: hex.EncodeToString(sum[:16])}
	data, err := json.Marshal(rec)
	if err != nil {
		return partRecord{}, err
	}
	if err := l.writeFileAtomic(u.dir, u.part(p.Number), data, false); err != nil {
		if isMissing(err) {
			return partRecord{}, ErrUploadNotFound // aborted or swept meanwhile
		}
		return partRecord{}, err
	}
	return rec, nil
}

// secure makes a received part safe to record. With a boot id the part is recorded
// under it and only its writeback is started: until the machine restarts the page cache
// holds the bytes whatever happens to this process, completion refuses parts recorded
// under another boot, and completion's fsync makes the whole object durable. An fsync
// per part would make every PUT wait for the disk, and with it every other part's dirty
// pages of the same file. Without a boot id each part is fsynced before it is recorded.
func (l *Local) secure(f *os.File, p Part) error {
	if l.boot == "" {
		return f.Sync()
	}
	startWriteback(f, p.Start, p.Size())
	return nil
}

// errReadBody wraps a failure to read the request body, a client problem.
var errReadBody = errors.New("reading the body failed")
