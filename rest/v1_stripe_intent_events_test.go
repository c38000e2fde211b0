package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/internal/jobs"
	"till/internal/payment"
	"till/internal/payment/stripemock"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// intentEvent is a Stripe payment_intent event: succeeded with its charge, or failed.
func intentEvent(id, typ, intent string, created time.Time) string {
	status, charge, failure := "succeeded", `"ch_3ds_paid"`, `null`
	if typ == "payment_intent.payment_failed" {
		status, charge = "requires_payment_method", `null`
		failure = `{"type":"card_error","code":"payment_intent_authentication_failure","message":"We are unable to authenticate your payment method."}`
	}
	return fmt.Sprintf(`{"id":%q,"object":"event","type":%q,"created":%d,
		"data":{"object":{"id":%q,"object":"payment_intent","amount":2000,"currency":"usd","status":%q,
		"latest_charge":%s,"last_payment_error":%s}}}`, id, typ, created.Unix(), intent, status, charge, failure)
}

// TestStripeIntentEventsSettleA3DSCheckout confirms a checkout on Stripe whose card asks for
// 3-D Secure: the checkout waits, confirmed, with the intent's client secret for the buyer's
// page, until Stripe's events say how the holder answered. Events arrive twice and out of
// order (an older failure after the success), and only the newest is applied: one order,
// paid with the charge the success names.
func TestStripeIntentEventsSettleA3DSCheckout(t *testing.T) {
	t.Parallel()
	proxy := stripemock.StartProxy(t)
	sp, err := payment.NewStripe(payment.StripeConfig{SecretKey: "sk_test_till", APIURL: proxy.URL, WebhookSecret: stripeWebhookSecret})
	if err != nil {
		t.Fatal(err)
	}
	s := newV1(t, func(d *resolvers.Deps) { d.Payments = sp })
	org := s.NewOrg(t, resolverstest.AllScopes)
	product := s.NewProduct(t, org.ID, "Ebook")
	const intent = "pi_3ds_waiting"
	proxy.Answer(func(r stripemock.Request) bool { return r.Route() == "POST /v1/payment_intents" },
		stripemock.Reply{Status: http.StatusOK, Body: map[string]any{"id": intent, "object": "payment_intent",
			"amount": 2000, "currency": "usd", "status": "requires_action", "client_secret": intent + "_secret_abc"}})
	var c struct{ CreateCheckout struct{ ID uuid.UUID } }
	s.Run(t, org.ID, `mutation($p: UUID!) { createCheckout(input: {products: [$p], customerEmail: "3ds@example.com"}) { id } }`,
		resolverstest.Vars{"p": product.ID}, &c)
	id := c.CreateCheckout.ID
	var confirmed struct{ ConfirmCheckout struct{ Status string } }
	s.Run(t, org.ID, `mutation($id: UUID!) { confirmCheckout(input: {id: $id, paymentToken: "tok_visa"}) { status } }`,
		resolverstest.Vars{"id": id}, &confirmed)
	rec := s.do(t, call{method: http.MethodGet, target: "/v1/checkouts/", token: org.Token})
	want := `"payment_processor_metadata":{"intent_client_secret":"pi_3ds_waiting_secret_abc","intent_status":"requires_action"}`
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"status":"confirmed"`) || !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("confirmed %s, then read %d %s; want confirmed with %s", confirmed.ConfirmCheckout.Status, rec.Code, rec.Body, want)
	}

	now := time.Now()
	deliveries := []string{
		intentEvent("evt_3ds_ok", "payment_intent.succeeded", intent, now),
		intentEvent("evt_3ds_ok", "payment_intent.succeeded", intent, now),
		intentEvent("evt_3ds_failed_before", "payment_intent.payment_failed", intent, now.Add(-time.Minute)),
	}
	for _, d := range deliveries {
		if rec := s.do(t, signed(d, stripeWebhookSecret, now)); rec.Code != http.StatusAccepted {
			t.Fatalf("delivery: %d %s", rec.Code, rec.Body)
		}
	}
	worker := &jobs.Worker{DB: s.DB, Handlers: s.Resolver.JobHandlers()}
	for range 3 {
		if _, err := worker.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var got struct {
		Status string `db:"status"`
		Orders int    `db:"orders"`
		Charge string `db:"charge"`
	}
	s.Get(t, &got, `SELECT c.status, (SELECT count(*) FROM orders WHERE checkout_id = c.id) AS orders,
		coalesce((SELECT p.processor_id FROM payments p JOIN orders o ON o.id = p.order_id WHERE o.checkout_id = c.id), '') AS charge
		FROM checkouts c WHERE c.id = $1`, id)
	if got.Status != "succeeded" || got.Orders != 1 || got.Charge != "ch_3ds_paid" {
		t.Errorf("after the events: %+v; want succeeded with one order paid by ch_3ds_paid", got)
	}
	var outcomes map[string]string
	rows, err := s.DB.Query(`SELECT id, outcome FROM processor_events WHERE object_id = $1`, intent)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	outcomes = map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		outcomes[k] = v
	}
	if outcomes["evt_3ds_ok"] != "applied" || outcomes["evt_3ds_failed_before"] != "superseded" || len(outcomes) != 2 {
		t.Errorf("kept events %v; want the success applied once and the older failure superseded", outcomes)
	}
}
