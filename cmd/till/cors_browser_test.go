package main

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"till/internal/browsertest"
	"till/storage"
)

// corsPage calls Till from another origin, as a dashboard or a seller's page would, and
// writes each answer (status and body) or the browser's refusal into the page.
var corsPage = template.Must(template.New("page").Parse(`<!doctype html>
<title>calls Till from another origin</title>
<pre id="graphql"></pre><pre id="license"></pre><pre id="license-with-credentials"></pre>
<script>
const till = {{.Till}}, token = {{.Token}};
const validate = JSON.stringify({key: {{.Key}}, organization_id: {{.OrganizationID}}});
async function call(id, path, init) {
  let text;
  try {
    const res = await fetch(till + path, init);
    text = res.status + " " + await res.text();
  } catch (e) {
    text = "blocked: " + e;
  }
  document.getElementById(id).textContent = text;
}
(async () => {
  await call("graphql", "/graphql", {method: "POST", body: JSON.stringify({query: "{ organization { slug } }"}),
    headers: {"Authorization": "Bearer " + token, "Content-Type": "application/json"}});
  await call("license", "/v1/customer-portal/license-keys/validate", {method: "POST", body: validate,
    headers: {"Content-Type": "application/json"}});
  await call("license-with-credentials", "/v1/customer-portal/license-keys/validate", {method: "POST",
    body: validate, credentials: "include", headers: {"Content-Type": "application/json"}});
  document.body.dataset.done = "1";
})();
</script>`))

// corsPageData is what corsPage needs to call Till.
type corsPageData struct {
	Till, Token, Key string
	OrganizationID   uuid.UUID
}

// TestBrowserCallsTillFromAnotherOrigin loads the same page from an origin listed in
// TILL_CORS_ORIGINS and from one that is not, in headless Chromium, against Till's real
// handler: only the browser decides whether a page may read a cross-origin answer.
func TestBrowserCallsTillFromAnotherOrigin(t *testing.T) {
	browser := browsertest.New(t, time.Minute)
	var data corsPageData
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := corsPage.Execute(w, data); err != nil {
			t.Error(err)
		}
	})
	listed := httptest.NewServer(page)
	defer listed.Close()
	unlisted := httptest.NewServer(page)
	defer unlisted.Close()

	app := newTestApp(t, map[string]string{"TILL_CORS_ORIGINS": listed.URL, "TILL_LICENSE_RATE_PER_IP": "0"}, &syncBuffer{})
	till := httptest.NewServer(app.handler)
	defer till.Close()
	ctx := context.Background()
	demo, err := seedDemo(ctx, app.resolver, app.db.DB, app.secret)
	if err != nil {
		t.Fatal(err)
	}
	key, err := storage.GetLicenseKey(ctx, app.db.DB, []uuid.UUID{demo.Organization.ID},
		uuid.MustParse(demo.LicenseKeys["alice"]), storage.LicenseKeyOwner{})
	if err != nil {
		t.Fatal(err)
	}
	data = corsPageData{Till: till.URL, Token: demo.OrganizationToken, Key: key.Key, OrganizationID: demo.Organization.ID}

	granted := func(t *testing.T, answer string) {
		t.Helper()
		if !strings.HasPrefix(answer, "200 ") || !strings.Contains(answer, `"status":"granted"`) {
			t.Errorf("license validation from the page: %s, want 200 with the granted key", answer)
		}
	}
	blocked := func(t *testing.T, what, answer string) {
		t.Helper()
		if !strings.HasPrefix(answer, "blocked: TypeError") {
			t.Errorf("%s from the page: %s, want the browser to block it", what, answer)
		}
	}
	t.Run("a page on a listed origin reads the GraphQL answer", func(t *testing.T) {
		got := loadCORSPage(t, browser, listed.URL)
		var body struct {
			Data struct{ Organization struct{ Slug string } }
		}
		status, raw, _ := strings.Cut(got["graphql"], " ")
		if err := json.Unmarshal([]byte(raw), &body); status != "200" || err != nil ||
			body.Data.Organization.Slug != demo.Organization.Slug {
			t.Errorf("GraphQL from the page: %s, want 200 with organization %q", got["graphql"], demo.Organization.Slug)
		}
		granted(t, got["license"])
		granted(t, got["license-with-credentials"])
	})
	t.Run("the same page on an unlisted origin is blocked from GraphQL", func(t *testing.T) {
		got := loadCORSPage(t, browser, unlisted.URL)
		blocked(t, "GraphQL", got["graphql"])
		granted(t, got["license"])
		blocked(t, "a license validation with credentials", got["license-with-credentials"])
	})
}

// loadCORSPage opens corsPage at url in the browser, waits until its calls are done and
// returns what each wrote, by element id.
func loadCORSPage(t *testing.T, browser context.Context, url string) map[string]string {
	t.Helper()
	err := chromedp.Do(browser, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("body[data-done]")))
	if err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	got := map[string]string{}
	for _, id := range []string{"graphql", "license", "license-with-credentials"} {
		text, err := chromedp.Run(browser, chromedp.TextContent(chromedp.ID(id)))
		if err != nil {
			t.Fatalf("reading #%s: %v", id, err)
		}
		got[id] = text
	}
	return got
}
