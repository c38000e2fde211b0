package resolverstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"till/internal/auth"
	"till/storage"
)

// Fixtures arrange a test's world as the organization that owns it: through the use cases
// where one makes the thing (so the rows, events and caches are the ones production writes);
// through storage for what another system or a longer flow leaves behind (saved cards,
// member sessions of organizations without the member model, the order or subscription a
// purchase ends with); with SQL only where storage has no function (users). They act with
// every scope: a test's tokens and scopes are what it checks, not what its world was built
// with.

// Org is an organization with an organization access token.
type Org struct {
	ID    uuid.UUID
	Slug  string
	Token string
}

// AllScopes is the scope string of a token that may do everything.
const AllScopes = "all"

// NewOrg creates an organization and an organization access token carrying scope (a space
// or comma separated list, or AllScopes).
func (a *App) NewOrg(tb testing.TB, scope string) Org {
	tb.Helper()
	slug := "org-" + randomHex(6)
	o, err := storage.CreateOrganization(context.Background(), a.DB, "Org "+slug, slug)
	if err != nil {
		tb.Fatalf("creating organization: %v", err)
	}
	return Org{ID: o.ID, Slug: slug, Token: a.NewToken(tb, o.ID, scope)}
}

// NewToken creates another organization access token for orgID.
func (a *App) NewToken(tb testing.TB, orgID uuid.UUID, scope string) string {
	tb.Helper()
	tok := auth.Generate(auth.PrefixOrganizationAccessToken)
	if _, err := storage.CreateOrganizationToken(context.Background(), a.DB, orgID, auth.Hash(a.Secret, tok), scope, "", nil); err != nil {
		tb.Fatalf("creating organization token: %v", err)
	}
	return tok
}

// User is a dashboard user and the personal access token it holds.
type User struct {
	ID    uuid.UUID
	Email string
	Token string
}

// UserSpec is what a new user holds.
type UserSpec struct {
	// Scope is the personal access token's scope.
	Scope string
	// Orgs are the organizations the user belongs to.
	Orgs []uuid.UUID
	// Role is the user's role in each of Orgs; empty keeps the column's default (owner).
	Role string
	// EmailVerified marks the email verified, as OpenID Connect reports it.
	EmailVerified bool
}

// NewUser creates a user with a unique email, its memberships and a personal access token.
// Users are written directly: signing up is the identity provider's work, not a use case.
func (a *App) NewUser(tb testing.TB, spec UserSpec) User {
	tb.Helper()
	u := User{Email: "u-" + randomHex(4) + "@example.com", Token: auth.Generate(auth.PrefixPersonalAccessToken)}
	a.Get(tb, &u.ID, `INSERT INTO users (email, email_verified) VALUES ($1, $2) RETURNING id`, u.Email, spec.EmailVerified)
	for _, o := range spec.Orgs {
		if spec.Role == "" {
			a.Exec(tb, `INSERT INTO user_organizations (user_id, organization_id) VALUES ($1, $2)`, u.ID, o)
			continue
		}
		a.Exec(tb, `INSERT INTO user_organizations (user_id, organization_id, role) VALUES ($1, $2, $3)`, u.ID, o, spec.Role)
	}
	a.Exec(tb, `INSERT INTO personal_access_tokens (user_id, token, scope) VALUES ($1, $2, $3)`,
		u.ID, auth.Hash(a.Secret, u.Token), spec.Scope)
	return u
}

// NewCustomer creates an individual customer of orgID with a unique email and the given
// external id (none when empty), through createCustomer.
func (a *App) NewCustomer(tb testing.TB, orgID uuid.UUID, externalID string) Customer {
	tb.Helper()
	in := Vars{"email": "c-" + randomHex(4) + "@example.com"}
	if externalID != "" {
		in["externalId"] = externalID
	}
	var out struct{ CreateCustomer Customer }
	a.Run(tb, orgID, `mutation($input: CustomerCreateInput!) { createCustomer(input: $input) { `+CustomerFields+` } }`,
		Vars{"input": in}, &out)
	return out.CreateCustomer
}

// NewCustomerSession opens a portal session for a customer of orgID through
// createCustomerSession and returns its token: a member session when the organization uses
// the member model.
func (a *App) NewCustomerSession(tb testing.TB, orgID, customerID uuid.UUID) string {
	tb.Helper()
	var out struct{ CreateCustomerSession struct{ Token string } }
	a.Run(tb, orgID, `mutation($id: UUID!) { createCustomerSession(input: {customerId: $id}) { token } }`,
		Vars{"id": customerID}, &out)
	return out.CreateCustomerSession.Token
}

// NewMemberSession opens a portal session for a member, valid for an hour, whatever the
// organization's model: createCustomerSession opens member sessions only for organizations
// that use the member model.
func (a *App) NewMemberSession(tb testing.TB, orgID, customerID, memberID uuid.UUID) string {
	tb.Helper()
	tok := auth.Generate(auth.PrefixMemberSession)
	if _, err := storage.CreateMemberSession(context.Background(), a.DB, orgID, customerID, memberID,
		auth.Hash(a.Secret, tok), time.Now().Add(time.Hour), nil); err != nil {
		tb.Fatalf("creating member session: %v", err)
	}
	return tok
}

