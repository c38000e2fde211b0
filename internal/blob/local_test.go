package blob_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"till/internal/blob"
)

// files lists the regular files and symlinks under dir, relative and slash-separated.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	slices.Sort(out)
	return out
}

func TestLocalKeepsTraversalKeysOffTheDisk(t *testing.T) {
	f := newLocal(t)
	ctx := context.Background()
	keys := []string{"../escaped", "../root-sibling/x", "a/../../escaped", "/tmp/escaped", `..\escaped`, "./x", "a/./../../escaped"}
	for _, key := range keys {
		_, err := f.store.Put(ctx, key, strings.NewReader("x"), 1, "")
		if !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%q) error = %v, want ErrInvalidKey", key, err)
		}
	}
	entries, err := os.ReadDir(f.parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "root" {
		t.Errorf("root's parent holds %v, want only root", entries)
	}
	if got := files(t, f.root); len(got) != 0 {
		t.Errorf("root holds %v, want nothing", got)
	}
}

func TestLocalRefusesSymlinksOutOfTheRoot(t *testing.T) {
	f := newLocal(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.root, "evil")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	ctx := context.Background()
	calls := map[string]func() error{
		"Put":    func() error { _, err := f.store.Put(ctx, "evil/x/new.txt", strings.NewReader("x"), 1, ""); return err },
		"Get":    func() error { _, _, err := f.store.Get(ctx, "evil/secret.txt"); return err },
		"Stat":   func() error { _, err := f.store.Stat(ctx, "evil/secret.txt"); return err },
		"Delete": func() error { return f.store.Delete(ctx, "evil/secret.txt") },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("%s through a symlink out of the root: error = %v, want ErrInvalidKey", name, err)
		}
	}
	if got := files(t, outside); !slices.Equal(got, []string{"secret.txt"}) {
		t.Errorf("outside dir holds %v, want only secret.txt", got)
	}

	t.Run("an absolute symlink is refused even when it points inside", func(t *testing.T) {
		if err := os.Symlink(filepath.Join(f.root, "real"), filepath.Join(f.root, "absolute")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.store.Put(ctx, "absolute/x.txt", strings.NewReader("x"), 1, ""); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put through an absolute symlink: error = %v, want ErrInvalidKey", err)
		}
	})
	t.Run("a relative symlink that stays inside the root is followed", func(t *testing.T) {
		if err := os.MkdirAll(filepath.Join(f.root, "real"), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real", filepath.Join(f.root, "alias")); err != nil {
			t.Fatal(err)
		}
		put(t, f.store, "alias/x.txt", "text/plain", []byte("inside"))
		if got, _ := get(t, f.store, "real/x.txt"); string(got) != "inside" {
			t.Errorf("real/x.txt = %q", got)
		}
	})
}

func TestLocalFailedPutLeavesNothingBehind(t *testing.T) {
	readers := map[string]func() (io.Reader, int64){
		"a reader failing mid-stream": func() (io.Reader, int64) { return &failingReader{n: 100 << 10}, 200 << 10 },
		"a reader shorter than size":  func() (io.Reader, int64) { return strings.NewReader("short"), 100 },
		"a reader longer than size":   func() (io.Reader, int64) { return strings.NewReader("longer than declared"), 4 },
	}
	for name, reader := range readers {
		t.Run(name+" creates no object and no temporary file", func(t *testing.T) {
			f := newLocal(t)
			r, size := reader()
			if _, err := f.store.Put(context.Background(), "uploads/x/new.bin", r, size, ""); err == nil {
				t.Fatal("Put succeeded")
			}
			mustBeMissing(t, f.store, "uploads/x/new.bin")
			if got := files(t, f.root); len(got) != 0 {
				t.Errorf("root holds %v, want nothing", got)
			}
		})
		t.Run(name+" keeps the previous object intact", func(t *testing.T) {
			f := newLocal(t)
			put(t, f.store, "uploads/x/old.bin", "text/plain", []byte("previous"))
			before := files(t, f.root)
			r, size := reader()
			if _, err := f.store.Put(context.Background(), "uploads/x/old.bin", r, size, "image/png"); err == nil {
				t.Fatal("Put succeeded")
			}
			got, obj := get(t, f.store, "uploads/x/old.bin")
			if string(got) != "previous" || obj.ContentType != "text/plain" {
				t.Errorf("after failed overwrite: %q %s", got, obj.ContentType)
			}
			if after := files(t, f.root); !slices.Equal(before, after) {
				t.Errorf("files %v became %v", before, after)
			}
		})
	}
}

