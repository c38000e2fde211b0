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
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"

	"till/rest/fastapi"
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

// fragmentsDir is the folder, inside the operations, of the shared fragments:
// fragments/*.graphql hold only fragment definitions (`fragment OrderShape on
// Order { … }`), each shape written once and spread wherever it is rendered.
const fragmentsDir = "fragments"

// Documents maps operation names to their GraphQL source: one file per
// operation, <Name>.graphql holding exactly one operation named Name, followed
// by the shared fragments it uses, so each is a complete document on its own.
type Documents map[string]string

// LoadDocuments reads every *.graphql file at the root of fsys, checks the
// one-operation-per-file convention and appends to each document exactly the
// shared fragments (from fragments/*.graphql) it spreads, directly or through
// other fragments: GraphQL rejects a document with an unused fragment. A
// spread of a fragment defined nowhere, a fragment defined twice and a shared
// fragment no operation uses are errors.
func LoadDocuments(fsys fs.FS) (Documents, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read operations: %w", err)
	}
	shared, problems := loadFragments(fsys)
	used := map[string]bool{}
	docs := Documents{}
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
		doc, err := parseDocument(e.Name(), string(src))
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if op := doc.Operations[0]; op.Name != name {
			problems = append(problems, fmt.Errorf("%s: operation is named %q, want %q", e.Name(), op.Name, name))
			continue
		}
		frags, err := shared.usedBy(e.Name(), doc)
		for _, f := range frags {
			used[f.def.Name] = true
		}
		if err != nil {
			problems = append(problems, err)
			continue
		}
		var full strings.Builder
		full.WriteString(strings.TrimRight(string(src), "\n"))
		full.WriteString("\n")
		for _, f := range frags {
			full.WriteString("\n")
			full.WriteString(f.text)
		}
		docs[name] = full.String()
	}
	for _, f := range shared.sorted() {
		if !used[f.def.Name] {
			problems = append(problems, fmt.Errorf("%s: fragment %s is not used by any operation", f.file, f.def.Name))
		}
	}
	return docs, errors.Join(problems...)
}

// sharedFragment is one definition from fragments/*.graphql.
type sharedFragment struct {
	file string // fragments/<file>.graphql, for messages
	def  *ast.FragmentDefinition
	text string // the definition as appended to documents
}

type sharedFragments map[string]*sharedFragment

// loadFragments reads fragments/*.graphql, if the folder exists, and checks
// that they hold only fragments, with names unique across the folder, that
// spread only each other.
func loadFragments(fsys fs.FS) (sharedFragments, []error) {
	shared := sharedFragments{}
	entries, err := fs.ReadDir(fsys, fragmentsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return shared, nil
	}
	if err != nil {
		return shared, []error{fmt.Errorf("read %s: %w", fragmentsDir, err)}
	}
	var problems []error
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".graphql") {
			continue
		}
		file := path.Join(fragmentsDir, e.Name())
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", file, err))
			continue
		}
		doc, err := parser.ParseQuery(&ast.Source{Name: file, Input: string(src)})
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", file, err))
			continue
		}
		if len(doc.Operations) > 0 {
			problems = append(problems, fmt.Errorf("%s: holds an operation; %s/ holds only fragment definitions", file, fragmentsDir))
			continue
		}
		for _, def := range doc.Fragments {
			if prev := shared[def.Name]; prev != nil {
				problems = append(problems, fmt.Errorf("%s: fragment %s is already defined in %s", file, def.Name, prev.file))
				continue
			}
			var text strings.Builder
			formatter.NewFormatter(&text, formatter.WithIndent("  ")).
				FormatQueryDocument(&ast.QueryDocument{Fragments: ast.FragmentDefinitionList{def}})
			shared[def.Name] = &sharedFragment{file: file, def: def, text: text.String()}
		}
	}
	for _, f := range shared.sorted() {
		for _, name := range spreads(f.def.SelectionSet) {
			if shared[name] == nil {
				problems = append(problems, fmt.Errorf("%s: fragment %s spreads unknown fragment %q", f.file, f.def.Name, name))
			}
		}
	}
	return shared, problems
}

// usedBy lists the shared fragments doc spreads, directly or through other
// fragments, in the order of first use.
func (s sharedFragments) usedBy(file string, doc *ast.QueryDocument) ([]*sharedFragment, error) {
	var problems []error
	local := map[string]bool{}
	for _, def := range doc.Fragments {
		local[def.Name] = true
		if f := s[def.Name]; f != nil {
			problems = append(problems, fmt.Errorf("%s: fragment %s is already defined in %s", file, def.Name, f.file))
		}
	}
	var out []*sharedFragment
	seen := map[string]bool{}
	var visit func(set ast.SelectionSet, fromDoc bool)
	visit = func(set ast.SelectionSet, fromDoc bool) {
		for _, name := range spreads(set) {
			f := s[name]
			switch {
			case local[name] || seen[name]:
			case f == nil:
				if fromDoc { // a shared fragment's unknown spreads are loadFragments' to report
					problems = append(problems, fmt.Errorf("%s: unknown fragment %q: not defined in the document or in %s/", file, name, fragmentsDir))
				}
			default:
				seen[name] = true
				out = append(out, f)
				visit(f.def.SelectionSet, false)
			}
		}
	}
	for _, op := range doc.Operations {
		visit(op.SelectionSet, true)
	}
	for _, def := range doc.Fragments {
		visit(def.SelectionSet, true)
	}
	return out, errors.Join(problems...)
}

func (s sharedFragments) sorted() []*sharedFragment {
	out := make([]*sharedFragment, 0, len(s))
	for _, f := range s {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].def.Name < out[j].def.Name })
	return out
}

// spreads lists the fragment names set spreads, at any depth, in order; a
// name may repeat.
func spreads(set ast.SelectionSet) []string {
	var names []string
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			names = append(names, spreads(sel.SelectionSet)...)
		case *ast.InlineFragment:
			names = append(names, spreads(sel.SelectionSet)...)
		case *ast.FragmentSpread:
			names = append(names, sel.Name)
		}
	}
	return names
}

// parseOperation parses a document that must hold exactly one operation.
func parseOperation(file, src string) (*ast.OperationDefinition, error) {
	doc, err := parseDocument(file, src)
	if err != nil {
		return nil, err
	}
	return doc.Operations[0], nil
}

// parseDocument parses a document that must hold exactly one operation, and
// any number of fragments.
func parseDocument(file, src string) (*ast.QueryDocument, error) {
	doc, err := parser.ParseQuery(&ast.Source{Name: file, Input: src})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Operations) != 1 {
		return nil, fmt.Errorf("%s: %d operations, want exactly one", file, len(doc.Operations))
	}
	return doc, nil
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
		if err := guardProblem(r); err != nil {
			report("%v", err)
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
			if p.In == fastapi.InPath {
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
		if r.File != "" {
			continue // streams a file: no field of data is its body
		}
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
		if root, _, nested := strings.Cut(p.Variable(), "."); nested { // a field of $root (see nestParams)
			fed[root] = fed[root] || p.In == fastapi.InPath
			continue
		}
		fed[p.Variable()] = fed[p.Variable()] || p.In == fastapi.InPath || p.Required
	}
	if r.Body != nil {
		fed[r.Body.Var] = !r.Body.Optional
	}
	for name := range fed {
		if op.VariableDefinitions.ForName(name) == nil && r.File == "" {
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
