package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"till/internal/auth"
	"till/storage/storagetest"
)

// TestUserAndPersonalTokenCommands runs the operator commands for people in order against
// one database: each case sees what the cases before it made.
func TestUserAndPersonalTokenCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	dsn := storagetest.DSN(t)
	vars := map[string]string{"TILL_DATA_DIR": t.TempDir(), "DATABASE_URL": dsn, "TILL_SECRET": "people-secret"}
	db := sqlx.MustConnect("postgres", dsn)
	defer db.Close()
	var setup bytes.Buffer
	if err := run(context.Background(), []string{"org", "create", "--name", "Acme", "--slug", "acme"}, getenvOf(vars), &setup); err != nil {
		t.Fatalf("org create: %v", err)
	}
	cases := []struct {
		name    string
		args    []string
		want    string // in the output, or in the error when wantErr
		wantErr bool
	}{
		{"a new user", []string{"user", "create", "--email", "Ada@example.com"}, "user created", false},
		{"the same user again", []string{"user", "create", "--email", "ada@example.com"}, "user exists", false},
		{"joins an organization", []string{"user", "create", "--email", "ada@example.com", "--org", "acme", "--role", "owner"}, "acme (owner)", false},
		{"joins again with the same role", []string{"user", "create", "--email", "ada@example.com", "--org", "acme", "--role", "owner"}, "acme (owner)", false},
		{"another role is refused", []string{"user", "create", "--email", "ada@example.com", "--org", "acme", "--role", "member"}, "already a member of acme with the role owner", true},
		{"a bad email", []string{"user", "create", "--email", "not-an-email"}, "not a valid email", true},
		{"an unknown organization", []string{"user", "create", "--email", "bo@example.com", "--org", "nope"}, `No organization "nope"`, true},
		{"a bad role", []string{"user", "create", "--email", "bo@example.com", "--org", "acme", "--role", "king"}, "'owner', 'admin', 'member' or 'finance'", true},
		{"a role without an organization", []string{"user", "create", "--email", "bo@example.com", "--role", "admin"}, "needs an organization", true},
		{"no email", []string{"user", "create"}, "--email is required", true},
		{"a token", []string{"token", "create", "--user", "ADA@example.com", "--scope", "customers:read", "--expires", "30d", "--name", "ci"}, "personal access token for Ada@example.com", false},
		{"a token for nobody", []string{"token", "create", "--user", "nobody@example.com"}, "till user create --email nobody@example.com", true},
		{"a bad lifetime", []string{"token", "create", "--user", "ada@example.com", "--expires", "soon"}, "invalid lifetime", true},
		{"an unknown scope", []string{"token", "create", "--user", "ada@example.com", "--scope", "root"}, "root", true},
		{"both owners", []string{"token", "create", "--user", "ada@example.com", "--org", "acme"}, "either --org or --user", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), c.args, getenvOf(vars), &out)
			switch {
			case c.wantErr && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("err = %v, want one saying %q", err, c.want)
			case !c.wantErr && err != nil:
				t.Errorf("err = %v\n%s", err, out.String())
			case !c.wantErr && !strings.Contains(out.String(), c.want):
				t.Errorf("output lacks %q:\n%s", c.want, out.String())
			}
		})
	}

	var users, verified int
	db.Get(&users, `SELECT count(*) FROM users WHERE lower(email) = 'ada@example.com'`)
	db.Get(&verified, `SELECT count(*) FROM users WHERE lower(email) = 'ada@example.com' AND email_verified`)
	if users != 1 || verified != 1 {
		t.Errorf("ada is %d users, %d verified; want one verified user", users, verified)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "create", "--user", "ada@example.com"}, getenvOf(vars), &out); err != nil {
		t.Fatal(err)
	}
	tok := regexp.MustCompile(`till_pat_[A-Za-z0-9]{43}`).FindString(out.String())
	var scope string
	var hashed, clear int
	db.Get(&hashed, `SELECT count(*) FROM personal_access_tokens WHERE token = $1`, auth.Hash([]byte("people-secret"), tok))
	db.Get(&clear, `SELECT count(*) FROM personal_access_tokens WHERE token = $1`, tok)
	db.Get(&scope, `SELECT scope FROM personal_access_tokens WHERE token = $1`, auth.Hash([]byte("people-secret"), tok))
	if tok == "" || hashed != 1 || clear != 0 {
		t.Errorf("token %q: %d rows by hash, %d in clear; want it stored once, hashed only", tok, hashed, clear)
	}
	if want := auth.NewScopeSet(auth.AllScopes()...).String(); scope != want {
		t.Errorf("a token without --scope has scope %q, want every scope", scope)
	}
}

func TestOperatorCommandsAreAuditedAsTheirCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	dsn := storagetest.DSN(t)
	vars := map[string]string{"TILL_DATA_DIR": t.TempDir(), "DATABASE_URL": dsn, "TILL_SECRET": "people-secret"}
	for _, args := range [][]string{{"org", "create", "--name", "Acme", "--slug", "acme"},
		{"user", "create", "--email", "ada@example.com", "--org", "acme", "--role", "owner"},
		{"token", "create", "--user", "ada@example.com", "--scope", "customers:read"},
		{"token", "create", "--org", "acme", "--scope", "customers:read"}} {
		if err := run(context.Background(), args, getenvOf(vars), &bytes.Buffer{}); err != nil {
			t.Fatalf("till %s: %v", strings.Join(args, " "), err)
		}
	}
	db := sqlx.MustConnect("postgres", dsn)
	defer db.Close()
	var got []string
	if err := db.Select(&got, `SELECT DISTINCT actor_kind || ' ' || coalesce(api, '-') || ' ' || coalesce(operation, '-')
		|| ': ' || action || ' ' || object_type FROM audit_log WHERE object_type IN ('organization', 'user',
		'organization_member', 'personal_access_token', 'organization_access_token') ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"system cli till org create: create organization",
		"system cli till token create: create organization_access_token",
		"system cli till token create: create personal_access_token",
		"system cli till user create: create organization_member",
		"system cli till user create: create user",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
}
