// Package graphiql serves the GraphiQL IDE from files embedded in the binary, so a browser
// on a self-hosted Till works offline and loads nothing from a third-party CDN. The files
// are the npm releases gqlgen's playground pins (see assets/NOTICE); their integrity hashes
// are computed from the embedded bytes at start.
package graphiql

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/99designs/gqlgen/graphql/playground"
)

//go:embed assets
var assets embed.FS

// Handler serves the IDE page at any path not under assetsPrefix, and the embedded files
// under assetsPrefix (e.g. "/graphql/assets/"). endpoint is the GraphQL URL the IDE queries;
// its subscriptions use the websocket at the same URL. headers, when not nil, gives the
// headers the IDE sends with every request of the page's visitor (a signed-in browser's
// CSRF token), never shown in its editor.
func Handler(endpoint, assetsPrefix string, headers func(*http.Request) map[string]string) http.Handler {
	files, _ := fs.Sub(assets, "assets")
	url := func(name string) string { return path.Join(assetsPrefix, name) }
	sri := func(name string) string {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			panic("graphiql: missing embedded asset " + name)
		}
		sum := sha256.Sum256(b)
		return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
	}
	options := []playground.GraphiqlConfigOption{
		playground.WithGraphiqlVersion(url("graphiql.min.js"), url("graphiql.min.css"),
			sri("graphiql.min.js"), sri("graphiql.min.css")),
		playground.WithGraphiqlReactVersion(url("react.production.min.js"), url("react-dom.production.min.js"),
			sri("react.production.min.js"), sri("react-dom.production.min.js")),
		playground.WithGraphiqlPluginExplorerVersion(url("plugin-explorer.umd.js"), url("plugin-explorer.css"),
			sri("plugin-explorer.umd.js"), sri("plugin-explorer.css")),
		playground.WithStoragePrefix("till:"),
	}
	page := playground.Handler("Till GraphQL", endpoint, options...)
	static := http.StripPrefix(strings.TrimSuffix(assetsPrefix, "/"), http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, assetsPrefix) {
			w.Header().Set("Cache-Control", "public, max-age=86400")
			static.ServeHTTP(w, r)
			return
		}
		if headers != nil {
			if h := headers(r); len(h) > 0 {
				w.Header().Set("Cache-Control", "no-store") // the page holds the visitor's token
				playground.Handler("Till GraphQL", endpoint,
					append(options, playground.WithGraphiqlFetcherHeaders(h))...).ServeHTTP(w, r)
				return
			}
		}
		page.ServeHTTP(w, r)
	})
}
