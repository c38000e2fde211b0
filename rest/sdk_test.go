package rest_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPublishedSDKWorksUnchanged runs the upstream TypeScript SDK (@polar-sh/sdk, pinned in
// testdata/sdk) against a live /v1: every route Till serves, called the way integrations
// call it, decoded by the SDK's own models and error classes. It needs node and npm and the
// npm registry; without them it skips and says why.
func TestPublishedSDKWorksUnchanged(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("installs an npm package")
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		t.Skip("node and npm are needed to run the upstream SDK")
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "check.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "sdk", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("cannot install the SDK from the npm registry (%v): %s", err, out)
	}

	s := newV1(t)
	srv := httptest.NewServer(s.h)
	defer srv.Close()
	o := s.newOrg(t, "all")
	c := s.newCustomer(t, o.ID, "sdk-customer")
	s.addCard(t, o.ID, c.ID, "4242", 0)

	run := exec.CommandContext(ctx, node, "check.mjs")
	run.Dir = dir
	run.Env = append(os.Environ(), "TILL_URL="+srv.URL, "TILL_TOKEN="+o.Token,
		"CUSTOMER_ID="+c.ID.String(), "EXTERNAL_ID=sdk-customer")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the SDK check failed: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "ok:") {
		t.Fatalf("unexpected SDK check output:\n%s", out)
	}
	t.Log(strings.TrimSpace(string(out)))
}
