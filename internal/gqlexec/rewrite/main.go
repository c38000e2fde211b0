// Command rewrite adjusts gqlgen's generated executor in the given directory's
// *.generated.go files: it replaces every call of graphql.MarshalSliceConcurrently with
// gqlexec.MarshalSlice and every call of graphql.CollectFields with gqlexec.CollectFields
// (importing the package), and gives object types a writer for selections of plain fields
// (plain.go). `go generate` runs it after gqlgen, so the
// generated code stays reproducible byte for byte.
//
//	go run ./internal/gqlexec/rewrite graph
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
)

const (
	from       = "graphql.MarshalSliceConcurrently("
	to         = "gqlexec.MarshalSlice("
	importPath = `"till/internal/gqlexec"`
	// Every call of CollectFields in the generated executor is in an object's executor,
	// where ctx is the field's context.
	fromCollect = "graphql.CollectFields(ec.OperationContext, "
	toCollect   = "gqlexec.CollectFields(ctx, ec.OperationContext, "
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rewrite DIR")
		os.Exit(2)
	}
	if err := rewriteDir(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "rewrite:", err)
		os.Exit(1)
	}
}

// tableFile is the file rewriteDir writes the plain-field table to.
const tableFile = "plain_fields.generated.go"

func rewriteDir(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.generated.go"))
	if err != nil {
		return err
	}
	var paths []string
	var srcs [][]byte
	for _, f := range files {
		if filepath.Base(f) == tableFile {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		paths, srcs = append(paths, f), append(srcs, src)
	}
	texts, err := stringCasts(srcs...)
	if err != nil {
		return err
	}
	var objects []plainObject
	for i, f := range paths {
		src := srcs[i]
		out, objs, err := rewriteFile(src, texts)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		objects = append(objects, objs...)
		if !bytes.Equal(out, src) {
			if err := os.WriteFile(f, out, 0o644); err != nil {
				return err
			}
		}
	}
	table, err := plainTable(filepath.Base(dir), objects)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, tableFile), table, 0o644)
}

// rewrite returns src with the plain writers added (addPlainWriters) and the calls
// replaced, formatted as gofmt does; src with nothing to change comes back unchanged.
func rewrite(src []byte) ([]byte, error) {
	texts, err := stringCasts(src)
	if err != nil {
		return nil, err
	}
	out, _, err := rewriteFile(src, texts)
	return out, err
}

// rewriteFile is rewrite that also returns the file's objects with plain fields; texts are
// the marshallers that write a named string type as a string (stringCasts).
func rewriteFile(src []byte, texts map[string]bool) ([]byte, []plainObject, error) {
	out, objects, err := addPlainWriters(src, texts)
	if err != nil || !bytes.Contains(out, []byte(from)) && !bytes.Contains(out, []byte(fromCollect)) {
		return out, objects, err
	}
	out = bytes.ReplaceAll(out, []byte(from), []byte(to))
	out = bytes.ReplaceAll(out, []byte(fromCollect), []byte(toCollect))
	out, err = addImport(out, importPath)
	return out, objects, err
}

// addImport adds path to src's import block unless it is there, and formats src as gofmt
// does (which sorts the new import into place).
func addImport(src []byte, path string) ([]byte, error) {
	if !bytes.Contains(src, []byte("\t"+path+"\n")) {
		i := bytes.Index(src, []byte("import (\n"))
		if i < 0 {
			return nil, fmt.Errorf("no import block")
		}
		i += len("import (\n")
		src = append(src[:i:i], append([]byte("\t"+path+"\n"), src[i:]...)...)
	}
	return format.Source(src)
}
