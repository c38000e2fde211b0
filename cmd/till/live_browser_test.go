package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"till/internal/browsertest"
	"till/storage/storagetest"
)

// liveSubscription is what the seller types into GraphiQL. It starts after cursor 0, before
// the organization's first event, so the purchase made before it was opened shows as soon as
// the stream runs: the sign that the next purchase happens while the stream is open.
const liveSubscription = `subscription {
  orderEvents(after: "0") {
    cursor
    type
    order { id totalAmount customer { email } }
  }
}`

// TestBrowserWatchesOrdersArriveInGraphiQL tries live subscriptions from outside: a real
// `till serve` child process (its notification listener and live hub as it runs them),
// GraphiQL in headless Chromium with the organization token in its headers editor, and
// purchases made with curl, as a shop's backend creates a checkout and its buyer's page pays
// it. The second purchase is made while the subscription is open: its events reach the page
// only through the server's live hub. The page is saved as a screenshot for a person to see.
func TestBrowserWatchesOrdersArriveInGraphiQL(t *testing.T) {
	browser := browsertest.New(t, 2*time.Minute)
	dataDir := t.TempDir()
	vars := map[string]string{"DATABASE_URL": storagetest.DSN(t), "TILL_DATA_DIR": dataDir,
		"TILL_BLOB_DIR": filepath.Join(dataDir, "blobs"), "TILL_SECRET": "live-browser-test", "TILL_LOG_LEVEL": "warn"}
	var out bytes.Buffer
	for _, args := range [][]string{{"org", "create", "--name", "Live Shop", "--slug", "live-shop"},
		{"token", "create", "--org", "live-shop", "--scopes", "all"}} {
		if err := run(t.Context(), args, getenvOf(vars), &out); err != nil {
			t.Fatal(err)
		}
	}
	m := tokenLine.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no token printed:\n%s", out.String())
	}
	token := m[1]
	till := startTill(t, "serve", vars)
	shop := newShopClient(t, till.base)
	var product struct{ CreateProduct struct{ ID string } }
	shop.graphql(token, `mutation { createProduct(input: {name: "Live Ebook", prices: [{amountType: fixed, priceAmount: 2500}]}) { id } }`,
		nil, &product)
	before := shop.buy(token, product.CreateProduct.ID, "early@example.com")

	headers, _ := json.Marshal(map[string]string{"Authorization": "Bearer " + token})
	err := chromedp.Do(browser, chromedp.EmulateViewport(1400, 900),
		// GraphiQL keeps its headers editor in localStorage under the page's "till:" prefix.
		chromedp.Navigate(till.base+"/healthz"),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("till:graphiql:headers", %s)`, jsString(string(headers)))),
		chromedp.Navigate(till.base+"/graphql"),
		chromedp.WaitVisible(chromedp.CSS(".graphiql-query-editor .CodeMirror")),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror.setValue(%s)`,
			jsString(liveSubscription))),
		// The editor parses what was typed a moment later (a debounce); until then GraphiQL would
		// run the page's previous document.
		chromedp.Poll[chromedp.Void](`document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror
			.documentAST?.definitions[0]?.operation === "subscription"`),
		chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll(".graphiql-editor-tools button")]
			.find(b => b.textContent.trim() === "Headers").click()`),
		chromedp.Click(chromedp.CSS(".graphiql-execute-button")))
	if err != nil {
		t.Fatalf("running the subscription in GraphiQL: %v\n%s", err, till.out)
	}
	shown, err := chromedp.Run(browser, chromedp.Evaluate[string](
		`document.querySelector('section[aria-label="Headers"] .graphiql-editor:not(.hidden) .CodeMirror').CodeMirror.getValue()`))
	if err != nil || !strings.Contains(shown, token) {
		t.Fatalf("GraphiQL's headers editor shows %q (%v), want the organization token", shown, err)
	}
	if text := waitForResult(browser, before.orderID); !strings.Contains(text, before.orderID) {
		t.Fatalf("the subscription never showed the earlier order %s; the result pane says:\n%s\nscreenshot: %s\nserver log:\n%s",
			before.orderID, text, saveScreenshot(t, browser), till.out)
	}

	live := shop.buy(token, product.CreateProduct.ID, "live@example.com")
	text := waitForResult(browser, live.orderID)
	shot := saveScreenshot(t, browser)
	var missing []string
	for _, want := range []string{live.orderID, `"type": "order.`, `"totalAmount": 2500`, `"email": "live@example.com"`} {
		if !strings.Contains(text, want) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		t.Errorf("after the purchase of checkout %s the result pane lacks %q; it says:\n%s\nscreenshot: %s\nserver log:\n%s",
			live.checkoutID, missing, text, shot, till.out)
	}
}

