package rest_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/auth"
	"till/internal/blob"
	"till/internal/jobs"
	"till/internal/webhook"
	"till/resolvers"
	"till/rest"
	"till/storage"
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
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	runBackground(t, s, mux, srv.URL)
	o := s.NewOrg(t, "all")
	c := s.NewCustomer(t, o.ID, "sdk-customer")
	s.AddCard(t, o.ID, c.ID, "4242", 0)
	benefitID := s.buyEverything(t, o.ID, c.ID)
	var team struct{ CreateCustomer struct{ ID uuid.UUID } }
	s.Run(t, o.ID, `mutation { createCustomer(input: {type: team, name: "SDK team", externalId: "sdk-team",
		owner: {email: "lead@sdk.example"}}) { id } }`, nil, &team)
	var owner uuid.UUID
	s.Get(t, &owner, `SELECT id FROM members WHERE customer_id = $1 AND role = 'owner'`, team.CreateCustomer.ID)
	user := s.oauthUser(t, o, s.NewOrg(t, "webhooks:read"))
	client := user.client(t, "client_secret_post", "openid email")
	code, _ := user.consent(t, map[string]any{"clientId": client.ID, "redirectUri": redirectURI, "scope": "openid email"})

	run := exec.CommandContext(ctx, node, "check.mjs")
	run.Dir = dir
	run.Env = append(os.Environ(), "TILL_URL="+srv.URL, "TILL_TOKEN="+o.Token,
		"CUSTOMER_ID="+c.ID.String(), "EXTERNAL_ID=sdk-customer", "BENEFIT_ID="+benefitID.String(),
		"OAUTH_CLIENT_ID="+client.ID, "OAUTH_CLIENT_SECRET="+client.Secret, "OAUTH_CODE="+code,
		"OAUTH_REDIRECT_URI="+redirectURI, "OAUTH_USER_ID="+user.user.String(), "OAUTH_USER_EMAIL="+user.email,
		"OAUTH_USER_PAT="+user.patWith(t, "organizations:write"), "TEAM_ID="+team.CreateCustomer.ID.String(),
		"MEMBER_SESSION="+s.NewMemberSession(t, o.ID, team.CreateCustomer.ID, owner))
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the SDK check failed: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "ok:") {
		t.Fatalf("unexpected SDK check output:\n%s", out)
	}
	t.Log(strings.TrimSpace(string(out)))
}

// buyEverything makes the customer buy a one-time, a recurring and a metered product through
// checkouts (GraphQL in process, as the organization), so the SDK has orders, subscriptions,
// checkouts and grants of every price shape to decode. It returns the license-key benefit.
func (s *v1) buyEverything(t *testing.T, orgID, customerID uuid.UUID) uuid.UUID {
	t.Helper()
	exec := s.Resolver.Executor()
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{Kind: auth.KindOrganization, OrganizationID: orgID,
		Scopes: auth.NewScopeSet(auth.AllScopes()...)})
	run := func(doc string, vars map[string]any, out any) {
		t.Helper()
		if err := exec.Run(ctx, doc, vars, out); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
	}
	var benefit struct{ CreateBenefit struct{ ID uuid.UUID } }
	run(`mutation { createBenefit(input: {type: license_keys, description: "SDK key", properties: {prefix: "SDK", activations: {limit: 2, enable_customer_admin: false}}}) { id } }`, nil, &benefit)
	meter, err := storage.CreateMeter(ctx, s.DB, orgID, "Calls", storage.RawJSON(`{"conjunction": "and", "clauses": []}`),
		storage.RawJSON(`{"func": "count"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, product := range []map[string]any{
		{"name": "One-time", "prices": []any{map[string]any{"amountType": "fixed", "priceAmount": 900}}, "benefitIds": []any{benefit.CreateBenefit.ID}},
		{"name": "Monthly", "recurringInterval": "month", "prices": []any{map[string]any{"amountType": "fixed", "priceAmount": 500}}},
		{"name": "Metered", "recurringInterval": "month", "prices": []any{map[string]any{"amountType": "metered_unit", "unitAmount": "0.25", "meterId": meter.ID}}},
		{"name": "Seats", "recurringInterval": "month", "prices": []any{map[string]any{"amountType": "seat_based",
			"seatTiers": map[string]any{"tiers": []any{map[string]any{"minSeats": 1, "maxSeats": nil, "pricePerSeat": 700}}}}}},
	} {
		var p struct{ CreateProduct struct{ ID uuid.UUID } }
		run(`mutation($in: ProductCreateInput!) { createProduct(input: $in) { id } }`, map[string]any{"in": product}, &p)
		in := map[string]any{"products": []any{p.CreateProduct.ID}, "customerId": customerID}
		if product["name"] == "Seats" {
			in["seats"] = 2
		}
		var ck struct{ CreateCheckout struct{ ID uuid.UUID } }
		run(`mutation($in: CheckoutCreateInput!) { createCheckout(input: $in) { id } }`, map[string]any{"in": in}, &ck)
		run(`mutation($id: UUID!) { confirmCheckout(input: {id: $id, paymentToken: "tok_visa"}) { status } }`,
			map[string]any{"id": ck.CreateCheckout.ID}, nil)
	}
	return benefit.CreateBenefit.ID
}

// runBackground gives the test server what `till serve` runs beside the API: a blob store whose
// links it serves, event rendering, webhook delivery (to loopback, where the check listens)
// and the job worker, until the test ends.
func runBackground(t *testing.T, s *v1, mux *http.ServeMux, baseURL string) {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	blobs, err := blob.NewLocal(blob.LocalConfig{Dir: t.TempDir(), BaseURL: baseURL + "/blob/", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := rest.LoadDocuments(rest.Operations())
	if err != nil {
		t.Fatal(err)
	}
	s.rebuild(t, func(d *resolvers.Deps) {
		d.Blobs = blobs
		d.Renderer = func(e *resolvers.Executor) resolvers.EventRenderer { return rest.EventRenderer(e, docs) }
		d.Webhooks = resolvers.NewWebhookDelivery(&webhook.Sender{AllowPrivate: true})
	})
	mux.Handle("/blob/", blobs.Handler())
	mux.Handle("/", s.h)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	worker := &jobs.Worker{DB: s.DB, Handlers: s.Resolver.JobHandlers(), PollInterval: 50 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}
	wg.Go(func() { _ = worker.Run(ctx) })
	wg.Go(func() { s.Resolver.DispatchWebhooks(ctx, 4, 50*time.Millisecond) })
	wg.Go(func() {
		for ctx.Err() == nil {
			_, _ = s.Resolver.RenderEvents(ctx, 100)
			sleepCtx(ctx, 50*time.Millisecond)
		}
	})
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
