package ratelimit

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

func TestRetryAfterSeconds(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want int
	}{
		{time.Nanosecond, 1},
		{time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Nanosecond, 2},
		{59*time.Second + 500*time.Millisecond, 60},
		{time.Minute, 60},
		{0, 1},
		{-time.Second, 1},
	}
	for _, tt := range tests {
		if got := RetryAfterSeconds(tt.in); got != tt.want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestWriteTooManyRequests(t *testing.T) {
	tests := []struct {
		wait       time.Duration
		retryAfter string
		body       string
	}{
		{time.Minute, "60", `{"error":"TooManyRequests","detail":"Rate limit exceeded. Retry in 60 seconds."}`},
		{300 * time.Millisecond, "1", `{"error":"TooManyRequests","detail":"Rate limit exceeded. Retry in 1 second."}`},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		WriteTooManyRequests(w, tt.wait)
		if w.Code != 429 || w.Header().Get("Retry-After") != tt.retryAfter ||
			w.Header().Get("Content-Type") != "application/json" || w.Body.String() != tt.body {
			t.Errorf("wait %s: got %d Retry-After=%q Content-Type=%q %s",
				tt.wait, w.Code, w.Header().Get("Retry-After"), w.Header().Get("Content-Type"), w.Body)
		}
		if got := w.Header().Get("Content-Length"); got != strconv.Itoa(len(tt.body)) {
			t.Errorf("Content-Length %s, want %d", got, len(tt.body))
		}
	}
}
