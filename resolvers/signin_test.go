package resolvers_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"till/internal/jobs"
	"till/internal/mail"
	"till/internal/ratelimit"
	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// inbox records the mail Till sends, as a mail server would receive it.
type inbox struct {
	mu   sync.Mutex
	msgs []mail.Message
}

func (b *inbox) Send(_ context.Context, m mail.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, m)
	return nil
}

var (
	mailedCode = regexp.MustCompile(`\b([A-Z2-9]{4})-([A-Z2-9]{4})\b`)
	mailedLink = regexp.MustCompile(`/login/link\?token=(till_sl_[A-Za-z0-9]+)`)
)

// signInWorld is an application whose mail lands in an inbox.
type signInWorld struct {
	*resolverstest.App
	inbox *inbox
}

func newSignInWorld(t *testing.T, opts ...resolverstest.Option) *signInWorld {
	t.Helper()
	box := &inbox{}
	opts = append([]resolverstest.Option{func(d *resolvers.Deps) { d.Mail = box }}, opts...)
	return &signInWorld{App: resolverstest.NewApp(t, storagetest.New(t), opts...), inbox: box}
}

// request asks for a code for email and delivers the mail, returning its code and link
// token and the mail itself.
func (w *signInWorld) request(t *testing.T, email string) (code, link string, m mail.Message) {
	t.Helper()
	ctx := context.Background()
	if err := w.Resolver.RequestSignInCode(ctx, email, "/dashboard"); err != nil {
		t.Fatalf("RequestSignInCode(%q): %v", email, err)
	}
	if _, err := (&jobs.Worker{DB: w.DB, Handlers: w.Resolver.JobHandlers()}).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	w.inbox.mu.Lock()
	defer w.inbox.mu.Unlock()
	m = w.inbox.msgs[len(w.inbox.msgs)-1]
	c, l := mailedCode.FindStringSubmatch(m.Text), mailedLink.FindStringSubmatch(m.Text)
	if m.To != email || c == nil || l == nil {
		t.Fatalf("the last mail, to %s, holds no code and link:\n%s", m.To, m.Text)
	}
	return c[1] + c[2], l[1], m
}

// refusal is the cause of a refused sign-in, or what else went wrong.
func refusal[T any](_ T, err error) string { return why(err) }

// why is the cause of a refusal, "signed in" for none.
func why(err error) string {
	var e *resolvers.Error
	switch {
	case err == nil:
		return "signed in"
	case errors.As(err, &e) && e.Cause != "":
		return e.Cause
	case errors.As(err, &e):
		return e.Code
	}
	return err.Error()
}

var client = resolvers.SignInClient{UserAgent: "Mozilla/5.0 (test)"}

