// Package layering states Till's dependency rule as data and checks an import graph against
// it, so that a forbidden import fails a test naming the importer, the import and the rule,
// instead of surfacing later as an import cycle or as SQL reachable from /v1.
//
// The rule, lowest layer first: storage ← graph ← resolvers ← rest ← cmd.
//
//   - A layer imports no layer above it: generated graph never imports resolvers, and only
//     cmd imports rest.
//   - Nothing imports cmd (bench, a consumer of every layer, counts as cmd).
//   - storage (with storagetest and migrations) imports no other layer, and of internal/
//     only self-contained helpers: those that import no project package themselves.
//   - rest never imports storage: it sees use cases and GraphQL only.
//   - Leaf helpers under internal/ import no layer above storage (a helper may read
//     storage's records; storage may use a self-contained helper, so no cycle can form).
//   - The request validator, rest/fastapi (with its own sub-packages), imports no layer at
//     all: it is FastAPI's and pydantic's behaviour, not Till's.
//   - Every package of the module sits in a layer or under internal/, so a new top-level
//     directory has to be placed here before it builds green.
//
// The rule reads only the imports of a package's non-test files, the ones that end up in
// the binary. Test files are exempt: an in-package test cannot form a cycle the compiler
// would accept, and external tests (package x_test) are clients of their package that may
// drive it through a higher layer (resolvers' tests compare GraphQL with /v1) or seed rows
// through a lower one (rest's tests use storagetest and storage).
//
// The check is a package of its own, rather than a lone test file, so that each rule is
// proven to fire on a small synthetic graph while the module's real graph stays clean; the
// package imports nothing of the project, so it is itself inside the rule.
package layering

import (
	"fmt"
	"slices"
	"strings"
)

// Package is one package of the graph, as `go list -json` describes it.
type Package struct {
	ImportPath string
	Imports    []string // imports of its non-test files
}

// Violation is one import that breaks the rule (Imported is empty for a package that sits
// in no layer).
type Violation struct {
	Importer string
	Imported string
	Rule     string
}

// String names the offending import and the rule it breaks.
func (v Violation) String() string {
	if v.Imported == "" {
		return v.Importer + ": " + v.Rule
	}
	return v.Importer + " imports " + v.Imported + ": " + v.Rule
}

// layer is where a package sits; layers are ordered lowest first, helper and unplaced
// stand outside the order.
type layer int

const (
	unplaced layer = iota
	storage
	graph
	resolvers
	rest
	command
	helper
)

var layerNames = map[layer]string{storage: "storage", graph: "graph", resolvers: "resolvers", rest: "rest", command: "cmd"}

// validator is the request validator's path under the module.
const validator = "rest/fastapi"

// homes maps a module's top-level directory to its layer.
var homes = map[string]layer{
	"storage":    storage,
	"migrations": storage,
	"graph":      graph,
	"resolvers":  resolvers,
	"rest":       rest,
	"cmd":        command,
	"bench":      command,
	"internal":   helper,
}

// layerOf places path, a package of module.
func layerOf(module, path string) layer {
	rel, found := strings.CutPrefix(path, module+"/")
	if !found {
		return unplaced
	}
	top, _, _ := strings.Cut(rel, "/")
	return homes[top]
}

// within reports whether path is module's package rel or one below it.
func within(module, path, rel string) bool {
	p := module + "/" + rel
	return path == p || strings.HasPrefix(path, p+"/")
}

// Check returns every import among pkgs, the packages of module, that breaks the rule,
// ordered by importer and import.
func Check(module string, pkgs []Package) []Violation {
	selfContained := map[string]bool{}
	for _, p := range pkgs {
		selfContained[p.ImportPath] = !slices.ContainsFunc(p.Imports, func(imp string) bool {
			return strings.HasPrefix(imp, module+"/")
		})
	}
	var out []Violation
	for _, p := range pkgs {
		from := layerOf(module, p.ImportPath)
		if from == unplaced {
			out = append(out, Violation{Importer: p.ImportPath, Rule: "every package sits in a layer (storage, graph, resolvers, rest, cmd) or under internal/"})
			continue
		}
		for _, imp := range p.Imports {
			to := layerOf(module, imp)
			if to == unplaced {
				continue // the standard library, other modules, or a package reported itself
			}
			if rule := broken(module, p.ImportPath, imp, from, to, selfContained[imp]); rule != "" {
				out = append(out, Violation{Importer: p.ImportPath, Imported: imp, Rule: rule})
			}
		}
	}
	slices.SortFunc(out, func(a, b Violation) int {
		return strings.Compare(a.Importer+" "+a.Imported, b.Importer+" "+b.Imported)
	})
	return out
}

// broken names the first rule the import of imp by importer breaks, or "".
func broken(module, importer, imp string, from, to layer, selfContained bool) string {
	switch {
	case to == command:
		return "nothing imports cmd"
	case within(module, importer, validator) && to != helper && !within(module, imp, validator):
		return "the request validator (" + validator + ") imports no layer, only internal/ helpers"
	case from == storage && to != storage && !(to == helper && selfContained):
		return "storage imports no other project package, and of internal/ only self-contained helpers (which import no project package)"
	case from == rest && to == storage:
		return "rest never imports storage: it sees use cases and GraphQL only"
	case from == helper && to != helper && to != storage:
		return "helpers under internal/ import no layer above storage"
	case from != helper && to != helper && to > from:
		return fmt.Sprintf("%s imports no layer above it (storage ← graph ← resolvers ← rest ← cmd), and %s is above",
			layerNames[from], layerNames[to])
	}
	return ""
}
