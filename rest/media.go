package rest

import (
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"till/resolvers"
)

// MediaPath is where public media links point: MediaPath + "<file id>/<name>", the
// public_url of product images and avatars.
const MediaPath = resolvers.MediaPath

// MediaHandler serves public media links without a token, as upstream serves product
// images from a public bucket: an uploaded, enabled, live product image or avatar redirects
// to a short-lived storage URL; anything else is 404. Only the id is read, so a link keeps
// working after the file is renamed. The redirect may be cached for five minutes, well
// inside the storage URL's life, so browsers and CDNs do not ask for every view.
func MediaHandler(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeJSON(w, http.StatusMethodNotAllowed, []byte(`{"detail":"Method Not Allowed"}`))
			return
		}
		rest, found := strings.CutPrefix(req.URL.Path, MediaPath)
		raw, _, _ := strings.Cut(rest, "/")
		id, err := uuid.Parse(raw)
		if !found || err != nil || len(raw) != 36 {
			writeJSON(w, http.StatusNotFound, []byte(`{"detail":"Not Found"}`))
			return
		}
		target, err := r.PublicMediaURL(req.Context(), id)
		var rerr *resolvers.Error
		switch {
		case errors.As(err, &rerr) && rerr.Code == resolvers.CodeNotFound:
			writeJSON(w, http.StatusNotFound, []byte(`{"detail":"Not Found"}`))
			return
		case err != nil:
			r.Logger().ErrorContext(req.Context(), "media: sign URL", "file_id", id, "error", err)
			writeInternal(w)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		http.Redirect(w, req, target, http.StatusFound)
	})
}