func TestSigningInWithAMailedCode(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)

	t.Run("the right code signs a new address up, verified, with a session that leads back", func(t *testing.T) {
		code, _, m := w.request(t, "Ada@Example.com")
		if m.Subject != "Sign up to Till" {
			t.Errorf("subject %q, want the sign-up mail for an address without a user", m.Subject)
		}
		out, err := w.Resolver.SignInWithCode(ctx, "ada@example.com", strings.ToLower(code[:4])+" - "+code[4:], client)
		if err != nil {
			t.Fatalf("SignInWithCode: %v", err)
		}
		if !out.User.EmailVerified || out.User.Email != "Ada@Example.com" || out.ReturnTo != "/dashboard" ||
			!strings.HasPrefix(out.Token, "till_us_") || out.CSRFToken == "" {
			t.Errorf("signed in as %+v, return to %q, token %q", out.User, out.ReturnTo, out.Token)
		}
		var stored string
		w.Get(t, &stored, `SELECT token FROM user_sessions WHERE id = $1`, out.Session.ID)
		if strings.Contains(stored, out.Token) || len(stored) != 64 {
			t.Errorf("the session token is stored as %q, want only its 64-character HMAC", stored)
		}
	})
	t.Run("a known address gets the sign-in mail", func(t *testing.T) {
		if _, _, m := w.request(t, "ada@example.com"); m.Subject != "Sign in to Till" {
			t.Errorf("subject %q, want Sign in to Till", m.Subject)
		}
	})
	t.Run("a code works once", func(t *testing.T) {
		code, _, _ := w.request(t, "once@example.com")
		if _, err := w.Resolver.SignInWithCode(ctx, "once@example.com", code, client); err != nil {
			t.Fatal(err)
		}
		if got := refusal(w.Resolver.SignInWithCode(ctx, "once@example.com", code, client)); got != resolvers.SignInUsed {
			t.Errorf("a used code: %s, want %s", got, resolvers.SignInUsed)
		}
	})
	t.Run("a code expires after 15 minutes", func(t *testing.T) {
		code, _, _ := w.request(t, "late@example.com")
		w.Clock.Set(time.Now().Add(resolvers.SignInCodeLifetime + time.Second))
		defer w.Clock.Reset()
		if got := refusal(w.Resolver.SignInWithCode(ctx, "late@example.com", code, client)); got != resolvers.SignInExpired {
			t.Errorf("an expired code: %s, want %s", got, resolvers.SignInExpired)
		}
	})
	t.Run("five wrong codes kill the right one", func(t *testing.T) {
		code, _, _ := w.request(t, "guessed@example.com")
		wrong := wrongCode(code)
		for i := range 4 {
			if got := refusal(w.Resolver.SignInWithCode(ctx, "guessed@example.com", wrong, client)); got != resolvers.SignInWrongCode {
				t.Fatalf("wrong code %d: %s, want %s", i+1, got, resolvers.SignInWrongCode)
			}
		}
		if got := refusal(w.Resolver.SignInWithCode(ctx, "guessed@example.com", wrong, client)); got != resolvers.SignInExhausted {
			t.Errorf("the fifth wrong code: %s, want %s", got, resolvers.SignInExhausted)
		}
		if got := refusal(w.Resolver.SignInWithCode(ctx, "guessed@example.com", code, client)); got != resolvers.SignInExhausted {
			t.Errorf("the right code after five wrong ones: %s, want %s", got, resolvers.SignInExhausted)
		}
	})
	t.Run("another address's code signs nobody in", func(t *testing.T) {
		mine, _, _ := w.request(t, "mine@example.com")
		theirs, _, _ := w.request(t, "theirs@example.com")
		if got := refusal(w.Resolver.SignInWithCode(ctx, "mine@example.com", theirs, client)); got != resolvers.SignInWrongCode {
			t.Errorf("another address's code: %s, want %s", got, resolvers.SignInWrongCode)
		}
		if _, err := w.Resolver.SignInWithCode(ctx, "mine@example.com", mine, client); err != nil {
			t.Errorf("the address's own code after a wrong one: %v", err)
		}
	})
	t.Run("a new request replaces the pending code", func(t *testing.T) {
		old, oldLink, _ := w.request(t, "twice@example.com")
		fresh, _, _ := w.request(t, "twice@example.com")
		if old == fresh {
			t.Skip("two random codes matched")
		}
		if got := refusal(w.Resolver.SignInWithCode(ctx, "twice@example.com", old, client)); got != resolvers.SignInWrongCode {
			t.Errorf("the replaced code: %s, want %s", got, resolvers.SignInWrongCode)
		}
		if got := refusal(w.Resolver.SignInWithLink(ctx, oldLink, client)); got != resolvers.SignInNoCode {
			t.Errorf("the replaced link: %s, want %s", got, resolvers.SignInNoCode)
		}
	})
	t.Run("no code was asked for", func(t *testing.T) {
		if got := refusal(w.Resolver.SignInWithCode(ctx, "nobody@example.com", "ABCD-EFGH", client)); got != resolvers.SignInNoCode {
			t.Errorf("a code never requested: %s, want %s", got, resolvers.SignInNoCode)
		}
	})
}

