package ratelimit

import (
	"net/http"
	"strconv"
	"time"
)

// RetryAfterSeconds converts a wait into the whole seconds of a Retry-After
// header, rounding up so a client that waits exactly that long is let in,
// and never below 1 so "0" cannot invite an immediate retry.
func RetryAfterSeconds(d time.Duration) int {
	secs := int((d + time.Second - 1) / time.Second)
	return max(secs, 1)
}

// WriteTooManyRequests writes Till's 429 in the {"error","detail"} envelope
// of its other errors, with Retry-After in whole seconds. Upstream publishes
// neither body nor headers for its 429 (contract §1.10), so this shape is
// Till's own and kept stable.
func WriteTooManyRequests(w http.ResponseWriter, retryAfter time.Duration) {
	secs := RetryAfterSeconds(retryAfter)
	body := `{"error":"TooManyRequests","detail":"Rate limit exceeded. Retry in ` +
		strconv.Itoa(secs) + ` ` + plural(secs, "second", "seconds") + `."}`
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(secs))
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(body))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
