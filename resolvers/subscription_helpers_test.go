package resolvers_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// subWorld is a test-mode organization on a test clock that starts at base, selling a
// monthly plan with a benefit to a customer paying with a saved card. Subscriptions are
// created through the createSubscription contract, as a confirmed checkout creates them.
type subWorld struct {
	s        *resolverstest.Server
	org      resolverstest.Org
	benefit  benefit
	plan     product // monthly, 1000
	customer customer
	card     uuid.UUID // the customer's default payment method
}

// subBase is where the tests' clocks start: the 31st, so month arithmetic shows its clamping.
var subBase = time.Date(2030, time.January, 31, 12, 0, 0, 0, time.UTC)

func newSubWorld(tb testing.TB, cardToken string) *subWorld {
	tb.Helper()
	s := resolverstest.New(tb)
	w := &subWorld{s: s, org: s.NewOrg(tb, resolverstest.AllScopes)}
	w.advance(tb, subBase)
	w.benefit = newBenefit(tb, s, w.org.Token, "Community access")
	w.plan = createProduct(tb, s, w.org.Token, vars{"name": "Pro plan", "recurringInterval": "month",
		"benefitIds": []uuid.UUID{w.benefit.ID}, "prices": []vars{{"amountType": "fixed", "priceAmount": 1000}}})
	w.customer = s.NewCustomer(tb, w.org.ID, "")
	w.card = w.saveCard(tb, w.customer.ID, cardToken)
	return w
}

// saveCard saves a processor test token as the customer's default payment method.
func (w *subWorld) saveCard(tb testing.TB, customerID uuid.UUID, token string) uuid.UUID {
	tb.Helper()
	var out struct{ SavePaymentMethod struct{ ID uuid.UUID } }
	w.s.Query(tb, w.org.Token, `mutation($c: UUID!, $t: String!) {
		savePaymentMethod(input: {customerId: $c, token: $t, setDefault: true}) { id } }`,
		vars{"c": customerID, "t": token}, &out)
	return out.SavePaymentMethod.ID
}

// advance moves the organization's test clock to `to` and returns how many renewal steps ran.
func (w *subWorld) advance(tb testing.TB, to time.Time) int {
	tb.Helper()
	var out struct{ AdvanceTestClock struct{ Renewals int } }
	w.s.Query(tb, w.org.Token, `mutation($to: DateTime!) { advanceTestClock(input: {to: $to}) { renewals } }`,
		vars{"to": to}, &out)
	return out.AdvanceTestClock.Renewals
}

// subscribe creates a subscription of productID for the customer through the contract.
// trial, when set, is the trial length; seats makes it seat-based.
func (w *subWorld) subscribe(tb testing.TB, productID, customerID uuid.UUID, method *uuid.UUID, amount int64,
	trial time.Duration, seats *int) subView {
	tb.Helper()
	ctx := context.Background()
	p, err := storage.GetProduct(ctx, w.s.DB, []uuid.UUID{w.org.ID}, productID)
	if err != nil {
		tb.Fatalf("reading product: %v", err)
	}
	prices, err := storage.PricesByProducts(ctx, w.s.DB, []uuid.UUID{productID})
	if err != nil {
		tb.Fatalf("reading prices: %v", err)
	}
	spec := resolvers.SubscriptionSpec{OrganizationID: w.org.ID, CustomerID: customerID, Product: p, Prices: prices[0],
		PaymentMethodID: method, Amount: amount, Currency: "usd", Seats: seats}
	if trial > 0 {
		end := w.now(tb).Add(trial)
		spec.TrialEnd = &end
	}
	created, err := w.s.Resolver.CreateSubscriptionForTest(ctx, spec)
	if err != nil {
		tb.Fatalf("createSubscription: %v", err)
	}
	return w.get(tb, created.ID)
}

// subscribePlan subscribes the world's customer to the monthly plan with the saved card.
func (w *subWorld) subscribePlan(tb testing.TB) subView {
	tb.Helper()
	return w.subscribe(tb, w.plan.ID, w.customer.ID, &w.card, 1000, 0, nil)
}

