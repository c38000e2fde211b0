package main

import (
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"till/internal/browsertest"
	"till/internal/jobs"
)

// TestBrowserSignsInThroughTheLoginPage plays a new user in headless Chromium against
// Till's real handler with no mail server: the sign-in page asks for an email, the code is
// read from the mailbox file, and signing in lands on return_to, signed in, with a session
// cookie no script of the page can read.
func TestBrowserSignsInThroughTheLoginPage(t *testing.T) {
	browser := browsertest.New(t, time.Minute)
	app := newTestApp(t, map[string]string{}, &syncBuffer{})
	till := httptest.NewServer(app.handler)
	defer till.Close()
	const email = "chromium@example.com"
	returnTo := "/login?welcome=1"

	err := chromedp.Do(browser, chromedp.Navigate(till.URL+"/login?return_to="+url.QueryEscape(returnTo)),
		chromedp.WaitVisible(chromedp.CSS("#email")), chromedp.SendKeys(chromedp.CSS("#email"), email),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("#code")))
	if err != nil {
		t.Fatalf("asking for a code: %v", err)
	}
	if _, err := (&jobs.Worker{DB: app.db.DB, Handlers: app.resolver.JobHandlers()}).RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	box, err := os.ReadFile(filepath.Join(app.cfg.DataDir, "mailbox"))
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile(`\b[A-Z2-9]{4}-[A-Z2-9]{4}\b`).FindString(string(box))
	if code == "" {
		t.Fatalf("no code in the mailbox:\n%s", box)
	}
	err = chromedp.Do(browser, chromedp.SendKeys(chromedp.CSS("#code"), code),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("form[action='/logout']")))
	if err != nil {
		t.Fatalf("typing the code: %v", err)
	}
	at, err := chromedp.Run(browser, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := chromedp.Run(browser, chromedp.Evaluate[string]("document.cookie"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(at, returnTo) || !strings.Contains(text, "You are signed in as "+email) {
		t.Errorf("landed on %s showing %q, want %s signed in as %s", at, text, returnTo, email)
	}
	if scripts != "" {
		t.Errorf("a script reads the cookies %q; the session cookie must be HttpOnly", scripts)
	}
}