// AddCard stores a visa card ending in last4 for a customer, created age ago so tests
// control the newest-first order.
func (a *App) AddCard(tb testing.TB, orgID, customerID uuid.UUID, last4 string, age time.Duration) uuid.UUID {
	tb.Helper()
	return a.AddPaymentMethod(tb, orgID, customerID, storage.PaymentMethodWrite{Type: "card",
		Brand: ptr("visa"), Last4: ptr(last4), ExpMonth: ptr(12), ExpYear: ptr(2030)}, age)
}

// AddPaymentMethod stores any payment method for a customer, created age ago, as the
// payment processor integration would after the customer saved it with the processor.
func (a *App) AddPaymentMethod(tb testing.TB, orgID, customerID uuid.UUID, w storage.PaymentMethodWrite, age time.Duration) uuid.UUID {
	tb.Helper()
	w.Processor, w.ProcessorID = "stripe", "pm_"+randomHex(8)
	pm, err := storage.CreatePaymentMethod(context.Background(), a.DB, orgID, customerID, w)
	if err != nil {
		tb.Fatalf("creating payment method: %v", err)
	}
	a.Exec(tb, `UPDATE payment_methods SET created_at = now() - $2::interval WHERE id = $1`, pm.ID,
		fmt.Sprintf("%d microseconds", age.Microseconds()))
	return pm.ID
}

// NewSubscription stores an active monthly subscription of a product for 1000 usd, started
// now, of seats seats when the product is seat-based (nil otherwise): what a paid checkout of
// a plan leaves, for tests of what follows (grants, seats, portals, tenancy).
func (a *App) NewSubscription(tb testing.TB, orgID, customerID, productID uuid.UUID, seats *int) uuid.UUID {
	tb.Helper()
	now := time.Now()
	sub, err := storage.CreateSubscription(context.Background(), a.DB, orgID, now, storage.SubscriptionWrite{
		CustomerID: customerID, ProductID: productID, Status: "active", Amount: 1000, Currency: "usd",
		RecurringInterval: "month", RecurringIntervalCount: 1, CurrentPeriodStart: now,
		CurrentPeriodEnd: now.AddDate(0, 1, 0), StartedAt: &now, Seats: seats})
	if err != nil {
		tb.Fatalf("storing a subscription: %v", err)
	}
	return sub.ID
}

// Run executes an operation in process as organization orgID with every scope and decodes
// its data into out (when not nil); the test fails on any error. Fixtures build on it.
func (a *App) Run(tb testing.TB, orgID uuid.UUID, query string, vars Vars, out any) {
	tb.Helper()
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{Kind: auth.KindOrganization,
		OrganizationID: orgID, Scopes: auth.NewScopeSet(auth.AllScopes()...)})
	if err := a.exec.Run(ctx, query, vars, out); err != nil {
		tb.Fatalf("%s: %v", strings.Join(strings.Fields(query), " "), err)
	}
}

// Exec runs a SQL statement on the application's database, for arranging states the API
// cannot reach (expired sessions, feature flags).
func (a *App) Exec(tb testing.TB, query string, args ...any) {
	tb.Helper()
	if _, err := a.DB.ExecContext(context.Background(), query, args...); err != nil {
		tb.Fatalf("exec %q: %v", strings.Join(strings.Fields(query), " "), err)
	}
}

// Get runs a single-row SQL query on the application's database into dest, for checking
// what the API stored.
func (a *App) Get(tb testing.TB, dest any, query string, args ...any) {
	tb.Helper()
	if err := a.DB.GetContext(context.Background(), dest, query, args...); err != nil {
		tb.Fatalf("get %q: %v", strings.Join(strings.Fields(query), " "), err)
	}
}

// Row is the stored row of table with id as JSON, for proving that a refused request wrote
// nothing to it.
func (a *App) Row(tb testing.TB, table string, id uuid.UUID) string {
	tb.Helper()
	var row string
	a.Get(tb, &row, `SELECT row_to_json(t)::text FROM `+pq.QuoteIdentifier(table)+` t WHERE id = $1`, id)
	return row
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func ptr[T any](v T) *T { return &v }

// NewPaidOrder stores a paid one-time purchase of a product for 1000 usd, of seats seats
// when the product is seat-based (nil otherwise). It is the purchase flow's last step
// without the checkout and payment before it, for tests of what follows a sale (grants,
// documents, lists): creating orders is that flow's work.
func (a *App) NewPaidOrder(tb testing.TB, orgID, customerID, productID uuid.UUID, seats *int) uuid.UUID {
	tb.Helper()
	o, err := storage.InsertOrder(context.Background(), a.DB, orgID, time.Now(), storage.OrderWrite{CustomerID: customerID,
		ProductID: &productID, Status: "paid", BillingReason: "purchase", Currency: "usd", SubtotalAmount: 1000,
		NetAmount: 1000, TotalAmount: 1000, Seats: seats})
	if err != nil {
		tb.Fatalf("storing a paid order: %v", err)
	}
	return o.ID
}

// NewUserSession signs the user in as a browser would, without the mail: a session of theirs
// and the cookie value and CSRF token a page would hold.
func (a *App) NewUserSession(tb testing.TB, userID uuid.UUID) (token, csrf string) {
	tb.Helper()
	token = auth.Generate(auth.PrefixUserSession)
	s, err := storage.CreateUserSession(context.Background(), a.DB, storage.UserSessionWrite{UserID: userID,
		Hash: auth.Hash(a.Secret, token), ExpiresAt: time.Now().Add(time.Hour), UserAgent: "test"}, 50)
	if err != nil {
		tb.Fatalf("creating a user session: %v", err)
	}
	return token, auth.CSRFToken(a.Secret, s.ID)
}