// now is the organization's clock.
func (w *subWorld) now(tb testing.TB) time.Time {
	tb.Helper()
	var out struct{ TestClock struct{ FrozenAt time.Time } }
	w.s.Query(tb, w.org.Token, `{ testClock { frozenAt } }`, nil, &out)
	return out.TestClock.FrozenAt
}

// subFields selects what the tests compare on a subscription.
const subFields = `id status amount currency recurringInterval recurringIntervalCount currentPeriodStart
	currentPeriodEnd currentMeterPeriodStart currentMeterPeriodEnd trialStart trialEnd cancelAtPeriodEnd
	canceledAt startedAt endsAt endedAt pastDueAt pauseAtPeriodEnd pausedAt seats productId customerId
	customerCancellationReason customerCancellationComment prices { id }
	pendingUpdate { appliesAt productId seats }`

// subView is the JSON shape of subFields.
type subView struct {
	ID                          uuid.UUID  `json:"id"`
	Status                      string     `json:"status"`
	Amount                      int64      `json:"amount"`
	Currency                    string     `json:"currency"`
	RecurringInterval           string     `json:"recurringInterval"`
	RecurringIntervalCount      int        `json:"recurringIntervalCount"`
	CurrentPeriodStart          time.Time  `json:"currentPeriodStart"`
	CurrentPeriodEnd            time.Time  `json:"currentPeriodEnd"`
	CurrentMeterPeriodStart     *time.Time `json:"currentMeterPeriodStart"`
	CurrentMeterPeriodEnd       *time.Time `json:"currentMeterPeriodEnd"`
	TrialStart                  *time.Time `json:"trialStart"`
	TrialEnd                    *time.Time `json:"trialEnd"`
	CancelAtPeriodEnd           bool       `json:"cancelAtPeriodEnd"`
	CanceledAt                  *time.Time `json:"canceledAt"`
	StartedAt                   *time.Time `json:"startedAt"`
	EndsAt                      *time.Time `json:"endsAt"`
	EndedAt                     *time.Time `json:"endedAt"`
	PastDueAt                   *time.Time `json:"pastDueAt"`
	PauseAtPeriodEnd            bool       `json:"pauseAtPeriodEnd"`
	PausedAt                    *time.Time `json:"pausedAt"`
	Seats                       *int       `json:"seats"`
	ProductID                   uuid.UUID  `json:"productId"`
	CustomerID                  uuid.UUID  `json:"customerId"`
	CustomerCancellationReason  *string    `json:"customerCancellationReason"`
	CustomerCancellationComment *string    `json:"customerCancellationComment"`
	Prices                      []struct {
		ID uuid.UUID `json:"id"`
	} `json:"prices"`
	PendingUpdate *struct {
		AppliesAt time.Time  `json:"appliesAt"`
		ProductID *uuid.UUID `json:"productId"`
		Seats     *int       `json:"seats"`
	} `json:"pendingUpdate"`
}

// get reads a subscription through GraphQL.
func (w *subWorld) get(tb testing.TB, id uuid.UUID) subView {
	tb.Helper()
	var out struct{ Subscription subView }
	w.s.Query(tb, w.org.Token, `query($id: UUID!) { subscription(id: $id) { `+subFields+` } }`, vars{"id": id}, &out)
	return out.Subscription
}

// mutate runs a subscription mutation that takes an input and returns the subscription.
func (w *subWorld) mutate(tb testing.TB, token, mutation string, input vars) subView {
	tb.Helper()
	var out map[string]subView
	w.s.Query(tb, token, `mutation($input: `+subscriptionInputTypes[mutation]+`!) { `+mutation+`(input: $input) { `+subFields+` } }`,
		vars{"input": input}, &out)
	return out[mutation]
}

// mutateError runs a subscription mutation that must fail and returns its error.
func (w *subWorld) mutateError(tb testing.TB, token, mutation string, input vars) gqlError {
	tb.Helper()
	return w.s.QueryError(tb, token, `mutation($input: `+subscriptionInputTypes[mutation]+`!) { `+mutation+`(input: $input) { id } }`,
		vars{"input": input})
}

