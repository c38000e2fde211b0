package main

import (
	"bytes"
	"context"
	"database/sql"
	"net"
	"strings"
	"testing"
)

// TestOtherProcessesReachTheEmbeddedClusterWithItsURL starts till serve on the embedded
// cluster with a TCP port, asks `till database-url` for the URL as an operator would, and
// uses it as another process would: over TCP, with the password the cluster made.
func TestOtherProcessesReachTheEmbeddedClusterWithItsURL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	_, port, err := net.SplitHostPort(freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"TILL_DATA_DIR": t.TempDir(), "TILL_ADDR": freeAddr(t), "TILL_LOG_LEVEL": "error",
		"TILL_PG_PORT": port}
	_, stop := startServe(t, vars)
	defer stop()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"database-url"}, getenvOf(vars), &out); err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(out.String())
	if !strings.HasPrefix(url, "postgres://till:") || !strings.Contains(url, "@127.0.0.1:"+port+"/till") {
		t.Fatalf("database-url printed %q", url)
	}
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var orgs int
	if err := db.QueryRow(`SELECT count(*) FROM organizations`).Scan(&orgs); err != nil || orgs != 1 {
		t.Errorf("through the URL: %d organizations, %v; want the demo organization", orgs, err)
	}

	t.Run("without a TCP port it says what to set", func(t *testing.T) {
		err := run(context.Background(), []string{"database-url"}, getenvOf(map[string]string{"TILL_DATA_DIR": t.TempDir()}), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "TILL_PG_PORT") {
			t.Errorf("err = %v, want one naming TILL_PG_PORT", err)
		}
	})
	t.Run("with DATABASE_URL it is that", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"database-url"}, getenvOf(map[string]string{"DATABASE_URL": "postgres://x@db/till"}), &out); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(out.String()) != "postgres://x@db/till" {
			t.Errorf("printed %q", out.String())
		}
	})
}
