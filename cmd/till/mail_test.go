package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"till/internal/auth"
	"till/internal/jobs"
)

func TestMailConfiguration(t *testing.T) {
	for _, c := range []struct {
		name      string
		vars      map[string]string
		wantErr   string
		wantPrint []string
		hidden    string
	}{
		{name: "without an SMTP server mail goes to the mailbox in the data directory",
			vars:      map[string]string{"TILL_DATA_DIR": "/srv/till"},
			wantPrint: []string{"TILL_MAILBOX=/srv/till/mailbox", "TILL_MAIL_FROM=Till <till@127.0.0.1>"}},
		{name: "a mailbox of one's own is printed",
			vars:      map[string]string{"TILL_MAILBOX": "/tmp/till.mbox"},
			wantPrint: []string{"TILL_MAILBOX=/tmp/till.mbox"}},
		{name: "an SMTP URL is printed with its password masked",
			vars:      map[string]string{"TILL_SMTP_URL": "smtps://till:hunter2@mail.example.com", "TILL_PUBLIC_URL": "https://till.example.com"},
			wantPrint: []string{"TILL_SMTP_URL=smtps://till:xxxxx@mail.example.com", "TILL_MAIL_FROM=Till <till@till.example.com>"},
			hidden:    "hunter2"},
		{name: "an SMTP URL of another scheme stops the server",
			vars: map[string]string{"TILL_SMTP_URL": "http://till:hunter2@mail.example.com"}, wantErr: "scheme"},
		{name: "an SMTP URL's password is not shown in its error",
			vars: map[string]string{"TILL_SMTP_URL": "smtp://till:hunter2@mail.example.com:0x"}, wantErr: "xxxxx", hidden: "hunter2"},
		{name: "a sender that is not an address stops the server",
			vars: map[string]string{"TILL_MAIL_FROM": "not an address"}, wantErr: "TILL_MAIL_FROM"},
		{name: "without identity providers sign-in is by mailed code only",
			vars: map[string]string{}, wantPrint: []string{"TILL_OIDC_PROVIDERS=(none"}},
		{name: "identity providers are printed with the redirect URI to register, never their secrets",
			vars: map[string]string{"TILL_PUBLIC_URL": "https://till.example.com", "TILL_OIDC_PROVIDERS": `[{"name":"corp",` +
				`"issuer":"https://id.example.com","client_id":"till","client_secret":"hunter2"}]`},
			wantPrint: []string{"TILL_OIDC_PROVIDERS=corp (https://id.example.com) (redirect URI https://till.example.com/auth/oidc/<name>/callback)"},
			hidden:    "hunter2"},
		{name: "identity providers that do not parse stop the server",
			vars:    map[string]string{"TILL_OIDC_PROVIDERS": `[{"name":"corp","issuer":"http://id.example.com","client_id":"c"}]`},
			wantErr: "TILL_OIDC_PROVIDERS[0] (corp): issuer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadConfig(getenvOf(c.vars))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || c.hidden != "" && strings.Contains(err.Error(), c.hidden) {
					t.Fatalf("loadConfig = %v, want an error mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cfg.print(&out)
			for _, want := range c.wantPrint {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the printed configuration lacks %q:\n%s", want, out.String())
				}
			}
			if c.hidden != "" && strings.Contains(out.String(), c.hidden) {
				t.Errorf("the printed configuration shows the password:\n%s", out.String())
			}
		})
	}
}

// TestANewUserSignsInWithTheCodeFromTheMailbox is the embedded default's sign-in: no mail
// server, the code read from the mailbox file, the session working on /graphql.
func TestANewUserSignsInWithTheCodeFromTheMailbox(t *testing.T) {
	logs := &syncBuffer{}
	app := newTestApp(t, map[string]string{}, logs)
	post := func(path string, form url.Values) *httptest.ResponseRecorder {
		body := form.Encode()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Content-Length", strconv.Itoa(len(body)))
		req.Header.Set("Origin", app.cfg.PublicURL)
		rec := httptest.NewRecorder()
		app.handler.ServeHTTP(rec, req)
		return rec
	}
	if rec := post("/login", url.Values{"email": {"first@example.com"}}); rec.Code != http.StatusOK {
		t.Fatalf("POST /login: %d %s", rec.Code, rec.Body)
	}
	if _, err := (&jobs.Worker{DB: app.db.DB, Handlers: app.resolver.JobHandlers()}).RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	box, err := os.ReadFile(filepath.Join(app.cfg.DataDir, "mailbox"))
	if err != nil {
		t.Fatalf("the mailbox: %v", err)
	}
	code := regexp.MustCompile(`\b[A-Z2-9]{4}-[A-Z2-9]{4}\b`).FindString(string(box))
	if code == "" || !strings.Contains(string(box), "To: <first@example.com>") {
		t.Fatalf("no code for first@example.com in the mailbox:\n%s", box)
	}
	if !strings.Contains(logs.String(), code) {
		t.Error("the code is not in the log")
	}
	rec := post("/login/code", url.Values{"email": {"first@example.com"}, "code": {code}, "return_to": {"/graphql"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/graphql" {
		t.Fatalf("POST /login/code: %d %v", rec.Code, rec.Header())
	}
	var session string
	for _, c := range rec.Result().Cookies() {
		if c.Name == auth.SessionCookie {
			session = c.Value
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape("{ viewer { email } }"), nil)
	req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: session})
	got := httptest.NewRecorder()
	app.handler.ServeHTTP(got, req)
	if !strings.Contains(got.Body.String(), `"email":"first@example.com"`) {
		t.Errorf("the session on /graphql: %d %s", got.Code, got.Body)
	}
}
