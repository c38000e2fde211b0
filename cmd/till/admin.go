package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/resolvers"
	"till/storage"
)

// newFlags builds a flag set whose --help prints to stdout and is not an error.
func newFlags(name, summary string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: till %s\n\n%s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and reports whether the command should go on (false after --help).
func parseFlags(fs *flag.FlagSet, args []string) (bool, error) {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return false, nil
	}
	return err == nil, err
}

func migrateCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	fs := newFlags("migrate", "Applies every pending database migration and exits.", stdout)
	if ok, err := parseFlags(fs, args); !ok {
		return err
	}
	db, err := openDatabase(ctx, cfg, slog.New(slog.DiscardHandler), true)
	if err != nil {
		return err
	}
	defer db.close()
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

func orgCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprintln(stdout, "Usage: till org create --name NAME --slug SLUG")
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			return nil
		}
		return fmt.Errorf("unknown org command; try: till org create --help")
	}
	fs := newFlags("org create --name NAME --slug SLUG", "Creates an organization (a seller).", stdout)
	name := fs.String("name", "", "organization name shown to customers")
	slug := fs.String("slug", "", "unique slug: lowercase letters, digits and dashes")
	if ok, err := parseFlags(fs, args[1:]); !ok {
		return err
	}
	if *name == "" || *slug == "" {
		return fmt.Errorf("--name and --slug are required")
	}
	db, err := openDatabase(ctx, cfg, slog.New(slog.DiscardHandler), true)
	if err != nil {
		return err
	}
	defer db.close()
	o, err := storage.Audited(ctx, db.DB, func(q sqlx.ExtContext) (*storage.Organization, error) {
		return storage.CreateOrganization(ctx, q, *name, *slug)
	})
	switch {
	case errors.Is(err, storage.ErrConflict):
		return fmt.Errorf("an organization with slug %q already exists", *slug)
	case errors.Is(err, storage.ErrReference):
		return fmt.Errorf("invalid slug %q: use lowercase letters, digits and dashes", *slug)
	case err != nil:
		return err
	}
	fmt.Fprintf(stdout, "organization created\n  id:   %s\n  slug: %s\n", o.ID, o.Slug)
	return nil
}

func tokenCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprintln(stdout, tokenUsage)
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			return nil
		}
		return fmt.Errorf("unknown token command; try: till token create --help")
	}
	fs := newFlags("token create --org SLUG|ID --scopes LIST|all | --user EMAIL [--scopes LIST]",
		"Creates an organization access token (--org) or a personal access token (--user) and prints it\n"+
			"once; only its hash is stored.", stdout)
	org := fs.String("org", "", "organization slug or id, for an organization access token")
	user := fs.String("user", "", "a user's email, for a personal access token")
	scopes := fs.String("scopes", "", `space- or comma-separated scopes, or "all" (the default with --user, whose role bounds it in each organization)`)
	fs.StringVar(scopes, "scope", "", "the same as --scopes")
	var expiresIn lifetime
	fs.Var(&expiresIn, "expires-in", "lifetime, e.g. 720h or 30d; 0 never expires")
	fs.Var(&expiresIn, "expires", "the same as --expires-in")
	comment := fs.String("comment", "", "a name to recognise the token by")
	fs.StringVar(comment, "name", "", "the same as --comment")
	if ok, err := parseFlags(fs, args[1:]); !ok {
		return err
	}
	if (*org == "") == (*user == "") {
		return fmt.Errorf("give either --org or --user")
	}
	if *user != "" && *scopes == "" {
		*scopes = "all"
	}
	if *scopes == "" {
		return fmt.Errorf("--org and --scopes are required")
	}
	set, err := auth.ParseScopes(*scopes)
	if err != nil {
		return err
	}
	secret, err := cfg.secret()
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, slog.New(slog.DiscardHandler), true)
	if err != nil {
		return err
	}
	defer db.close()
	if *user != "" {
		return personalTokenCmd(ctx, db, secret, *user, resolvers.PersonalTokenRequest{Comment: *comment,
			Scopes: set, Lifetime: time.Duration(expiresIn)}, stdout)
	}
	o, err := findOrganization(ctx, db.DB, *org)
	if err != nil {
		return err
	}
	var expires *time.Time
	if expiresIn > 0 {
		t := time.Now().Add(time.Duration(expiresIn))
		expires = &t
	}
	tok, err := storage.Audited(ctx, db.DB, func(q sqlx.ExtContext) (string, error) {
		tok, _, err := createToken(ctx, q, secret, o.ID, set, *comment, expires)
		return tok, err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "organization access token for %s (shown once, keep it safe):\n%s\n", o.Slug, tok)
	return nil
}

const tokenUsage = `Usage: till token create --org SLUG|ID --scopes LIST|all [--expires-in DURATION] [--comment TEXT]
       till token create --user EMAIL [--scopes LIST|all] [--expires-in DURATION] [--comment TEXT]`

// findOrganization resolves a slug or an id.
func findOrganization(ctx context.Context, db *sqlx.DB, ref string) (*storage.Organization, error) {
	o, err := storage.GetOrganizationByRef(ctx, db, ref)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("no organization %q", ref)
	}
	return o, err
}

// createToken makes an organization access token and stores its hash.
func createToken(ctx context.Context, db sqlx.ExtContext, secret []byte, orgID uuid.UUID, scopes auth.ScopeSet, comment string, expires *time.Time) (string, *storage.AccessToken, error) {
	tok := auth.Generate(auth.PrefixOrganizationAccessToken)
	list := make([]string, 0, len(scopes))
	for _, s := range scopes.List() {
		list = append(list, string(s))
	}
	t, err := storage.CreateOrganizationToken(ctx, db, orgID, auth.Hash(secret, tok), strings.Join(list, " "), comment, expires)
	return tok, t, err
}
