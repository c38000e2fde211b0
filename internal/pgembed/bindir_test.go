package pgembed_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"till/internal/pgembed"
)

// fakeBinDir makes dir/rel hold executable initdb and postgres stand-ins and returns it.
func fakeBinDir(t *testing.T, root, rel string) string {
	t.Helper()
	dir := filepath.Join(root, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"initdb", "postgres"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestSearchFindsTheBinaries(t *testing.T) {
	root := t.TempDir()
	explicit := fakeBinDir(t, root, "explicit")
	onPath := fakeBinDir(t, root, "path")
	fakeBinDir(t, root, "pg/9.6/bin")
	newest := fakeBinDir(t, root, "pg/16/bin")
	fakeBinDir(t, root, "pg/15/bin")

	tests := []struct {
		name   string
		search pgembed.Search
		want   string
	}{
		{"PG_BINDIR wins over everything", pgembed.Search{Getenv: env(map[string]string{"PG_BINDIR": explicit, "PATH": onPath}), Dirs: []string{root + "/pg/*/bin"}}, explicit},
		{"install locations are tried newest version first", pgembed.Search{Getenv: env(map[string]string{"PATH": onPath}), Dirs: []string{root + "/pg/*/bin"}}, newest},
		{"PATH is the last resort", pgembed.Search{Getenv: env(map[string]string{"PATH": root + ":" + onPath}), Dirs: []string{}}, onPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.search.BinDir()
			if err != nil || got != tt.want {
				t.Errorf("BinDir() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestMissingBinariesSayHowToInstallThem(t *testing.T) {
	empty := t.TempDir()
	nothing := pgembed.Search{Getenv: env(nil), Dirs: []string{}}
	tests := []struct {
		name string
		run  func() error
	}{
		{"an empty environment with no install locations", func() error {
			_, err := nothing.BinDir()
			return err
		}},
		{"PG_BINDIR naming a directory without them", func() error {
			_, err := pgembed.Search{Getenv: env(map[string]string{"PG_BINDIR": empty})}.BinDir()
			return err
		}},
		{"Options.BinDir naming an empty directory", func() error {
			_, err := pgembed.Start(t.Context(), pgembed.Options{Dir: t.TempDir(), BinDir: empty})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if !errors.Is(err, pgembed.ErrNoBinaries) {
				t.Fatalf("error = %v, want ErrNoBinaries", err)
			}
			if !strings.Contains(err.Error(), "apt-get install postgresql") {
				t.Errorf("error %q does not say how to install PostgreSQL", err)
			}
		})
	}
}

func TestFindBinDirOnThisMachine(t *testing.T) {
	dir, err := pgembed.FindBinDir()
	if errors.Is(err, pgembed.ErrNoBinaries) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := pgembed.CheckBinDir(dir); err != nil {
		t.Error(err)
	}
}
