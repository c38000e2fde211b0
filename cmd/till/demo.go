package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/resolvers"
	"till/storage"
)

// demoCmd seeds a realistic organization through the same use cases as the API (GraphQL
// operations run in process) and prints, as JSON, what a newcomer needs to try every
// endpoint.
func demoCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	fs := newFlags("demo", "Creates a demo organization with products, customers, orders, subscriptions, seats and\n"+
		"license keys through Till's own use cases, and prints the tokens and ids to try them as JSON.", stdout)
	if ok, err := parseFlags(fs, args); !ok {
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
	payments, err := paymentProcessor(cfg, db)
	if err != nil {
		return err
	}
	r := resolvers.New(resolvers.Deps{DB: db.DB, Secret: secret, PortalURL: cfg.PublicURL, Payments: payments})
	out, err := seedDemo(ctx, r, db.DB, secret)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// demoOutput is what `till demo` prints.
type demoOutput struct {
	Organization         demoOrg           `json:"organization"`
	OrganizationToken    string            `json:"organization_token"`
	CustomerSessionToken string            `json:"customer_session_token"`
	MemberSessionToken   string            `json:"member_session_token"`
	Products             map[string]string `json:"products"`
	Benefits             map[string]string `json:"benefits"`
	Discounts            map[string]string `json:"discounts"`
	Customers            map[string]string `json:"customers"`
	Checkouts            map[string]string `json:"checkouts"`
	Orders               map[string]string `json:"orders"`
	Subscriptions        map[string]string `json:"subscriptions"`
	LicenseKeys          map[string]string `json:"license_keys"`
	Seats                map[string]string `json:"seats"`
	Try                  []string          `json:"try"`
}

type demoOrg struct {
	ID   uuid.UUID `json:"id"`
	Slug string    `json:"slug"`
}

// demoSession runs GraphQL operations in process as one principal.
type demoSession struct {
	exec *resolvers.Executor
	ctx  context.Context
}

func (s demoSession) run(doc string, vars map[string]any, out any) error {
	if err := s.exec.Run(s.ctx, doc, vars, out); err != nil {
		return fmt.Errorf("%s: %w", firstLine(doc), err)
	}
	return nil
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '(' || c == '{' {
			return s[:i]
		}
	}
	return s
}

// freeSlug finds an unused demo slug so the command can run more than once.
func freeSlug(ctx context.Context, db *sqlx.DB) (string, error) {
	for i := 1; ; i++ {
		slug := "demo-shop"
		if i > 1 {
			slug = fmt.Sprintf("demo-shop-%d", i)
		}
		_, err := storage.GetOrganizationBySlug(ctx, db, slug)
		if err == storage.ErrNotFound {
			return slug, nil
		}
		if err != nil {
			return "", err
		}
	}
}

// newDemoOrganization creates the organization and an all-scope token for it.
func newDemoOrganization(ctx context.Context, db *sqlx.DB, secret []byte) (*storage.Organization, string, error) {
	slug, err := freeSlug(ctx, db)
	if err != nil {
		return nil, "", err
	}
	org, err := storage.CreateOrganization(ctx, db, "Demo Shop", slug)
	if err != nil {
		return nil, "", err
	}
	all, err := auth.ParseScopes("all")
	if err != nil {
		return nil, "", err
	}
	tok, _, err := createToken(ctx, db, secret, org.ID, all, "till demo", nil)
	return org, tok, err
}
