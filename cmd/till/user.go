package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"till/resolvers"
	"till/storage"
)

// userCmd holds the operator's commands for people: Till has no sign-up of its own, so the
// first users of an installation are created here.
func userCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprintln(stdout, "Usage: till user create --email EMAIL [--org SLUG|ID [--role owner|admin|member|finance]]")
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			return nil
		}
		return fmt.Errorf("unknown user command; try: till user create --help")
	}
	fs := newFlags("user create --email EMAIL [--org SLUG|ID [--role owner|admin|member|finance]]",
		"Creates a user with a verified email, or finds the one that exists, and with --org makes them a\n"+
			"member of the organization. Running it again with the same flags changes nothing.", stdout)
	email := fs.String("email", "", "the user's email address")
	org := fs.String("org", "", "an organization slug or id to join")
	role := fs.String("role", "", "the role in --org: owner, admin, member or finance (default member)")
	if ok, err := parseFlags(fs, args[1:]); !ok {
		return err
	}
	if *email == "" {
		return fmt.Errorf("--email is required")
	}
	db, err := openDatabase(ctx, cfg, slog.New(slog.DiscardHandler), true)
	if err != nil {
		return err
	}
	defer db.close()
	r := resolvers.New(resolvers.Deps{DB: db.DB, PortalURL: cfg.PublicURL})
	u, err := r.EnsureUser(ctx, *email, *org, *role)
	if err != nil {
		return fmt.Errorf("user create: %w", err)
	}
	what := "user exists"
	if u.User.Created {
		what = "user created"
	}
	fmt.Fprintf(stdout, "%s\n  id:    %s\n  email: %s\n", what, u.User.ID, u.User.Email)
	if u.OrganizationSlug != "" {
		fmt.Fprintf(stdout, "  organization: %s (%s)\n", u.OrganizationSlug, u.Role)
	}
	return nil
}

// personalTokenCmd creates a personal access token for the user with this email and prints
// it once.
func personalTokenCmd(ctx context.Context, db *database, secret []byte, email string, req resolvers.PersonalTokenRequest, stdout io.Writer) error {
	u, err := storage.GetUserByEmail(ctx, db.DB, email)
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("no user %q; create one with: till user create --email %s", email, email)
	}
	if err != nil {
		return err
	}
	r := resolvers.New(resolvers.Deps{DB: db.DB, Secret: secret})
	created, err := r.CreatePersonalToken(ctx, u.ID, req)
	if err != nil {
		return fmt.Errorf("token create: %w", err)
	}
	fmt.Fprintf(stdout, "personal access token for %s (shown once, keep it safe):\n%s\n", u.Email, created.Token)
	ms, err := storage.ListMemberships(ctx, db.DB, u.ID, maxListedMemberships)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "In each organization it can do what both its scopes and the user's role there allow:")
	for _, m := range ms {
		fmt.Fprintf(stdout, "  %s: %s\n", m.Slug, m.Role)
	}
	if len(ms) == 0 {
		fmt.Fprintln(stdout, "  (the user belongs to no organization yet)")
	}
	return nil
}

// maxListedMemberships bounds the memberships a new token's summary lists.
const maxListedMemberships = 100

// lifetime is a duration flag that also takes whole days ("30d"), the unit tokens are
// usually given in.
type lifetime time.Duration

func (l *lifetime) String() string {
	if l == nil || *l == 0 {
		return "0"
	}
	return time.Duration(*l).String()
}

func (l *lifetime) Set(s string) error {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return fmt.Errorf("invalid lifetime %q: use whole days (30d) or a duration (720h)", s)
		}
		*l = lifetime(time.Duration(n) * 24 * time.Hour)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("invalid lifetime %q: use whole days (30d) or a duration (720h)", s)
	}
	*l = lifetime(d)
	return nil
}
