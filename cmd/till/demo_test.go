package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// TestDemoSeedsEveryKindOfObject runs `till demo` twice on one database and checks that it
// produced what its output promises, in the states a newcomer should find.
func TestDemoSeedsEveryKindOfObject(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	dsn := storagetest.DSN(t)
	vars := map[string]string{"TILL_DATA_DIR": t.TempDir(), "DATABASE_URL": dsn, "TILL_SECRET": "demo-secret"}
	var first, second demoOutput
	for _, out := range []*demoOutput{&first, &second} {
		var buf bytes.Buffer
		if err := run(context.Background(), []string{"demo"}, getenvOf(vars), &buf); err != nil {
			t.Fatalf("till demo: %v\n%s", err, buf.String())
		}
		if err := json.Unmarshal(buf.Bytes(), out); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, buf.String())
		}
	}
	if first.Organization.Slug == second.Organization.Slug {
		t.Errorf("a second run reused slug %q", first.Organization.Slug)
	}
	for name, v := range map[string]string{"organization_token": first.OrganizationToken,
		"customer_session_token": first.CustomerSessionToken, "member_session_token": first.MemberSessionToken} {
		if v == "" {
			t.Errorf("%s is empty", name)
		}
	}
	for _, kind := range []string{"one_time", "recurring", "seat_based", "metered"} {
		if first.Products[kind] == "" {
			t.Errorf("no %s product", kind)
		}
	}
	if len(first.LicenseKeys) == 0 || len(first.Seats) < 2 {
		t.Errorf("license keys %v, seats %v", first.LicenseKeys, first.Seats)
	}

	db, err := storage.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := sqlx.GetContext(context.Background(), db, &n, query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	org := first.Organization.ID
	for _, status := range []string{"active", "trialing", "past_due", "canceled"} {
		if count(`SELECT count(*) FROM subscriptions WHERE organization_id = $1 AND status = $2`, org, status) == 0 {
			t.Errorf("no %s subscription", status)
		}
	}
	if count(`SELECT count(*) FROM subscriptions WHERE organization_id = $1 AND cancel_at_period_end`, org) == 0 {
		t.Error("no subscription canceling at period end")
	}
	for _, status := range []string{"succeeded", "failed", "open"} {
		if count(`SELECT count(*) FROM checkouts WHERE organization_id = $1 AND status = $2`, org, status) == 0 {
			t.Errorf("no %s checkout", status)
		}
	}
	if count(`SELECT count(*) FROM orders WHERE organization_id = $1 AND billing_name IS NOT NULL`, org) == 0 ||
		count(`SELECT count(*) FROM orders WHERE organization_id = $1 AND billing_name IS NULL`, org) == 0 {
		t.Error("want paid orders both with and without billing details")
	}
	if count(`SELECT count(*) FROM customer_seats WHERE organization_id = $1 AND status = 'claimed'`, org) != 1 {
		t.Error("want exactly one claimed seat")
	}
	if count(`SELECT count(*) FROM license_key_activations WHERE organization_id = $1`, org) == 0 {
		t.Error("no license key activations")
	}
}
