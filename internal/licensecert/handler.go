package licensecert

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// ErrNoKeys is what a JWKSHandler loader returns (possibly wrapped) for an organization that
// does not exist or has never signed a certificate; the handler answers 404.
var ErrNoKeys = errors.New("licensecert: no license signing keys")

// JWKSHandler serves GET (and HEAD) /.well-known/till/organizations/{organization_id}/license-keys.json
// with the set load returns. It reads the organization id from the last two path segments,
// so it works wherever it is mounted. The set is public and cacheable for five minutes; a
// cached set may lack a key created since, so a verifier that meets an unknown kid should
// refetch once before rejecting the certificate.
func JWKSHandler(load func(ctx context.Context, orgID uuid.UUID) (KeySet, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		orgID, ok := organizationFromPath(r.URL.Path)
		if !ok {
			writeDetail(w, http.StatusNotFound, "Not Found")
			return
		}
		set, err := load(r.Context(), orgID)
		switch {
		case errors.Is(err, ErrNoKeys):
			writeDetail(w, http.StatusNotFound, "Not Found")
			return
		case err != nil:
			writeDetail(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		body, err := json.Marshal(set)
		if err != nil {
			writeDetail(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/jwk-set+json")
		h.Set("Cache-Control", "public, max-age=300")
		// Public keys are public: browser-based applications may fetch them from any origin.
		h.Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write(body)
	})
}

// organizationFromPath accepts …/organizations/{canonical uuid}/license-keys.json.
func organizationFromPath(path string) (uuid.UUID, bool) {
	seg := strings.Split(strings.TrimSuffix(path, "/"), "/")
	n := len(seg)
	if n < 3 || seg[n-1] != "license-keys.json" || seg[n-3] != "organizations" {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(seg[n-2])
	// uuid.Parse also takes braces, urn: and hyphen-less forms; one spelling per resource.
	if err != nil || !strings.EqualFold(id.String(), seg[n-2]) {
		return uuid.Nil, false
	}
	return id, true
}

// writeDetail answers with an error body shaped as the API's {"detail": ...}; errors are not
// cached, so a first key shows up as soon as it exists.
func writeDetail(w http.ResponseWriter, status int, detail string) {
	body, _ := json.Marshal(map[string]string{"detail": detail})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
