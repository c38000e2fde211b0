package main

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// The CORS answers of /graphql, /v1 and the sign-in endpoints under /auth. Listed origins
// are told credentials are allowed, as upstream tells its dashboard, so a page whose fetch
// uses credentials: "include" works: it may then sign in and use the browser session on
// /graphql, sending the session's CSRF token (which pages of other origins cannot read).
const (
	corsAllowMethods = "GET, HEAD, POST, PUT, PATCH, DELETE"
	// corsAllowHeaders are the request headers a page may send: the bearer token, the JSON
	// bodies and Accept (application/graphql-response+json) of GraphQL and /v1, the API
	// version, and a request id for correlating logs. The upstream SDK sends no others from
	// a browser (it leaves User-Agent out there); a dashboard's browser session adds its CSRF
	// token.
	corsAllowHeaders = "Accept, Accept-Language, Authorization, Content-Language, Content-Type, Polar-Version, X-CSRF-Token, X-Request-Id"
	// corsExposeHeaders are the response headers a page may read beyond the safelisted
	// ones: the SDK's retry waits for Retry-After, OAuth2 errors explain themselves in
	// WWW-Authenticate, invoice and export downloads name their file in
	// Content-Disposition.
	corsExposeHeaders = "Content-Disposition, Polar-Version, Retry-After, WWW-Authenticate, X-Request-Id"
	// corsMaxAge is how long, in seconds, a browser may reuse a preflight: upstream's 600.
	corsMaxAge = "600"
)

// newCORS is the cross-origin policy of /graphql and /v1 (also under /api/v1), after
// upstream's CORSMatcherMiddleware (server/polar/app.py, configure_cors): the first rule
// that matches a request's Origin answers it.
//
//  1. An origin listed in TILL_CORS_ORIGINS may call every path, credentials allowed, its
//     own origin echoed. Upstream's rule for its own dashboard (settings.CORS_ORIGINS).
//  2. Any other origin may call the routes pages on sellers' own sites call (see
//     anyOriginPath), answered "*" without credentials. A token is never ambient there (/v1 reads no
//     cookie), so such a page can do nothing a script outside a browser could not.
//  3. Otherwise no CORS header is added and the browser keeps the answer from the page.
//
// Where Till differs: upstream's second rule matches every path, so any page may call its
// whole API with a token it holds. Till opens only the routes a seller's page needs with no
// set-up (public license keys, customer portal, checkout client, OAuth2 for public
// clients) and leaves /graphql and the organization routes of /v1 to the origins the
// operator lists, so that which browser apps drive the organization API stays the
// operator's choice. Preflights are answered 204 with no body (upstream: 200 "OK"), and a
// preflight asking for a header or method outside the lists still gets the lists
// (upstream: 400 "Disallowed CORS headers"), which the browser refuses the same way.
//
// Responses on these paths carry Vary: Origin whenever the answer depends on the origin,
// so a shared cache never hands one origin's answer to another.
func newCORS(origins []string) func(http.Handler) http.Handler {
	allowed := make(map[string]bool, len(origins))
	for _, o := range origins {
		allowed[o] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			path := r.URL.Path
			if p, ok := strings.CutPrefix(path, "/api"); ok && underPath(p, "/v1") {
				path = p
			}
			if !underPath(path, "/v1") && !underPath(path, "/graphql") && !underPath(path, "/auth") {
				next.ServeHTTP(w, r)
				return
			}
			anyOrigin := anyOriginPath(path)
			if !anyOrigin && len(allowed) == 0 {
				next.ServeHTTP(w, r)
				return
			}
			h := w.Header()
			h.Add("Vary", "Origin")
			origin := r.Header.Get("Origin")
			switch {
			case origin == "":
				next.ServeHTTP(w, r)
				return
			case allowed[origin]:
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Credentials", "true")
			case anyOrigin:
				h.Set("Access-Control-Allow-Origin", "*")
			default:
				next.ServeHTTP(w, r)
				return
			}
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", corsAllowMethods)
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", corsMaxAge)
				w.WriteHeader(http.StatusNoContent)
				return
			}
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
			next.ServeHTTP(w, r)
		})
	}
}

// underPath reports whether path is root or below it.
func underPath(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// anyOriginPath reports whether any origin may call path (with /api already cut): the
// routes upstream's own browser clients call from pages on sellers' sites, and that
// answer only a token the page was handed, or none.
//   - /v1/customer-portal/: the public license-key routes (validate, activate,
//     deactivate: desktop and web apps checking their own key, no token) and the customer
//     portal behind a customer or member session token, which sellers embed in their sites.
//   - /v1/checkouts/client/: the checkout a buyer completes on the seller's page (embedded
//     checkout), by its client secret.
//   - /v1/oauth2/token, /v1/oauth2/userinfo, /v1/oauth2/revoke: a single-page app
//     registered as a public OAuth2 client (PKCE, no secret) signs users in from its own
//     origin; discovery and the signing keys are already open to any origin.
func anyOriginPath(path string) bool {
	switch path {
	case "/v1/oauth2/token", "/v1/oauth2/userinfo", "/v1/oauth2/revoke":
		return true
	}
	return strings.HasPrefix(path, "/v1/customer-portal/") || strings.HasPrefix(path, "/v1/checkouts/client/")
}

// parseCORSOrigins checks and normalises TILL_CORS_ORIGINS. Each entry must be an origin
// exactly as a browser sends it in the Origin header, scheme://host[:port], because it is
// compared with that header byte for byte: a path, a wildcard or "null" would never match
// or, worse, match more than meant, so they stop the server instead. Host names are
// lowercased and internationalised names turned into their ASCII form, and a default port
// dropped, as browsers do.
func parseCORSOrigins(entries []string) ([]string, error) {
	var origins []string
	seen := map[string]bool{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		o, err := parseOrigin(e)
		if err != nil {
			return nil, fmt.Errorf("TILL_CORS_ORIGINS: %q is not an origin: %w (write scheme://host[:port], e.g. https://dash.example.com)", e, err)
		}
		if !seen[o] {
			seen[o] = true
			origins = append(origins, o)
		}
	}
	return origins, nil
}

// parseOrigin returns s serialised as a browser serialises an origin.
func parseOrigin(s string) (string, error) {
	if strings.Contains(s, "*") {
		return "", fmt.Errorf("wildcards are not allowed; list each origin")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("it does not parse")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("the scheme must be http or https")
	case u.Opaque != "" || u.Host == "":
		return "", fmt.Errorf("it has no host")
	case u.User != nil:
		return "", fmt.Errorf("it has user information")
	case u.Path != "" || u.RawPath != "":
		return "", fmt.Errorf("it has a path")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return "", fmt.Errorf("it has a query or fragment")
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		if ip.To4() == nil {
			host = "[" + ip.String() + "]"
		}
	} else if host, err = idna.Lookup.ToASCII(host); err != nil || host == "" {
		return "", fmt.Errorf("the host is not a valid name")
	}
	if port := u.Port(); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("the port is not a number from 1 to 65535")
		}
		if !(scheme == "http" && n == 80 || scheme == "https" && n == 443) {
			host += ":" + strconv.Itoa(n)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("the port is empty")
	}
	return scheme + "://" + host, nil
}
