package layering_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/layering"
)

// goList runs the go command (go test puts its own first on PATH) and returns its output.
func goList(tb testing.TB, dir string, args ...string) []byte {
	tb.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("go list %v: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

// modulePackages lists the packages of the module this test belongs to.
func modulePackages(tb testing.TB) (string, []layering.Package) {
	tb.Helper()
	var mod struct{ Path, Dir string }
	if err := json.Unmarshal(goList(tb, ".", "-m", "-json"), &mod); err != nil {
		tb.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(goList(tb, mod.Dir, "-json=ImportPath,Imports", "./...")))
	var pkgs []layering.Package
	for {
		var p layering.Package
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		tb.Fatal("go list found no packages")
	}
	return mod.Path, pkgs
}

func TestTheModuleFollowsTheDependencyRule(t *testing.T) {
	module, pkgs := modulePackages(t)
	for _, v := range layering.Check(module, pkgs) {
		t.Error(v)
	}
}

func TestCheckNamesEachBrokenRule(t *testing.T) {
	pkg := func(path string, imports ...string) layering.Package {
		return layering.Package{ImportPath: "m/" + path, Imports: prefixed(imports)}
	}
	// clean is a graph every rule allows, which each case extends by one import.
	clean := []layering.Package{
		pkg("storage", "internal/pure", "fmt"),
		pkg("storage/storagetest", "storage", "migrations", "internal/pure"),
		pkg("migrations"),
		pkg("graph", "storage", "internal/scalar"),
		pkg("graph/model", "storage"),
		pkg("resolvers", "graph", "graph/model", "storage", "internal/jobs"),
		pkg("rest", "resolvers", "graph/model", "rest/fastapi", "internal/pure"),
		pkg("rest/fastapi", "internal/pure", "strings"),
		pkg("cmd/app", "rest", "resolvers", "storage", "internal/jobs"),
		pkg("internal/pure", "strings"),
		pkg("internal/scalar", "storage"),
		pkg("internal/jobs", "storage", "internal/pure"),
	}
	tests := []struct {
		name  string
		extra layering.Package
		want  []string
	}{
		{"a graph that keeps every rule passes", layering.Package{}, nil},
		{"storage importing a layer above it is refused", pkg("storage", "resolvers"),
			[]string{"m/storage imports m/resolvers: storage imports no other project package, and of internal/ only self-contained helpers (which import no project package)"}},
		{"storage importing a helper that imports storage is refused", pkg("storage", "internal/jobs"),
			[]string{"m/storage imports m/internal/jobs: storage imports no other project package, and of internal/ only self-contained helpers (which import no project package)"}},
		{"generated graph importing resolvers is refused", pkg("graph", "resolvers"),
			[]string{"m/graph imports m/resolvers: graph imports no layer above it (storage ← graph ← resolvers ← rest ← cmd), and resolvers is above"}},
		{"resolvers importing rest is refused", pkg("resolvers", "rest"),
			[]string{"m/resolvers imports m/rest: resolvers imports no layer above it (storage ← graph ← resolvers ← rest ← cmd), and rest is above"}},
		{"rest importing storage is refused", pkg("rest", "storage/storagetest"),
			[]string{"m/rest imports m/storage/storagetest: rest never imports storage: it sees use cases and GraphQL only"}},
		{"importing cmd is refused even from cmd", pkg("cmd/tool", "cmd/app"),
			[]string{"m/cmd/tool imports m/cmd/app: nothing imports cmd"}},
		{"a helper importing a layer above storage is refused", pkg("internal/auth", "graph/model"),
			[]string{"m/internal/auth imports m/graph/model: helpers under internal/ import no layer above storage"}},
		{"the validator importing rest is refused", pkg("rest/fastapi", "rest"),
			[]string{"m/rest/fastapi imports m/rest: the request validator (rest/fastapi) imports no layer, only internal/ helpers"}},
		{"the validator importing storage is refused", pkg("rest/fastapi/decode", "storage"),
			[]string{"m/rest/fastapi/decode imports m/storage: the request validator (rest/fastapi) imports no layer, only internal/ helpers"}},
		{"the validator's own packages may import one another", pkg("rest/fastapi/fastapitest", "rest/fastapi"), nil},
		{"a package outside every layer is refused", pkg("tools/gen", "storage"),
			[]string{"m/tools/gen: every package sits in a layer (storage, graph, resolvers, rest, cmd) or under internal/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkgs := clean
			if tt.extra.ImportPath != "" {
				pkgs = append(append([]layering.Package(nil), clean...), tt.extra)
			}
			var got []string
			for _, v := range layering.Check("m", pkgs) {
				got = append(got, v.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// prefixed puts the synthetic module's path before every project import; the standard
// library packages the cases use stay as they are.
func prefixed(imports []string) []string {
	out := make([]string, len(imports))
	for i, imp := range imports {
		switch imp {
		case "fmt", "strings":
			out[i] = imp
		default:
			out[i] = "m/" + imp
		}
	}
	return out
}
