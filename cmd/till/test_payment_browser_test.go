package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"till/internal/browsertest"
)

// TestBrowserFinishesA3DSTestPayment plays the buyer whose card asks for 3-D Secure, in
// headless Chromium against Till's real handler on the test processor: the confirmed
// checkout names the payment's client secret, the test processor's page at
// /test-payments/3ds/<secret> renders with nothing from another origin, and pressing
// "Complete authentication" settles the payment, whose event Till keeps for the checkout.
func TestBrowserFinishesA3DSTestPayment(t *testing.T) {
	browser := browsertest.New(t, time.Minute)
	app := newTestApp(t, map[string]string{}, &syncBuffer{})
	till := httptest.NewServer(app.handler)
	defer till.Close()
	ctx := context.Background()
	demo, err := seedDemo(ctx, app.resolver, app.db.DB, app.secret)
	if err != nil {
		t.Fatal(err)
	}
	graphql := func(query string, vars map[string]any, out any) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		req, _ := http.NewRequest(http.MethodPost, till.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+demo.OrganizationToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var product struct {
		Data struct{ CreateProduct struct{ ID string } }
	}
	graphql(`mutation { createProduct(input: {name: "Ebook", prices: [{amountType: fixed, priceAmount: 2000}]}) { id } }`,
		nil, &product)
	var created struct {
		Data struct{ CreateCheckout struct{ ID string } }
	}
	graphql(`mutation($p: UUID!) { createCheckout(input: {products: [$p], customerEmail: "3ds@example.com"}) { id } }`,
		map[string]any{"p": product.Data.CreateProduct.ID}, &created)
	var confirmed struct {
		Data struct {
			ConfirmCheckout struct {
				Status                   string
				PaymentProcessorMetadata map[string]string
			}
		}
	}
	graphql(`mutation($id: UUID!) { confirmCheckout(input: {id: $id, paymentToken: "tok_threeDSecure2Required"}) {
		status paymentProcessorMetadata } }`, map[string]any{"id": created.Data.CreateCheckout.ID}, &confirmed)
	secret := confirmed.Data.ConfirmCheckout.PaymentProcessorMetadata["intent_client_secret"]
	if confirmed.Data.ConfirmCheckout.Status != "confirmed" || secret == "" {
		t.Fatalf("confirmed checkout: %+v, want confirmed with a client secret", confirmed.Data.ConfirmCheckout)
	}

	err = chromedp.Do(browser, chromedp.Navigate(till.URL+"/test-payments/3ds/"+secret),
		chromedp.WaitVisible(chromedp.CSS("button")))
	if err != nil {
		t.Fatalf("the 3-D Secure page: %v", err)
	}
	title, err := chromedp.Run(browser, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(browser, chromedp.Click(chromedp.CSS("button")), chromedp.WaitVisible(chromedp.CSS("pre"))); err != nil {
		t.Fatalf("pressing Complete authentication: %v", err)
	}
	answer, err := chromedp.Run(browser, chromedp.TextContent(chromedp.CSS("pre")))
	if err != nil {
		t.Fatal(err)
	}
	if title != "3-D Secure test payment" || strings.TrimSpace(answer) != `{"status":"succeeded"}` {
		t.Errorf("page %q answered %q, want the test page answering succeeded", title, answer)
	}
	var kept int
	if err := app.db.DB.Get(&kept, `SELECT count(*) FROM processor_events WHERE type = 'payment_intent.succeeded'
		AND payload -> 'data' -> 'object' ->> 'id' = split_part($1, '_secret_', 1)`, secret); err != nil {
		t.Fatal(err)
	}
	if kept != 1 {
		t.Errorf("%d payment_intent.succeeded events kept for the payment, want 1", kept)
	}
}
