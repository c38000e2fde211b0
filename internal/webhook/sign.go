package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"time"
)

// UserAgent is the User-Agent of every delivery. It is upstream's string,
// because receivers filter or log on it.
const UserAgent = "polar.sh webhooks"

// Standard Webhooks header names, as the specification spells them.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Sign returns the webhook-signature value "v1,<base64 HMAC-SHA256>" for one
// attempt. The signed content is "<msgID>.<unix seconds of at>.<body>" over
// the exact body bytes sent.
//
// The HMAC key is the UTF-8 bytes of the whole secret, "whsec_" included.
// That is not what the Standard Webhooks libraries do with a "whsec_" secret
// (they strip the prefix and base64-decode the rest), but it is what Polar's
// receivers expect: upstream base64-encodes the stored secret before handing
// it to the library, and its documentation tells consumers to do the same.
func Sign(secret, msgID string, at time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	prefix := make([]byte, 0, len(msgID)+22)
	prefix = append(prefix, msgID...)
	prefix = append(prefix, '.')
	prefix = strconv.AppendInt(prefix, at.Unix(), 10)
	prefix = append(prefix, '.')
	mac.Write(prefix)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Headers returns the request headers of one delivery attempt: the Standard
// Webhooks triple signed for at, plus upstream's Content-Type and
// User-Agent. at is the attempt time, so a retry carries a fresh timestamp
// and signature while msgID stays the same.
func Headers(secret, msgID string, at time.Time, body []byte) http.Header {
	h := make(http.Header, 5)
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, Sign(secret, msgID, at, body))
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	return h
}
