package resolvers

import (
	"errors"
	"net/http"
	"path"

	"till/storage"
)

// DownloadHandler serves GET /downloads/{token}, the links listed with portal downloadables.
// The token is the credential, so no session is needed. It answers 403 for a tampered or
// expired link, 404 when the file is no longer granted, 410 when the seller withdrew the
// file, and otherwise counts the download and redirects (302) to a short-lived storage URL.
// Mount it where the last path segment is the token, e.g. chi's "/downloads/{token}".
func (r *Resolver) DownloadHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "Method not allowed.", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		url, err := r.download(req.Context(), path.Base(req.URL.Path))
		switch {
		case errors.Is(err, errDownloadLinkInvalid), errors.Is(err, errDownloadLinkExpired):
			http.Error(w, "This download link is invalid or has expired.", http.StatusForbidden)
		case errors.Is(err, storage.ErrNotFound):
			http.Error(w, "This file is not available to you.", http.StatusNotFound)
		case errors.Is(err, storage.ErrDownloadableGone):
			http.Error(w, "This file is no longer available.", http.StatusGone)
		case err != nil:
			r.logger.ErrorContext(req.Context(), "download failed", "error", err)
			http.Error(w, "Internal server error.", http.StatusInternalServerError)
		default:
			http.Redirect(w, req, url, http.StatusFound)
		}
	})
}
