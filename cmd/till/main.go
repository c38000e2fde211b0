// Command till is the Till billing backend: one binary that serves the GraphQL API, the /v1
// REST compatibility layer and the background workers, and administers organizations and
// tokens.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"till/storage"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "till:", err)
		os.Exit(1)
	}
}

const usage = `Till: a self-hostable billing backend (GraphQL API and /v1 REST compatibility layer).

Usage:
  till serve                                  run the API and workers (embedded PostgreSQL unless DATABASE_URL is set)
  till worker                                 run the background work alone, next to till serve
  till migrate                                apply database migrations and exit
  till org create --name NAME --slug SLUG     create an organization
  till token create --org SLUG|ID --scopes LIST|all [--expires-in DURATION] [--comment TEXT]
                                              create an organization access token (printed once)
  till user create --email EMAIL [--org SLUG|ID --role owner|admin|member]
                                              create (or find) a verified user, optionally a member
  till token create --user EMAIL [--scopes LIST|all] [--expires-in 30d] [--comment TEXT]
                                              create a user's personal access token (printed once)
  till demo                                   seed a demo organization and print its tokens and ids
  till license verify [--keys FILE|URL] CERT  verify an offline license certificate and print its claims
  till oidc rotate-key                        replace the OpenID Connect id-token signing key now
  till database-url                           print the database URL other processes use (with TILL_PG_PORT
                                              for the embedded cluster; it contains a password)

Run "till COMMAND --help" for a command's flags. Configuration comes from environment
variables; "till serve" prints the effective values at start.
`

// run is the whole program: main only wires the process's arguments, environment, output
// and signals into it, so tests can run commands in process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		_, _ = io.WriteString(stdout, usage)
		if len(args) == 0 {
			return fmt.Errorf("a command is required")
		}
		return nil
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	ctx = operatorAudit(ctx, args)
	switch args[0] {
	case "serve":
		return serve(ctx, cfg, args[1:], stdout)
	case "worker":
		return workerCmd(ctx, cfg, args[1:], stdout)
	case "migrate":
		return migrateCmd(ctx, cfg, args[1:], stdout)
	case "org":
		return orgCmd(ctx, cfg, args[1:], stdout)
	case "user":
		return userCmd(ctx, cfg, args[1:], stdout)
	case "token":
		return tokenCmd(ctx, cfg, args[1:], stdout)
	case "demo":
		return demoCmd(ctx, cfg, args[1:], stdout)
	case "license":
		return licenseCmd(ctx, cfg, args[1:], stdout)
	case "oidc":
		return oidcCmd(ctx, cfg, args[1:], stdout)
	case "database-url":
		return databaseURLCmd(ctx, cfg, args[1:], stdout)
	}
	_, _ = io.WriteString(stdout, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// operatorAudit names an operator's command in the audit log (API cli, the system as actor)
// for the changes it makes: "till user create" rather than an unnamed system change. serve
// and worker name nothing: their changes come from requests and jobs.
func operatorAudit(ctx context.Context, args []string) context.Context {
	if args[0] == "serve" || args[0] == "worker" {
		return ctx
	}
	op := "till " + args[0]
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		op += " " + args[1]
	}
	return storage.WithAuditContext(ctx, storage.AuditContext{Operation: op, API: "cli"})
}
