package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"till/internal/browsertest"
	"till/internal/jobs"
)

// TestBrowserAuthorizesAThirdPartyApplication plays a third-party application and its user
// in headless Chromium against Till's real handler: the application registers itself
// (dynamic registration) and sends the browser to the authorization endpoint with PKCE; the
// user signs in on the sign-in page with the code from the mailbox, sees the consent page
// and presses Allow; the browser lands on the application's redirect URI with a code, which
// the application exchanges for tokens that read the user's profile at userinfo. The same
// request again skips the page (the consent is remembered), prompt=consent shows it again,
// and prompt=login asks for the sign-in again before showing it.
func TestBrowserAuthorizesAThirdPartyApplication(t *testing.T) {
	browser := browsertest.New(t, 2*time.Minute)
	till := httptest.NewUnstartedServer(nil)
	defer till.Close()
	vars := map[string]string{"TILL_PUBLIC_URL": "http://" + till.Listener.Addr().String()}
	app := newTestApp(t, vars, &syncBuffer{})
	ctx := context.Background()
	for _, args := range [][]string{{"org", "create", "--name", "Acme", "--slug", "acme"},
		{"user", "create", "--email", "ada@example.com", "--org", "acme", "--role", "owner"}} {
		if err := run(ctx, args, getenvOf(vars), &bytes.Buffer{}); err != nil {
			t.Fatalf("till %s: %v", strings.Join(args, " "), err)
		}
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"token", "create", "--user", "ada@example.com", "--scope", "organizations:write"},
		getenvOf(vars), &out); err != nil {
		t.Fatal(err)
	}
	developerToken := regexp.MustCompile(`till_pat_[A-Za-z0-9]{43}`).FindString(out.String())
	till.Config.Handler = app.handler
	till.Start()

	client := newThirdParty(t)
	client.register(t, till.URL, developerToken)

	// The first authorization: sign in, see the page, allow.
	if err := chromedp.Do(browser, chromedp.Navigate(client.authorizeURL(till.URL, ""))); err != nil {
		t.Fatal(err)
	}
	signInWithMailedCode(t, browser, app, "ada@example.com")
	title, err := chromedp.Run(browser, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	scopes, err := chromedp.Run(browser, chromedp.TextContent(chromedp.CSS("#scopes")))
	if err != nil {
		t.Fatal(err)
	}
	if title != "Authorize Third Party" || !strings.Contains(scopes, "Read your email address") {
		t.Errorf("the page %q lists %q, want the application's name and its scopes", title, scopes)
	}
	if err := chromedp.Do(browser, chromedp.Click(chromedp.CSS("#allow")), chromedp.WaitVisible(chromedp.CSS("#callback"))); err != nil {
		t.Fatalf("pressing Allow: %v", err)
	}
	tokens := client.exchange(t, till.URL)
	if email := client.userinfo(t, till.URL, tokens.AccessToken); email != "ada@example.com" {
		t.Errorf("userinfo names %q, want ada@example.com", email)
	}

	// The same request again: the consent is remembered, no page.
	if err := chromedp.Do(browser, chromedp.Navigate(client.authorizeURL(till.URL, "")),
		chromedp.WaitVisible(chromedp.CSS("#callback"))); err != nil {
		t.Fatalf("the remembered authorization: %v", err)
	}
	client.exchange(t, till.URL)

	// prompt=consent shows the page even so.
	if err := chromedp.Do(browser, chromedp.Navigate(client.authorizeURL(till.URL, "consent")),
		chromedp.WaitVisible(chromedp.CSS("#allow"))); err != nil {
		t.Fatalf("prompt=consent: %v", err)
	}

	// prompt=login asks for the sign-in again over the live session, then shows the page.
	if err := chromedp.Do(browser, chromedp.Navigate(client.authorizeURL(till.URL, "login"))); err != nil {
		t.Fatal(err)
	}
	signInWithMailedCode(t, browser, app, "ada@example.com")
	if err := chromedp.Do(browser, chromedp.Click(chromedp.CSS("#allow")), chromedp.WaitVisible(chromedp.CSS("#callback"))); err != nil {
		t.Fatalf("pressing Allow after signing in again: %v", err)
	}
	client.exchange(t, till.URL)
}