func TestLocalCancelledPutStoresNothing(t *testing.T) {
	f := newLocal(t)
	ctx, cancel := context.WithCancel(context.Background())
	r := &cancellingReader{cancel: cancel, left: 1 << 20}
	if _, err := f.store.Put(ctx, "uploads/c/x.bin", r, 1<<20, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Put error = %v, want context.Canceled", err)
	}
	if got := files(t, f.root); len(got) != 0 {
		t.Errorf("root holds %v, want nothing", got)
	}
}

// cancellingReader cancels its context after the first read.
type cancellingReader struct {
	cancel func()
	left   int
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	c.cancel()
	n := min(len(p), c.left)
	c.left -= n
	return n, nil
}

func TestLocalDoesNotTrustStaleMetadata(t *testing.T) {
	f := newLocal(t)
	put(t, f.store, "uploads/s/doc", "application/pdf", []byte("original"))
	// As after a crash between the content and metadata renames: new content, old metadata.
	replaced := []byte("replaced content")
	if err := os.WriteFile(filepath.Join(f.root, "uploads", "s", "doc"), replaced, 0o640); err != nil {
		t.Fatal(err)
	}
	obj, err := f.store.Stat(context.Background(), "uploads/s/doc")
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	want := blob.Object{Key: "uploads/s/doc", Size: int64(len(replaced)), ContentType: blob.DefaultContentType, ETag: md5hex(replaced)}
	obj.LastModified = time.Time{}
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("Stat (-want +got):\n%s", diff)
	}
}

func TestLocalConcurrentPutsKeepContentAndTypeTogether(t *testing.T) {
	f := newLocal(t)
	const key = "uploads/race/x"
	put(t, f.store, key, "text/x-0", []byte("writer 0 round -1"))
	var writers, readers sync.WaitGroup
	done := make(chan struct{})
	for w := range 6 {
		writers.Go(func() {
			for i := range 30 {
				data := fmt.Appendf(nil, "writer %d round %d %s", w, i, bytes.Repeat([]byte("."), w*1000))
				if _, err := f.store.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), fmt.Sprintf("text/x-%d", w)); err != nil {
					t.Errorf("Put: %v", err)
				}
			}
		})
	}
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					checkConsistent(t, f.store, key)
				}
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
	checkConsistent(t, f.store, key)
	if got := files(t, f.root); !slices.Equal(got, []string{"uploads/race/.x.meta", "uploads/race/x"}) {
		t.Errorf("root holds %v", got)
	}
}

// checkConsistent reads key and checks that its content type and ETag belong to the
// content, which names the writer whose type it must carry. It runs in goroutines, so it
// reports with Errorf only.
func checkConsistent(t *testing.T, s blob.Store, key string) {
	t.Helper()
	rc, obj, err := s.Get(context.Background(), key)
	if err != nil {
		t.Errorf("Get: %v", err)
		return
	}
	got, err := io.ReadAll(rc)
	_ = rc.Close()
	var w, i int
	if _, serr := fmt.Sscanf(string(got), "writer %d round %d", &w, &i); err != nil || serr != nil {
		t.Errorf("content %q: %v %v", got, err, serr)
		return
	}
	if obj.ContentType != fmt.Sprintf("text/x-%d", w) || obj.ETag != md5hex(got) {
		t.Errorf("content from writer %d read with type %s, etag %s", w, obj.ContentType, obj.ETag)
	}
}

func TestLocalKeyThatIsAPrefixOfAnother(t *testing.T) {
	f := newLocal(t)
	ctx := context.Background()
	put(t, f.store, "a/b/c", "text/plain", []byte("deep"))
	if _, err := f.store.Stat(ctx, "a/b"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat of a prefix: error = %v, want ErrNotFound", err)
	}
	if err := f.store.Delete(ctx, "a/b"); err != nil {
		t.Errorf("Delete of a prefix: %v", err)
	}
	if _, err := f.store.Put(ctx, "a/b/c/d", strings.NewReader("x"), 1, ""); err == nil || errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Put under an object: error = %v, want a plain failure", err)
	}
	if got, _ := get(t, f.store, "a/b/c"); string(got) != "deep" {
		t.Errorf("a/b/c = %q", got)
	}
}

func TestNewLocalRefusesBadConfig(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]blob.LocalConfig{
		"a short secret":     {Dir: dir, BaseURL: "http://127.0.0.1:8000/blob/", Secret: []byte("short")},
		"a relative base":    {Dir: dir, BaseURL: "/blob/", Secret: testSecret},
		"an unparsable base": {Dir: dir, BaseURL: "http://[::1", Secret: testSecret},
	}
	for name, cfg := range cases {
		if _, err := blob.NewLocal(cfg); err == nil {
			t.Errorf("NewLocal with %s succeeded", name)
		}
	}
}
