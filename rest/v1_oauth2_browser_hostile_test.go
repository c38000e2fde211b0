package rest_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestHostileConsentRequestsNeitherFailNorRedirectElsewhere sends the authorization endpoint
// and the consent form what no page sends, as a signed-in browser and as an anonymous one:
// nothing is a server error, and every redirect goes to the client's registered redirect
// URI or to the sign-in page of this origin, coming back to the authorization endpoint.
func TestHostileConsentRequestsNeitherFailNorRedirectElsewhere(t *testing.T) {
	t.Parallel()
	f := newOAuthFixture(t)
	session := f.signIn(t)
	c := f.client(t, "client_secret_post", "openid email")
	form := pageForm(t, f.page(t, session, "/v1/oauth2/authorize?response_type=code&client_id="+c.ID).Body.String())
	huge := strings.Repeat("a", 1<<20)
	queries := map[string]string{
		"a NUL in the state":               "response_type=code&client_id=" + c.ID + "&state=%00",
		"invalid UTF-8 in the scope":       "response_type=code&client_id=" + c.ID + "&scope=%ff%fe",
		"a NUL in the client id":           "response_type=code&client_id=till_ci_%00",
		"a megabyte of state":              "response_type=code&client_id=" + c.ID + "&state=" + huge,
		"a megabyte of client id":          "response_type=code&client_id=" + huge,
		"a megabyte of nonce":              "response_type=code&client_id=" + c.ID + "&nonce=" + huge,
		"another site as redirect URI":     "response_type=code&client_id=" + c.ID + "&redirect_uri=https%3A%2F%2Fevil.example%2F",
		"a redirect URI with a path added": "response_type=code&client_id=" + c.ID + "&redirect_uri=" + url.QueryEscape(redirectURI+"/../x"),
		"a protocol-relative return":       "response_type=code&client_id=" + c.ID + "&return_to=%2F%2Fevil.example",
		"a prompt of its own":              "response_type=code&client_id=" + c.ID + "&prompt=%0d%0aLocation:%20https://evil.example",
		"a repeated client id":             "response_type=code&client_id=" + c.ID + "&client_id=till_ci_other",
	}
	for name, query := range queries {
		for _, who := range []string{"", session} {
			t.Run(name+" to the authorization endpoint of "+map[string]string{"": "an anonymous browser", session: "a signed-in browser"}[who], func(t *testing.T) {
				rec := f.page(t, who, "/v1/oauth2/authorize?"+query)
				checkLocation(t, rec.Code, rec.Header().Get("Location"))
			})
		}
		t.Run(name+" in the consent form", func(t *testing.T) {
			q, _ := url.ParseQuery(query)
			posted := cloneForm(form)
			for k, v := range q {
				posted[k] = v
			}
			posted.Set("action", "allow")
			rec := f.postForm(t, session, "/v1/oauth2/consent", posted)
			checkLocation(t, rec.Code, rec.Header().Get("Location"))
		})
	}
	for name, body := range map[string]string{
		"a NUL in the action":           "action=allow%00&csrf_token=" + url.QueryEscape(form.Get("csrf_token")),
		"invalid UTF-8 in a name":       "%ff=1&action=allow",
		"a body past the limit":         "action=allow&state=" + strings.Repeat("b", 70<<10),
		"a broken escape":               "action=allow&state=%zz",
		"organizations by the thousand": "action=allow&organizations=" + strings.Repeat(f.orgA.ID.String()+"&organizations=", 2000) + "x",
	} {
		t.Run(name+" in the consent form", func(t *testing.T) {
			h := browserHeaders(session)
			h["Content-Type"] = "application/x-www-form-urlencoded"
			rec := f.s.do(t, call{method: http.MethodPost, target: "/v1/oauth2/consent", body: body, header: withLength(h, body)})
			if rec.Code >= 500 || rec.Code == http.StatusFound {
				t.Errorf("answered %d %s", rec.Code, rec.Header().Get("Location"))
			}
		})
	}
}

// checkLocation fails unless an answer is no server error and any redirect it makes goes to
// the client's registered redirect URI or to this origin's sign-in page, coming back to the
// authorization endpoint.
func checkLocation(t *testing.T, status int, location string) {
	t.Helper()
	if status >= 500 {
		t.Fatalf("answered %d", status)
	}
	if location == "" {
		return
	}
	u, err := url.Parse(location)
	switch {
	case err != nil:
		t.Errorf("Location %q does not parse", location)
	case strings.HasPrefix(location, redirectURI+"?"):
	case u.Host == "" && u.Path == "/login":
		back, err := url.Parse(u.Query().Get("return_to"))
		if err != nil || back.Host != "" || back.Scheme != "" || back.Path != "/v1/oauth2/authorize" {
			t.Errorf("the sign-in page returns to %q", u.Query().Get("return_to"))
		}
	default:
		t.Errorf("redirected to %s", location)
	}
}

func withLength(h map[string]string, body string) map[string]string {
	h["Content-Length"] = strconv.Itoa(len(body))
	return h
}
