package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"till/resolvers"
)

// oidcCmd holds the OpenID Connect provider's operator commands. Till has no operator
// principal in its API, so rotating the id-token signing key out of turn (after a suspected
// leak) is a command run with the server's own configuration, like migrate.
func oidcCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "rotate-key" {
		fmt.Fprintln(stdout, "Usage: till oidc rotate-key")
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			return nil
		}
		return fmt.Errorf("unknown oidc command; try: till oidc rotate-key --help")
	}
	fs := newFlags("oidc rotate-key", "Replaces the OpenID Connect id-token signing key now and prints the new key id.\n"+
		"The old key stays published at /.well-known/jwks.json until every id token it signed has expired.", stdout)
	if ok, err := parseFlags(fs, args[1:]); !ok {
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
	r := resolvers.New(resolvers.Deps{DB: db.DB, Secret: secret, PortalURL: cfg.PublicURL})
	k, err := r.RotateOIDCSigningKey(ctx)
	if err != nil {
		return fmt.Errorf("oidc rotate-key: %w", err)
	}
	fmt.Fprintf(stdout, "new signing key: %s\n", k.KeyID)
	return nil
}