// signInWithMailedCode signs the browser in on the sign-in page it was sent to: it asks for
// a code for email, reads the code from the local mailbox once the mail job ran, types it,
// and waits for the consent page the sign-in leads back to.
func signInWithMailedCode(t *testing.T, browser context.Context, app testApp, email string) {
	t.Helper()
	err := chromedp.Do(browser, chromedp.WaitVisible(chromedp.CSS("#email")), chromedp.SendKeys(chromedp.CSS("#email"), email),
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
	codes := regexp.MustCompile(`\b[A-Z2-9]{4}-[A-Z2-9]{4}\b`).FindAllString(string(box), -1)
	if len(codes) == 0 {
		t.Fatalf("no code in the mailbox:\n%s", box)
	}
	err = chromedp.Do(browser, chromedp.SendKeys(chromedp.CSS("#code"), codes[len(codes)-1]),
		chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("#allow")))
	if err != nil {
		t.Fatalf("typing the code: %v", err)
	}
}

// thirdParty is an application of another origin: it registers with Till, sends browsers to
// authorize with PKCE, and receives them at its redirect URI, where it keeps what arrives.
type thirdParty struct {
	srv      *httptest.Server
	clientID string
	verifier string
	state    string

	mu       sync.Mutex
	callback url.Values
}

func newThirdParty(t *testing.T) *thirdParty {
	t.Helper()
	c := &thirdParty{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		c.mu.Lock()
		c.callback = r.URL.Query()
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>Third Party</title><p id="callback">Back at the application.</p>`))
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *thirdParty) redirectURI() string { return c.srv.URL + "/callback" }

// register creates the application's public client through dynamic registration.
func (c *thirdParty) register(t *testing.T, till, token string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": "Third Party", "redirect_uris": []string{c.redirectURI()},
		"token_endpoint_auth_method": "none", "scope": "openid email", "client_uri": c.srv.URL})
	req, _ := http.NewRequest(http.MethodPost, till+"/v1/oauth2/register", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if status := doJSON(t, req, &reg); status != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("registration answered %d %+v", status, reg)
	}
	c.clientID = reg.ClientID
}

// authorizeURL starts an authorization with a new state and PKCE verifier.
func (c *thirdParty) authorizeURL(till, prompt string) string {
	c.verifier, c.state = rand.Text()+rand.Text(), rand.Text()
	sum := sha256.Sum256([]byte(c.verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {c.clientID}, "redirect_uri": {c.redirectURI()},
		"scope": {"openid email"}, "state": {c.state}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"}}
	if prompt != "" {
		q.Set("prompt", prompt)
	}
	return till + "/v1/oauth2/authorize?" + q.Encode()
}

// tokenAnswer is what the token endpoint answers.
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	IDToken     string `json:"id_token"`
}

// exchange redeems the code that reached the redirect URI with the state sent.
func (c *thirdParty) exchange(t *testing.T, till string) tokenAnswer {
	t.Helper()
	c.mu.Lock()
	back := c.callback
	c.mu.Unlock()
	if back.Get("state") != c.state || back.Get("code") == "" {
		t.Fatalf("the redirect URI received %v, want a code and state %s", back, c.state)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")}, "redirect_uri": {c.redirectURI()},
		"client_id": {c.clientID}, "code_verifier": {c.verifier}}
	req, _ := http.NewRequest(http.MethodPost, till+"/v1/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var tok tokenAnswer
	if status := doJSON(t, req, &tok); status != http.StatusOK || tok.AccessToken == "" || tok.IDToken == "" {
		t.Fatalf("the token endpoint answered %d %+v", status, tok)
	}
	return tok
}

// userinfo reads the user's email with an access token.
func (c *thirdParty) userinfo(t *testing.T, till, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, till+"/v1/oauth2/userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	var info struct {
		Email string `json:"email"`
	}
	if status := doJSON(t, req, &info); status != http.StatusOK {
		t.Fatalf("userinfo answered %d", status)
	}
	return info.Email
}

func doJSON(t *testing.T, req *http.Request, out any) int {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_ = json.NewDecoder(res.Body).Decode(out)
	return res.StatusCode
}