// subscriptionInputTypes are the input types of the subscription mutations.
var subscriptionInputTypes = map[string]string{
	"cancelSubscription": "SubscriptionCancelInput", "uncancelSubscription": "SubscriptionRefInput",
	"revokeSubscription": "SubscriptionRevokeInput", "pauseSubscription": "SubscriptionRefInput",
	"resumeSubscription": "SubscriptionRefInput", "updateSubscriptionProduct": "SubscriptionProductChangeInput",
	"updateSubscriptionSeats": "SubscriptionSeatsChangeInput", "portalCancelSubscription": "SubscriptionCancelInput",
	"portalUncancelSubscription": "SubscriptionRefInput", "portalUpdateSubscriptionProduct": "SubscriptionProductChangeInput",
	"portalUpdateSubscriptionSeats": "SubscriptionSeatsChangeInput",
}

// events lists the types of the domain events recorded for an object, oldest first.
func (w *subWorld) events(tb testing.TB, objectID uuid.UUID) []string {
	tb.Helper()
	var types []string
	if err := w.s.DB.SelectContext(context.Background(), &types,
		`SELECT type FROM domain_events WHERE object_id = $1 ORDER BY created_at, id`, objectID); err != nil {
		tb.Fatalf("reading events: %v", err)
	}
	return types
}

// subOrder is a subscription's order as the renewal tests compare it.
type subOrder struct {
	BillingReason        string     `db:"billing_reason"`
	Status               string     `db:"status"`
	TotalAmount          int64      `db:"total_amount"`
	NextPaymentAttemptAt *time.Time `db:"next_payment_attempt_at"`
	FailedPayments       int        `db:"failed_payments"`
	PaidPayments         int        `db:"paid_payments"`
}

// orders lists a subscription's orders, oldest first, with their charge attempts.
func (w *subWorld) orders(tb testing.TB, subID uuid.UUID) []subOrder {
	tb.Helper()
	var out []subOrder
	if err := w.s.DB.SelectContext(context.Background(), &out, `SELECT billing_reason, status, total_amount,
		next_payment_attempt_at,
		(SELECT count(*) FROM payments p WHERE p.order_id = o.id AND p.status = 'failed') AS failed_payments,
		(SELECT count(*) FROM payments p WHERE p.order_id = o.id AND p.status = 'succeeded') AS paid_payments
		FROM orders o WHERE subscription_id = $1 ORDER BY created_at`, subID); err != nil {
		tb.Fatalf("reading orders: %v", err)
	}
	return out
}

// grantedBenefits lists the benefits currently granted for a subscription.
func (w *subWorld) grantedBenefits(tb testing.TB, subID uuid.UUID) []uuid.UUID {
	tb.Helper()
	out := []uuid.UUID{}
	if err := w.s.DB.SelectContext(context.Background(), &out, `SELECT benefit_id FROM benefit_grants
		WHERE subscription_id = $1 AND granted_at IS NOT NULL AND deleted_at IS NULL ORDER BY benefit_id`, subID); err != nil {
		tb.Fatalf("reading grants: %v", err)
	}
	return out
}

// seatPlan creates a monthly seat-based product: 1000 per seat up to 5, 800 per seat from 6
// to maxSeats (nil: unbounded).
func (w *subWorld) seatPlan(tb testing.TB, name string, maxSeats *int) product {
	tb.Helper()
	tiers, _ := json.Marshal(map[string]any{"tiers": []map[string]any{
		{"minSeats": 1, "maxSeats": 5, "pricePerSeat": 1000},
		{"minSeats": 6, "maxSeats": maxSeats, "pricePerSeat": 800}}})
	return createProduct(tb, w.s, w.org.Token, vars{"name": name, "recurringInterval": "month",
		"prices": []vars{{"amountType": "seat_based", "seatTiers": json.RawMessage(tiers)}}})
}

// days is a number of days.
func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