func TestSigningInWithAMagicLink(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)
	code, link, _ := w.request(t, "link@example.com")
	out, err := w.Resolver.SignInWithLink(ctx, link, client)
	if err != nil {
		t.Fatalf("SignInWithLink: %v", err)
	}
	if out.User.Email != "link@example.com" || out.ReturnTo != "/dashboard" {
		t.Errorf("the link signed in %s, returning to %q", out.User.Email, out.ReturnTo)
	}
	for _, c := range []struct{ name, got, want string }{
		{"the link works once", refusal(w.Resolver.SignInWithLink(ctx, link, client)), resolvers.SignInUsed},
		{"the link used up its code", refusal(w.Resolver.SignInWithCode(ctx, "link@example.com", code, client)), resolvers.SignInUsed},
		{"a token Till never made is refused", refusal(w.Resolver.SignInWithLink(ctx, "till_sl_forged", client)), resolvers.SignInNoCode},
		{"an empty token is refused", refusal(w.Resolver.SignInWithLink(ctx, "", client)), resolvers.SignInNoCode},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("%s, want %s", c.got, c.want)
			}
		})
	}
	t.Run("an expired link is refused", func(t *testing.T) {
		_, link, _ := w.request(t, "late-link@example.com")
		w.Clock.Set(time.Now().Add(resolvers.SignInCodeLifetime + time.Second))
		defer w.Clock.Reset()
		if got := refusal(w.Resolver.SignInWithLink(ctx, link, client)); got != resolvers.SignInExpired {
			t.Errorf("%s, want %s", got, resolvers.SignInExpired)
		}
	})
}

func TestBadSignInInputIsRefusedAsInput(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)
	for _, c := range []struct{ name, email, code string }{
		{"a NUL byte in the email", "ada\x00@example.com", "ABCDEFGH"},
		{"an email that is not UTF-8", "ad\xffa@example.com", "ABCDEFGH"},
		{"a huge email", strings.Repeat("a", 100_000) + "@example.com", "ABCDEFGH"},
		{"no email", "", "ABCDEFGH"},
		{"a code with a NUL byte", "ada@example.com", "ABCD\x00EFG"},
		{"a huge code", "ada@example.com", strings.Repeat("A", 100_000)},
		{"a short code", "ada@example.com", "ABC"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := why(w.Resolver.RequestSignInCode(ctx, c.email, "/")); c.code == "ABCDEFGH" && got != resolvers.CodeValidation {
				t.Errorf("requesting: %s, want %s", got, resolvers.CodeValidation)
			}
			if got := refusal(w.Resolver.SignInWithCode(ctx, c.email, c.code, client)); got != resolvers.CodeValidation {
				t.Errorf("redeeming: %s, want %s", got, resolvers.CodeValidation)
			}
		})
	}
}

// TestOneCodeRedeemedAtOnceSignsInOnce races many redemptions of one right code, and many
// wrong guesses at another: one session, and no more guesses counted than allowed.
func TestOneCodeRedeemedAtOnceSignsInOnce(t *testing.T) {
	ctx := context.Background()
	w := newSignInWorld(t)
	code, _, _ := w.request(t, "race@example.com")
	var signedIn atomic.Int64
	var wg sync.WaitGroup
	for range 24 {
		wg.Go(func() {
			if _, err := w.Resolver.SignInWithCode(ctx, "race@example.com", code, client); err == nil {
				signedIn.Add(1)
			} else if got := why(err); got != resolvers.SignInUsed {
				t.Errorf("a losing redemption: %s, want %s", got, resolvers.SignInUsed)
			}
		})
	}
	wg.Wait()
	var sessions int
	w.Get(t, &sessions, `SELECT count(*) FROM user_sessions s JOIN users u ON u.id = s.user_id WHERE u.email = 'race@example.com'`)
	if signedIn.Load() != 1 || sessions != 1 {
		t.Errorf("%d redemptions signed in, %d sessions made; want one of each", signedIn.Load(), sessions)
	}

	other, _, _ := w.request(t, "guesses@example.com")
	for range 24 {
		wg.Go(func() { _, _ = w.Resolver.SignInWithCode(ctx, "guesses@example.com", wrongCode(other), client) })
	}
	wg.Wait()
	var attempts int
	w.Get(t, &attempts, `SELECT attempts FROM login_codes WHERE email_key = 'guesses@example.com'`)
	if attempts != 5 {
		t.Errorf("%d wrong guesses counted, want exactly 5", attempts)
	}
}

