package resolvers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/vektah/gqlparser/v2/formatter"
)

// SchemaSDLPath is where the schema's SDL is served, next to the endpoint it describes.
const SchemaSDLPath = "/graphql/schema.graphql"

// SchemaHandler serves the executable schema as SDL, descriptions included, for code
// generators and readers who want the whole API on one page without running an
// introspection query. The schema is fixed for the life of the process, so the text and its
// ETag are computed once and a client revalidates with If-None-Match. It needs no
// credentials: the schema is the same for every caller and says nothing about their data.
func (r *Resolver) SchemaHandler() http.Handler {
	var sdl bytes.Buffer
	formatter.NewFormatter(&sdl, formatter.WithIndent("  ")).FormatSchema(r.Schema().Schema())
	sum := sha256.Sum256(sdl.Bytes())
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	body := sdl.Bytes()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("ETag", etag)
		h.Set("Cache-Control", "public, no-cache")
		// ServeContent answers If-None-Match with 304 against the ETag set above, and HEAD.
		http.ServeContent(w, req, "schema.graphql", time.Time{}, bytes.NewReader(body))
	})
}
