package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangedListsEveryDifference(t *testing.T) {
	f := func(s string) file { return file{content: []byte(s), mode: 0o644} }
	tests := []struct {
		name          string
		before, after map[string]file
		want          []string
	}{
		{"identical trees have no difference", map[string]file{"graph/a.go": f("a")}, map[string]file{"graph/a.go": f("a")}, nil},
		{"a rewritten file is listed", map[string]file{"graph/a.go": f("a")}, map[string]file{"graph/a.go": f("b")}, []string{"graph/a.go"}},
		{"a created and a removed file are listed in order",
			map[string]file{"graph/b.go": f("b"), "graph/c.go": f("c")},
			map[string]file{"graph/a.go": f("a"), "graph/b.go": f("b")},
			[]string{"graph/a.go", "graph/c.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, changed(tt.before, tt.after)); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRestorePutsTheSnapshotBack(t *testing.T) {
	t.Chdir(t.TempDir())
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("graph/kept.go", "kept")
	write("graph/model/edited.go", "original")
	write("resolvers/removed.go", "original")
	write("resolvers/sub/ignored.go", "hand-written")
	before := map[string]file{}
	for _, tr := range generated {
		if err := snapshot(tr, before); err != nil {
			t.Fatal(err)
		}
	}
	write("graph/model/edited.go", "generated")
	write("graph/created.go", "generated")
	if err := os.Remove("resolvers/removed.go"); err != nil {
		t.Fatal(err)
	}
	after := map[string]file{}
	for _, tr := range generated {
		if err := snapshot(tr, after); err != nil {
			t.Fatal(err)
		}
	}
	diff := changed(before, after)
	if want := []string{"graph/created.go", "graph/model/edited.go", "resolvers/removed.go"}; !cmp.Equal(want, diff) {
		t.Fatalf("changed = %v, want %v", diff, want)
	}
	if err := restore(before, diff); err != nil {
		t.Fatal(err)
	}
	restored := map[string]file{}
	for _, tr := range generated {
		if err := snapshot(tr, restored); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(before, restored, cmp.AllowUnexported(file{})); diff != "" {
		t.Errorf("tree after restore (-snapshot +got):\n%s", diff)
	}
}
