// Command rewrite points gqlgen's generated executor at package gqlexec: it replaces every
// call of graphql.MarshalSliceConcurrently in the given directory's *.generated.go files with
// gqlexec.MarshalSlice and imports the package. `go generate` runs it after gqlgen, so the
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

func rewriteDir(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.generated.go"))
	if err != nil {
		return err
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		out, err := rewrite(src)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if !bytes.Equal(out, src) {
			if err := os.WriteFile(f, out, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// rewrite returns src with the calls replaced and the import added, formatted as gofmt does
// (which sorts the new import into place); src without such calls comes back unchanged.
func rewrite(src []byte) ([]byte, error) {
	if !bytes.Contains(src, []byte(from)) {
		return src, nil
	}
	out := bytes.ReplaceAll(src, []byte(from), []byte(to))
	if !bytes.Contains(out, []byte(importPath)) {
		i := bytes.Index(out, []byte("import (\n"))
		if i < 0 {
			return nil, fmt.Errorf("no import block")
		}
		i += len("import (\n")
		out = append(out[:i:i], append([]byte("\t"+importPath+"\n"), out[i:]...)...)
	}
	return format.Source(out)
}