func TestSignInIsRateLimitedPerEmailAndPerAddress(t *testing.T) {
	limits := func(perIP, perEmail int) *ratelimit.Guard {
		g, err := ratelimit.New(ratelimit.Config{PerIP: ratelimit.Limit{Rate: perIP, Interval: time.Hour},
			PerKey: ratelimit.Limit{Rate: perEmail, Interval: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	w := newSignInWorld(t, func(d *resolvers.Deps) {
		d.SignInLimits = &resolvers.SignInLimits{Request: limits(2, 2), Redeem: limits(3, 2)}
	})
	from := func(ip string) context.Context { return ratelimit.ContextWithClientIP(context.Background(), ip) }
	request := func(ip, email string) string { return why(w.Resolver.RequestSignInCode(from(ip), email, "/")) }
	redeem := func(ip, email string) string {
		return refusal(w.Resolver.SignInWithCode(from(ip), email, "ABCD-EFGH", client))
	}
	for _, c := range []struct{ name, got, want string }{
		{"a first request passes", request("10.0.0.1", "a@example.com"), "signed in"},
		{"a second request for the email passes", request("10.0.0.2", "a@example.com"), "signed in"},
		{"a third request for the email is refused, from any address", request("10.0.0.3", "a@example.com"), resolvers.CodeRateLimited},
		{"another email from a fresh address passes", request("10.0.0.1", "b@example.com"), "signed in"},
		{"a third request from one address is refused, for any email", request("10.0.0.1", "c@example.com"), resolvers.CodeRateLimited},
		{"redeeming is counted apart from requesting", redeem("10.0.0.1", "z@example.com"), resolvers.SignInNoCode},
		{"a second redemption for the email is still checked", redeem("10.0.0.8", "z@example.com"), resolvers.SignInNoCode},
		{"a third redemption for the email is refused", redeem("10.0.0.7", "z@example.com"), resolvers.CodeRateLimited},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("%s, want %s", c.got, c.want)
			}
		})
	}
	t.Run("a refusal says when to retry and costs no query", func(t *testing.T) {
		start := time.Now()
		err := w.Resolver.RequestSignInCode(from("10.0.0.1"), "d@example.com", "/")
		var e *resolvers.Error
		if !errors.As(err, &e) || e.Code != resolvers.CodeRateLimited || e.RetryAfter <= 0 {
			t.Fatalf("%v, want RATE_LIMITED with a wait", err)
		}
		if d := time.Since(start); d > 50*time.Millisecond {
			t.Errorf("the refusal took %s", d)
		}
	})
}

func TestSafeReturnToKeepsOnlyPathsOfTillsOrigin(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/dashboard?tab=1#x", "/dashboard?tab=1#x"},
		{"/v1/oauth2/authorize?client_id=till_ci_x&scope=openid", "/v1/oauth2/authorize?client_id=till_ci_x&scope=openid"},
		{"", resolvers.DefaultReturnTo},
		{"https://evil.example/", resolvers.DefaultReturnTo},
		{"//evil.example/", resolvers.DefaultReturnTo},
		{"/\\evil.example/", resolvers.DefaultReturnTo},
		{"\\\\evil.example", resolvers.DefaultReturnTo},
		{"javascript:alert(1)", resolvers.DefaultReturnTo},
		{"/\t/evil.example", resolvers.DefaultReturnTo},
		{"/ok\r\nSet-Cookie: x=y", resolvers.DefaultReturnTo},
		{"dashboard", resolvers.DefaultReturnTo},
		{"/\xff", resolvers.DefaultReturnTo},
	} {
		if got := resolvers.SafeReturnTo(c.in); got != c.want {
			t.Errorf("SafeReturnTo(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// wrongCode is a well-formed code other than code.
func wrongCode(code string) string {
	if strings.HasPrefix(code, "A") {
		return "B" + code[1:]
	}
	return "A" + code[1:]
}
