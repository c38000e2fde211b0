package rest_test

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"till/rest"
	"till/storage/storagetest"
)

// TestMain stops the test database server after the run and, when the whole suite ran and
// passed, fails it if some /v1 route never answered a success status in a real-handler test:
// a new row in rest.Routes() needs a test that reaches it.
func TestMain(m *testing.M) {
	code := storagetest.Main(m)
	if code == 0 && storagetest.WholeSuite() {
		if missing := uncoveredRoutes(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: these /v1 routes have no test that reaches their success status through the real handler:\n\t%s\n",
				strings.Join(missing, "\n\t"))
			code = 1
		}
	}
	os.Exit(code)
}

// routeCoverage records which routes answered a success status through the real handler.
var routeCoverage = struct {
	sync.Mutex
	hit map[string]bool
}{hit: map[string]bool{}}

// routeKey names a route as "METHOD /path/pattern".
func routeKey(method, pattern string) string { return method + " " + pattern }

// patternRegexp turns a chi pattern into an anchored regexp over the escaped path.
func patternRegexp(pattern string) *regexp.Regexp {
	quoted := regexp.QuoteMeta(pattern)
	return regexp.MustCompile(`^` + regexp.MustCompile(`\\\{[^}]*\\\}`).ReplaceAllString(quoted, `[^/]+`) + `$`)
}

// recordCoverage marks the route a successful request reached.
func recordCoverage(req *http.Request, status int) {
	if status < 200 || status > 299 {
		return
	}
	path := req.URL.EscapedPath()
	if strings.HasPrefix(path, "/api/v1/") {
		path = strings.TrimPrefix(path, "/api")
	}
	method := req.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	best := ""
	for _, route := range rest.Routes() { // a static segment beats a parameter, as the router matches
		if route.Method == method && patternRegexp(route.Path).MatchString(path) &&
			(best == "" || strings.Count(route.Path, "{") < strings.Count(best, "{")) {
			best = route.Path
		}
	}
	if best != "" {
		routeCoverage.Lock()
		routeCoverage.hit[routeKey(method, best)] = true
		routeCoverage.Unlock()
	}
}

// uncoveredRoutes lists the routes no successful request reached, sorted.
func uncoveredRoutes() []string {
	routeCoverage.Lock()
	defer routeCoverage.Unlock()
	var missing []string
	for _, route := range rest.Routes() {
		if key := routeKey(route.Method, route.Path); !routeCoverage.hit[key] {
			missing = append(missing, key)
		}
	}
	sort.Strings(missing)
	return missing
}