// waitForResult waits up to 30 seconds for GraphiQL's result pane to show want and returns
// the pane's text then, or at the deadline.
func waitForResult(browser context.Context, want string) string {
	ctx, cancel := context.WithTimeout(browser, 30*time.Second)
	defer cancel()
	const pane = `(document.querySelector(".graphiql-response .result-window") || {innerText: ""}).innerText`
	_, _ = chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`%s.includes(%s)`, pane, jsString(want)),
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(0)))
	text, _ := chromedp.Run(browser, chromedp.Evaluate[string](pane))
	return text
}

// saveScreenshot saves the whole page as graphiql-subscription.png in the system's temporary
// directory, where it outlives the test for a person to look at, and logs its path.
func saveScreenshot(t *testing.T, browser context.Context) string {
	t.Helper()
	png, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("taking the screenshot: %v", err)
		return ""
	}
	path := filepath.Join(os.TempDir(), "graphiql-subscription.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("saving the screenshot: %v", err)
		return ""
	}
	t.Logf("screenshot of GraphiQL: %s", path)
	return path
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// shopClient makes requests as a shop's integration does: with the curl binary when the
// machine has one, else with net/http (and the test log says so).
type shopClient struct {
	t          *testing.T
	base, curl string
}

func newShopClient(t *testing.T, base string) *shopClient {
	path, err := exec.LookPath("curl")
	if err != nil {
		t.Logf("no curl (%v): the requests go through net/http", err)
	}
	return &shopClient{t: t, base: base, curl: path}
}

// shopPurchase is what one buy made.
type shopPurchase struct{ checkoutID, orderID string }

// buy sells product to email: the shop's backend creates the checkout with its token, the
// buyer's page pays it with its client secret and no token (the test processor's tok_visa),
// and the backend then finds the order through /v1.
func (c *shopClient) buy(token, product, email string) shopPurchase {
	c.t.Helper()
	var created struct {
		CreateCheckout struct{ ID, ClientSecret string }
	}
	c.graphql(token, `mutation($in: CheckoutCreateInput!) { createCheckout(input: $in) { id clientSecret } }`,
		map[string]any{"in": map[string]any{"products": []string{product}}}, &created)
	var confirmed struct{ ConfirmCheckout struct{ Status string } }
	c.graphql("", `mutation($in: CheckoutConfirmInput!) { confirmCheckout(input: $in) { status } }`,
		map[string]any{"in": map[string]any{"clientSecret": created.CreateCheckout.ClientSecret, "paymentToken": "tok_visa",
			"customerEmail": email}}, &confirmed)
	if confirmed.ConfirmCheckout.Status != "succeeded" {
		c.t.Fatalf("confirming the checkout: status %q, want succeeded", confirmed.ConfirmCheckout.Status)
	}
	status, body := c.send(http.MethodGet, "/v1/orders/?checkout_id="+created.CreateCheckout.ID, token, nil)
	var orders struct {
		Items []struct {
			ID   string `json:"id"`
			Paid bool   `json:"paid"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &orders); status != http.StatusOK || err != nil || len(orders.Items) != 1 || !orders.Items[0].Paid {
		c.t.Fatalf("GET /v1/orders/?checkout_id=%s: %d %s, want one paid order", created.CreateCheckout.ID, status, body)
	}
	return shopPurchase{checkoutID: created.CreateCheckout.ID, orderID: orders.Items[0].ID}
}

// graphql POSTs an operation to /graphql with token as bearer (none when empty); it must
// succeed, and its data is decoded into out.
func (c *shopClient) graphql(token, query string, vars map[string]any, out any) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	status, answer := c.send(http.MethodPost, "/graphql", token, body)
	var res struct {
		Data   json.RawMessage
		Errors []json.RawMessage
	}
	if err := json.Unmarshal(answer, &res); status != http.StatusOK || err != nil || len(res.Errors) > 0 {
		c.t.Fatalf("POST /graphql %s: %d %s", query, status, answer)
	}
	if err := json.Unmarshal(res.Data, out); err != nil {
		c.t.Fatalf("decoding %s: %v", res.Data, err)
	}
}

// send makes one request with token as bearer (none when empty) and a JSON body (none when
// nil), and returns the answer's status and body.
func (c *shopClient) send(method, path, token string, body []byte) (int, []byte) {
	c.t.Helper()
	if c.curl == "" {
		return c.sendHTTP(method, path, token, body)
	}
	args := []string{"-sS", "--max-time", "30", "-X", method, "-H", "Accept: application/json", "-w", "\n%{http_code}"}
	if token != "" {
		args = append(args, "-H", "Authorization: Bearer "+token)
	}
	if body != nil {
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", "@-")
	}
	cmd := exec.CommandContext(c.t.Context(), c.curl, append(args, c.base+path)...)
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		c.t.Fatalf("curl %s %s: %v: %s", method, path, err, stderr.String())
	}
	answer, code, _ := cutLast(string(out), "\n")
	status, err := strconv.Atoi(code)
	if err != nil {
		c.t.Fatalf("curl %s %s printed no status: %q", method, path, out)
	}
	return status, []byte(answer)
}

// sendHTTP is send through net/http.
func (c *shopClient) sendHTTP(method, path, token string, body []byte) (int, []byte) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return res.StatusCode, answer
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
