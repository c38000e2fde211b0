package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// TestListSubscriptionsStatementsPerRequest measures GET /v1/subscriptions/?limit=100 through
// the real /v1 handler on a counting connection: a page of 100 subscriptions, each with its
// customer, discount, prices, pending update and product (prices, benefits), costs the
// statements a page of 10 does.
//
// Not parallel, so the loaders' batch windows are not disturbed by other tests.
func TestListSubscriptionsStatementsPerRequest(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := newV1On(t, db)
	w := newSubscriptionWorld(t, s)
	for i := range 110 {
		c := s.NewCustomer(t, w.org.ID, "")
		started := w.base.Add(time.Duration(i) * time.Minute)
		sub, err := storage.CreateSubscription(context.Background(), db, w.org.ID, started, storage.SubscriptionWrite{
			CustomerID: c.ID, ProductID: w.plan.ID, DiscountID: &w.percent.ID, Status: "active", Amount: 1500,
			Currency: "usd", RecurringInterval: "month", RecurringIntervalCount: 1, CurrentPeriodStart: started,
			CurrentPeriodEnd: started.AddDate(0, 1, 0), StartedAt: &started})
		if err != nil {
			t.Fatal(err)
		}
		s.Exec(t, `INSERT INTO subscription_prices (subscription_id, product_price_id, organization_id)
			SELECT $1, id, organization_id FROM product_prices WHERE product_id = $2`, sub.ID, w.plan.ID)
	}
	cost := func(limit int) int64 {
		counter.Reset()
		rec := s.do(t, call{target: fmt.Sprintf("/v1/subscriptions/?limit=%d", limit), token: w.org.Token})
		want{status: 200}.check(t, rec)
		if _, page := subscriptionIDs(t, rec.Body.Bytes()); len(page.Items) != limit {
			t.Fatalf("%d items, want %d", len(page.Items), limit)
		}
		return counter.Snapshot().Statements()
	}
	ten, hundred := cost(10), cost(100)
	t.Logf("GET /v1/subscriptions/: %d SQL statements for limit=10, %d for limit=100", ten, hundred)
	if ten != hundred {
		t.Errorf("statements grow with the page: %d for 10, %d for 100", ten, hundred)
	}
}

// TestSubscriptionEventsRenderTheWebhookPayloads renders subscription.* events the way the
// serve loop does: data is the subscription's item of GET /v1/subscriptions/ byte for byte,
// and each payload matches its webhook schema.
func TestSubscriptionEventsRenderTheWebhookPayloads(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	w := newSubscriptionWorld(t, s)
	rec := s.do(t, call{target: "/v1/subscriptions/?sorting=started_at&limit=1", token: w.org.Token})
	want{status: 200}.check(t, rec)
	var body struct{ Items []json.RawMessage }
	decodeJSON(t, rec.Body.Bytes(), &body)
	item := body.Items[0]
	for typ, schema := range map[string]string{
		"subscription.created": "WebhookSubscriptionCreatedPayload", "subscription.updated": "WebhookSubscriptionUpdatedPayload",
		"subscription.active": "WebhookSubscriptionActivePayload", "subscription.canceled": "WebhookSubscriptionCanceledPayload",
		"subscription.uncanceled": "WebhookSubscriptionUncanceledPayload", "subscription.revoked": "WebhookSubscriptionRevokedPayload",
		"subscription.cycled": "WebhookSubscriptionCycledPayload", "subscription.past_due": "WebhookSubscriptionPastDuePayload",
		"subscription.paused": "WebhookSubscriptionPausedPayload", "subscription.resumed": "WebhookSubscriptionResumedPayload",
	} {
		t.Run(typ+" renders as "+schema, func(t *testing.T) {
			gotType, data := s.webhookPayload(t, w.org.ID, typ, schema, w.a.ID)
			if gotType != typ || string(data) != string(item) {
				t.Errorf("payload %s %s\nwant data %s", gotType, data, item)
			}
		})
	}
}
