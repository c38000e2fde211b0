package main

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"till/resolvers"
)

// credentialPrefixes are paths whose next segment is a bearer credential, named as its
// route names it. They are redacted even when no route matched (a stray trailing slash,
// an extra segment), where no route parameter says what the segment is.
var credentialPrefixes = []struct{ prefix, name string }{
	{resolvers.DownloadsPath, "token"},
	{"/v1/checkouts/client/", "client_secret"},
	{"/api/v1/checkouts/client/", "client_secret"},
}

// isCredentialParam reports whether a route parameter holds a credential: routes name such
// parameters for what they are ({token}, {client_secret}, {invitation_token}).
func isCredentialParam(name string) bool {
	name = strings.ToLower(name)
	return strings.Contains(name, "token") || strings.Contains(name, "secret")
}

// loggedPath is the request's path as the access log shows it: every path segment holding
// a credential is replaced by its parameter's name in braces (/downloads/{token}), since a
// log line must not hand a working link to whoever reads the logs. The query is never
// logged: it carries link signatures, OAuth2 codes and states.
func loggedPath(r *http.Request) string {
	segs := strings.Split(r.URL.EscapedPath(), "/")
	secret := map[string]string{} // value -> parameter name
	if rctx := chi.RouteContext(r.Context()); rctx != nil {
		for i, k := range rctx.URLParams.Keys {
			if v := rctx.URLParams.Values[i]; v != "" && isCredentialParam(k) {
				secret[v] = k
			}
		}
	}
	for i, s := range segs {
		plain, err := url.PathUnescape(s)
		if err != nil {
			plain = s
		}
		if name, ok := secret[s]; ok {
			segs[i] = "{" + name + "}"
		} else if name, ok := secret[plain]; ok {
			segs[i] = "{" + name + "}"
		}
	}
	path := strings.Join(segs, "/")
	for _, c := range credentialPrefixes {
		if rest, ok := strings.CutPrefix(path, c.prefix); ok && rest != "" && !strings.HasPrefix(rest, "{") {
			_, after, _ := strings.Cut(rest, "/")
			path = c.prefix + "{" + c.name + "}"
			if after != "" || strings.Contains(rest, "/") {
				path += "/" + after
			}
		}
	}
	return path
}
