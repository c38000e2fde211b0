package rest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The global middleware mirrors upstream's ASGI stack, which runs before
// routing and authentication; each piece is tiny, and their order in
// NewRouter is part of the contract.

// DefaultVersion is the Polar-Version assumed when the header is absent.
const DefaultVersion = "2026-04"

// MaxBodySize is upstream's API_MAX_REQUEST_BODY_SIZE (10 MiB).
const MaxBodySize = 10 * 1024 * 1024

// cacheControl adds "Cache-Control: private, no-store" to every response
// that does not set its own.
func cacheControl(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&headerHook{ResponseWriter: w, before: func(h http.Header) {
			if h.Get("Cache-Control") == "" {
				h.Set("Cache-Control", "private, no-store")
			}
		}}, r)
	})
}

// headerHook runs before once, just before the status line is written.
type headerHook struct {
	http.ResponseWriter
	before func(http.Header)
	done   bool
}

// WriteHeader runs the hook before the status line goes out.
func (h *headerHook) WriteHeader(status int) {
	if !h.done {
		h.done = true
		h.before(h.Header())
	}
	h.ResponseWriter.WriteHeader(status)
}

// Write sends an implicit 200 through WriteHeader first, so the hook runs.
func (h *headerHook) Write(b []byte) (int, error) {
	if !h.done {
		h.WriteHeader(http.StatusOK)
	}
	return h.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (h *headerHook) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// rewriteAPIPrefix serves /api/v1/... as /v1/... (PathRewriteMiddleware).
func rewriteAPIPrefix(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "/api/v1" || strings.HasPrefix(p, "/api/v1/") {
			u := *r.URL
			u.Path = strings.TrimPrefix(u.Path, "/api")
			u.RawPath = strings.TrimPrefix(u.RawPath, "/api")
			r2 := r.Clone(r.Context())
			r2.URL = &u
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

// versionCheck resolves Polar-Version (absent: DefaultVersion) and echoes it
// on every response; an unsupported or malformed value is 404 Not Found
// before routing and authentication (APIVersionMiddleware), and that answer
// carries no Polar-Version since none was resolved.
func versionCheck(versions []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		version := DefaultVersion
		if values := r.Header.Values("Polar-Version"); len(values) > 0 {
			version = values[0]
		}
		if !slices.Contains(versions, version) {
			writeDetail(w, http.StatusNotFound, "Not Found")
			return
		}
		w.Header().Set("Polar-Version", version)
		next.ServeHTTP(w, r)
	})
}

// sizeGuard is MaxBodySizeMiddleware: POST, PUT and PATCH need a
// Content-Length (411, chunked bodies included), which may not exceed
// MaxBodySize (413); the body is also capped while it is read.
func sizeGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			values := r.Header.Values("Content-Length")
			if len(values) == 0 || len(r.TransferEncoding) > 0 {
				writeError(w, http.StatusLengthRequired, "LengthRequired", "A Content-Length header is required.")
				return
			}
			if n, err := strconv.ParseInt(strings.TrimSpace(values[0]), 10, 64); err == nil && n > MaxBodySize {
				writeBodyTooLarge(w)
				return
			}
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodySize)
		}
		next.ServeHTTP(w, r)
	})
}

func writeBodyTooLarge(w http.ResponseWriter) {
	writeError(w, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge",
		"Request body exceeded the maximum allowed size of "+strconv.Itoa(MaxBodySize)+" bytes.")
}
