package rest

import (
	"encoding/json"
	"net/http"

	"till/resolvers"
)

// Where OpenID Connect relying parties find the provider, as the discovery use case names
// them; cmd/till mounts the two handlers below there.
const (
	OpenIDConfigurationPath = resolvers.OpenIDConfigurationPath
	JWKSPath                = resolvers.JWKSPath
)

// OpenIDConfigurationHandler serves the discovery document at OpenIDConfigurationPath. It
// needs no token and may be cached for an hour: it changes only with the configuration.
func OpenIDConfigurationHandler(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			oidcMethodNotAllowed(w)
			return
		}
		body, err := json.Marshal(r.OpenIDDiscovery())
		if err != nil {
			writeOIDCError(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		writeOIDCDocument(w, "application/json", "public, max-age=3600", body)
	})
}

// JWKSHandler serves the id-token verification keys at JWKSPath. The set may be cached for
// five minutes: a retired key stays listed far longer than that, and a relying party that
// meets a new kid refetches the set (go-oidc does), so a fresh key is picked up at once.
func JWKSHandler(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			oidcMethodNotAllowed(w)
			return
		}
		set, err := r.OIDCKeySet(req.Context())
		if err != nil {
			writeOIDCError(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		body, err := json.Marshal(set)
		if err != nil {
			writeOIDCError(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		writeOIDCDocument(w, "application/jwk-set+json", "public, max-age=300", body)
	})
}

// writeOIDCDocument sends a document anyone may read: cacheable for the given directive and
// readable cross-origin, since browser applications fetch discovery and keys themselves.
func writeOIDCDocument(w http.ResponseWriter, contentType, cacheControl string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", cacheControl)
	h.Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(body)
}

// writeOIDCError sends a {"detail": ...} error that no cache keeps, so a recovered server
// answers the next request.
func writeOIDCError(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Cache-Control", "no-store")
	writeDetail(w, status, detail)
}

// oidcMethodNotAllowed answers anything but GET and HEAD on the read-only OpenID documents.
func oidcMethodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", "GET, HEAD")
	writeOIDCError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
}
