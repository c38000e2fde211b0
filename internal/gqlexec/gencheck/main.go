// Command gencheck fails when `go generate ./...` would change the generated code: graph/
// whole, and the top level of resolvers/, where gqlgen keeps its follow-schema files. A
// hand edit there is lost at the next generation, and a schema change committed without
// its generation leaves the server serving the old schema.
//
// It generates in place, where the checkout's build cache serves gqlgen's package loading
// (a copy elsewhere recompiles the module, minutes instead of seconds), compares with a
// snapshot taken just before, and writes the snapshot back over whatever generation
// changed. So it needs no git, counts uncommitted work as the baseline, and leaves the tree
// as it found it. Run it from the module root, with nothing else building there:
//
//	go run ./internal/gqlexec/gencheck
package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
)

// generated are the directories generation writes; recurse is false where only the top
// level is generated (resolvers' subpackages are hand-written).
var generated = []tree{{dir: "graph", recurse: true}, {dir: "resolvers"}}

type tree struct {
	dir     string
	recurse bool
}

// file is a snapshot of one file.
type file struct {
	content []byte
	mode    fs.FileMode
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "gencheck:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	before := map[string]file{}
	for _, t := range generated {
		if err := snapshot(t, before); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, "go", "generate", "./...")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	genErr := cmd.Run()
	after := map[string]file{}
	for _, t := range generated {
		if err := snapshot(t, after); err != nil {
			return err
		}
	}
	diff := changed(before, after)
	if err := restore(before, diff); err != nil {
		return fmt.Errorf("putting the generated code back: %w", err)
	}
	if genErr != nil {
		return fmt.Errorf("go generate ./...: %w", genErr)
	}
	if len(diff) > 0 {
		for _, name := range diff {
			fmt.Fprintln(os.Stderr, "  "+name)
		}
		return fmt.Errorf("go generate ./... changes the %d files above: run `make generate` and keep its output", len(diff))
	}
	return nil
}

// snapshot adds the regular files of t to files, keyed by slash-separated path.
func snapshot(t tree, files map[string]file) error {
	return filepath.WalkDir(t.dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != t.dir && !t.recurse:
			return filepath.SkipDir
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(path)] = file{content: content, mode: info.Mode().Perm()}
		return nil
	})
}

// changed lists, sorted, the files present on one side only or with different content.
func changed(before, after map[string]file) []string {
	var out []string
	for name, b := range before {
		if a, found := after[name]; !found || string(a.content) != string(b.content) {
			out = append(out, name)
		}
	}
	for name := range after {
		if _, found := before[name]; !found {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// restore writes back the snapshot of each named file, removing those it did not hold.
func restore(before map[string]file, names []string) error {
	for _, name := range names {
		path := filepath.FromSlash(name)
		b, found := before[name]
		if !found {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b.content, b.mode); err != nil {
			return err
		}
	}
	return nil
}
