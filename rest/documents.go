package rest

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// The persisted operations ship inside the binary, so a deployment cannot
// serve a /v1 route whose document is missing or stale.
//
//go:embed operations
var embedded embed.FS

// Operations returns the documents embedded from rest/operations.
func Operations() fs.FS {
	sub, err := fs.Sub(embedded, "operations")
	if err != nil {
		panic(err) // the directory is part of this package
	}
	return sub
}

// Documents maps operation names to their GraphQL source: one file per
// operation, <Name>.graphql holding exactly one operation named Name.
type Documents map[string]string

// LoadDocuments reads every *.graphql file at the root of fsys and checks the
// one-operation-per-file convention.
func LoadDocuments(fsys fs.FS) (Documents, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read operations: %w", err)
	}
	docs := Documents{}
	var problems []error
	for _, e := range entries {
		name, isDoc := strings.CutSuffix(e.Name(), ".graphql")
		if e.IsDir() || !isDoc {
			continue
		}
		src, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", e.Name(), err))
			continue
		}
		op, err := parseOperation(e.Name(), string(src))
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if op.Name != name {
			problems = append(problems, fmt.Errorf("%s: operation is named %q, want %q", e.Name(), op.Name, name))
			continue
		}
		docs[name] = string(src)
	}
	return docs, errors.Join(problems...)
}

// parseOperation parses a document that must hold exactly one operation.
func parseOperation(file, src string) (*ast.OperationDefinition, error) {
	doc, err := parser.ParseQuery(&ast.Source{Name: file, Input: src})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Operations) != 1 {
		return nil, fmt.Errorf("%s: %d operations, want exactly one", file, len(doc.Operations))
	}
	return doc.Operations[0], nil
}

// Validate checks every document against the executable schema.
func (d Documents) Validate(schema *ast.Schema) error {
	names := make([]string, 0, len(d))
	for name := range d {
		names = append(names, name)
	}
	sort.Strings(names)
	var problems []error
	for _, name := range names {
		if _, errs := gqlparser.LoadQuery(schema, d[name]); len(errs) > 0 {
			problems = append(problems, fmt.Errorf("%s.graphql: %w", name, errs))
		}
	}
	return errors.Join(problems...)
}

// Validate checks the embedded documents against the executable schema; the
// server calls it at startup and a test calls it in CI.
func Validate(schema *ast.Schema) error {
	docs, err := LoadDocuments(Operations())
	if err != nil {
		return err
	}
	return docs.Validate(schema)
}

// pathParamPattern finds {name} and {name:regexp} segments of a chi pattern.
func pathParamNames(pattern string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`\{([^}:]+)(?::[^}]*)?\}`).FindAllStringSubmatch(pattern, -1) {
		names = append(names, m[1])
	}
	return names
}

// checkRoutes catches table mistakes at startup: unknown documents,
// variables the operation does not declare, required variables nothing
// feeds, a response field the operation does not select, path parameters
// that do not match the pattern, duplicate routes.
func checkRoutes(routes []Route, docs Documents) error {
	var problems []error
	seen := map[string]bool{}
	for _, r := range routes {
		id := r.Method + " " + r.Path
		report := func(format string, args ...any) {
			problems = append(problems, fmt.Errorf("%s: %s", id, fmt.Sprintf(format, args...)))
		}
		if seen[id] {
			report("duplicate route")
		}
		seen[id] = true
		if !strings.HasPrefix(r.Path, "/") || path.Clean(r.Path) == "." {
			report("path must start with /")
		}
		switch r.status() {
		case http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNoContent:
		default:
			report("unsupported success status %d", r.Status)
		}
		declaredPath := map[string]bool{}
		for _, p := range r.Params {
			if p.In == InPath {
				declaredPath[p.Name] = true
			}
		}
		for _, name := range pathParamNames(r.Path) {
			if !declaredPath[name] {
				report("path parameter {%s} has no Param", name)
			}
			delete(declaredPath, name)
		}
		for name := range declaredPath {
			report("Param %q is not in the path pattern", name)
		}
		if r.Handler != nil {
			continue
		}
		src, found := docs[r.Operation]
		if !found {
			report("no document %s.graphql", r.Operation)
			continue
		}
		op, err := parseOperation(r.Operation+".graphql", src)
		if err != nil {
			report("%v", err)
			continue
		}
		checkVariables(r, op, report)
		if r.Field == "" && r.status() != http.StatusAccepted && r.status() != http.StatusNoContent {
			report("no response Field")
		} else if r.Field != "" && !selects(op, r.Field) {
			report("operation %s does not select %q", op.Name, r.Field)
		}
	}
	return errors.Join(problems...)
}

func checkVariables(r Route, op *ast.OperationDefinition, report func(string, ...any)) {
	fed := map[string]bool{} // variable -> always supplied
	for _, p := range r.Params {
		fed[p.gqlName()] = fed[p.gqlName()] || p.In == InPath
	}
	if r.Body != nil {
		fed[r.Body.Var] = !r.Body.Optional
	}
	for name := range fed {
		if op.VariableDefinitions.ForName(name) == nil {
			report("operation %s does not declare $%s", op.Name, name)
		}
	}
	for _, v := range op.VariableDefinitions {
		if v.Type.NonNull && v.DefaultValue == nil && !fed[v.Variable] {
			report("required $%s of %s is not always supplied", v.Variable, op.Name)
		}
	}
}

// selects reports whether the operation's top level selects field (by alias
// or name), the key the response body is taken from; for a dotted field, its
// first segment.
func selects(op *ast.OperationDefinition, field string) bool {
	field, _, _ = strings.Cut(field, ".")
	for _, sel := range op.SelectionSet {
		if f, isField := sel.(*ast.Field); isField && (f.Alias == field || (f.Alias == "" && f.Name == field)) {
			return true
		}
	}
	return false
}
