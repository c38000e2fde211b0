package resolvers

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"till/internal/auth"
	"till/internal/mail"
	"till/storage"
)

// Signing in by email is upstream's login-code flow. A person asks for a code for an email;
// Till mails a short code and a magic link, both good once for SignInCodeLifetime. Whoever
// shows the code for that email, or follows the link, proved they read that mailbox, and
// gets a browser session of the user with that email.
//
// An email with no user is treated exactly as one with a user: the same answer, the same
// work, a mail all the same (one that says it signs up), and the user is created when the
// code is redeemed, as upstream, Slack or Linear do. Nothing a requester sees tells whether
// an account exists, no row but the code exists until the mailbox owner acts, and a person
// invited to an organization signs in the first time the way everyone else does. A user with
// no membership sees and changes nothing but their own sessions and tokens.
const (
	// SignInCodeLifetime is how long a mailed code and link work.
	SignInCodeLifetime = 15 * time.Minute
	// signInMaxAttempts is how many wrong codes kill the code pending for an email.
	signInMaxAttempts = 5
	// signInCodeLength is the code's length in characters of signInCodeAlphabet: 40 bits,
	// so even the attempts a year of rate limits allow find a code with a chance below one
	// in a million.
	signInCodeLength = 8
	// signInCodeAlphabet leaves out the letters people confuse with digits (I, O) and the
	// digits they confuse with letters (0, 1); its 32 symbols take 5 bits of a random byte
	// each, without bias.
	signInCodeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	// maxEmailLength is the longest address RFC 5321 lets through.
	maxEmailLength = 320
	// signInLinkPath is where a magic link leads, followed by ?token=.
	signInLinkPath = "/login/link"
)

// Causes of a refused sign-in, in extensions.cause and the sign-in endpoints' answers.
const (
	SignInWrongCode = "wrong_code"
	SignInExpired   = "expired"
	SignInUsed      = "used"
	SignInExhausted = "too_many_attempts"
	SignInNoCode    = "no_code"
)

// codeSignInRefused is a sign-in code or link that does not sign in; its Cause says why.
const codeSignInRefused = "LoginCodeInvalid"

// signInRefused is the error of a refused code or link.
func signInRefused(cause, detail string) *Error {
	return &Error{Code: codeSignInRefused, Cause: cause, Detail: detail}
}

// RequestSignInCode mails a sign-in code and magic link for email, replacing any code still
// pending for it. returnTo is where the magic link leads once it signed in (a path of Till's
// own origin; anything else leads to the sign-in page). The answer is the same whether or
// not a user has this email.
func (r *Resolver) RequestSignInCode(ctx context.Context, email, returnTo string) error {
	email = strings.TrimSpace(email)
	if err := checkSignInEmail(email); err != nil {
		return err
	}
	key := strings.ToLower(email)
	if err := r.signInLimits.allowRequest(ctx, key); err != nil {
		return err
	}
	code, link := newSignInCode(), auth.Generate(auth.PrefixSignInLink)
	expires := r.Now().Add(SignInCodeLifetime)
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		_, err := storage.GetUserByEmail(ctx, tx, email)
		signUp := errors.Is(err, storage.ErrNotFound)
		if err != nil && !signUp {
			return err
		}
		if err := storage.PutLoginCode(ctx, tx, storage.LoginCodeWrite{Email: email, EmailKey: key,
			CodeHash: r.signInCodeHash(key, code), LinkHash: auth.Hash(r.secret, link), ExpiresAt: expires,
			ReturnTo: SafeReturnTo(returnTo)}); err != nil {
			return err
		}
		return r.enqueueMail(ctx, tx, r.signInMail(email, code, link, signUp))
	})
	if err == nil {
		r.jobsQueued()
	}
	return err
}

// signInMail is the message that carries a code and its link.
func (r *Resolver) signInMail(email, code, link string, signUp bool) mail.Message {
	subject, verb := "Sign in to Till", "sign in"
	if signUp {
		subject, verb = "Sign up to Till", "create your Till account and sign in"
	}
	return mail.Message{To: email, Subject: subject, Text: fmt.Sprintf(`Your code to %s is:

    %s

Or open this link:

    %s%s?token=%s

The code and the link work once, for the next %d minutes. If you did not ask for them,
ignore this mail: nobody can sign in without them.
`, verb, code[:4]+"-"+code[4:], r.portalURL, signInLinkPath, link, int(SignInCodeLifetime/time.Minute))}
}

// SignInWithCode signs in with the code mailed for email, creating the user on their first
// sign-in. A wrong code counts against the pending one, which dies after signInMaxAttempts;
// of several redemptions of one code at once, one signs in.
func (r *Resolver) SignInWithCode(ctx context.Context, email, code string, client SignInClient) (*SignedIn, error) {
	email = strings.TrimSpace(email)
	if err := checkSignInEmail(email); err != nil {
		return nil, err
	}
	key := strings.ToLower(email)
	if err := r.signInLimits.allowRedeem(ctx, key); err != nil {
		return nil, err
	}
	code, ok := normalizeSignInCode(code)
	if !ok {
		return nil, Invalid("value_error", fmt.Sprintf("A sign-in code is %d letters and digits.", signInCodeLength),
			nil, "code")
	}
	return r.redeem(ctx, client, func(tx *sqlx.Tx) (*storage.LoginCode, error) {
		c, err := storage.RedeemLoginCode(ctx, tx, key, r.signInCodeHash(key, code), r.Now(), signInMaxAttempts)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, r.whyCodeRefused(ctx, tx, key)
		}
		if err == nil && !c.Matched {
			return nil, wrongSignInCode(signInMaxAttempts - c.Attempts)
		}
		return c, err
	})
}

// SignInWithLink signs in with the token of a magic link, creating the user on their first
// sign-in; the link leads back to the return path its request named.
func (r *Resolver) SignInWithLink(ctx context.Context, token string, client SignInClient) (*SignedIn, error) {
	if !strings.HasPrefix(token, auth.PrefixSignInLink) || !auth.ChecksumValid(token) {
		return nil, signInRefused(SignInNoCode, "This sign-in link is not one Till sent. Ask for a new code.")
	}
	if err := r.signInLimits.allowRedeem(ctx, token); err != nil {
		return nil, err
	}
	hash := auth.Hash(r.secret, token)
	return r.redeem(ctx, client, func(tx *sqlx.Tx) (*storage.LoginCode, error) {
		c, err := storage.RedeemLoginLink(ctx, tx, hash, r.Now(), signInMaxAttempts)
		if errors.Is(err, storage.ErrNotFound) {
			found, ferr := storage.LoginCodeByLink(ctx, tx, hash)
			if ferr != nil && !errors.Is(ferr, storage.ErrNotFound) {
				return nil, ferr
			}
			return nil, r.codeRefusal(found, ferr == nil, "link")
		}
		return c, err
	})
}

// SignInVerifiedEmail signs in the user with this email, creating them when there is none,
// for a sign-in whose proof of the email came from elsewhere (an identity provider that
// vouched for it). The caller has checked that proof; this only makes the session.
func (r *Resolver) SignInVerifiedEmail(ctx context.Context, email string, client SignInClient) (*SignedIn, error) {
	if err := checkSignInEmail(email); err != nil {
		return nil, err
	}
	var out *SignedIn
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		var err error
		out, err = r.startSession(ctx, tx, email, client)
		return err
	})
	return out, err
}

// redeem runs use in a transaction and starts a session for the code it used up. A refusal
// use returns as an *Error commits what use changed (a wrong guess counted) and is
// returned; any other failure rolls back.
func (r *Resolver) redeem(ctx context.Context, client SignInClient, use func(*sqlx.Tx) (*storage.LoginCode, error)) (*SignedIn, error) {
	var (
		out     *SignedIn
		refusal *Error
	)
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		c, err := use(tx)
		if errors.As(err, &refusal) {
			return nil
		}
		if err != nil {
			return err
		}
		if out, err = r.startSession(ctx, tx, c.Email, client); err == nil {
			out.ReturnTo = c.ReturnTo
		}
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case refusal != nil:
		return nil, refusal
	}
	return out, nil
}

// whyCodeRefused tells why no code of key was alive to redeem.
func (r *Resolver) whyCodeRefused(ctx context.Context, q sqlx.QueryerContext, key string) error {
	c, err := storage.LatestLoginCode(ctx, q, key)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return r.codeRefusal(c, err == nil, "code")
}

// codeRefusal explains a code (or link, by what) that could not be redeemed.
func (r *Resolver) codeRefusal(c *storage.LoginCode, found bool, what string) *Error {
	again := " Ask for a new code."
	switch {
	case !found && what == "link":
		return signInRefused(SignInNoCode, "This sign-in link no longer works: a newer mail replaced it."+again)
	case !found:
		return signInRefused(SignInNoCode, "No sign-in code is pending for this email."+again)
	case c.UsedAt != nil:
		return signInRefused(SignInUsed, "This sign-in "+what+" was already used."+again)
	case c.Attempts >= signInMaxAttempts:
		return signInRefused(SignInExhausted, "Too many wrong codes were tried: this sign-in "+what+" no longer works."+again)
	case !c.ExpiresAt.After(r.Now()):
		return signInRefused(SignInExpired, "This sign-in "+what+" has expired."+again)
	}
	return signInRefused(SignInNoCode, "This sign-in "+what+" was replaced by a newer one: use the latest mail.")
}

// wrongSignInCode refuses a wrong code, saying how many tries remain.
func wrongSignInCode(left int) *Error {
	if left <= 0 {
		return signInRefused(SignInExhausted, "The code is not correct, and that was the last try: ask for a new code.")
	}
	return signInRefused(SignInWrongCode, fmt.Sprintf("The code is not correct; %d more %s before it stops working.",
		left, map[bool]string{true: "try", false: "tries"}[left == 1]))
}

// signInCodeHash is how a code is stored: keyed by the server secret and bound to the
// email, so a code shown for another address matches nothing.
func (r *Resolver) signInCodeHash(emailKey, code string) string {
	return auth.Hash(r.secret, "till-login-code\x00"+emailKey+"\x00"+code)
}

// newSignInCode draws a code uniformly from signInCodeAlphabet.
func newSignInCode() string {
	b := make([]byte, signInCodeLength)
	rand.Read(b) // never fails since Go 1.24
	for i := range b {
		b[i] = signInCodeAlphabet[int(b[i])%len(signInCodeAlphabet)]
	}
	return string(b)
}

// normalizeSignInCode reads a code as people type it: any case, with spaces or a hyphen.
func normalizeSignInCode(s string) (string, bool) {
	if len(s) > 4*signInCodeLength {
		return "", false
	}
	var b strings.Builder
	for _, c := range strings.ToUpper(s) {
		switch {
		case c == ' ' || c == '-' || c == '\t':
		case c < 0x80 && strings.IndexByte(signInCodeAlphabet, byte(c)) >= 0:
			b.WriteRune(c)
		default:
			return "", false
		}
	}
	return b.String(), b.Len() == signInCodeLength
}

// checkSignInEmail accepts an email address a code can be mailed to.
func checkSignInEmail(email string) error {
	if len(email) > maxEmailLength {
		return Invalid("string_too_long", fmt.Sprintf("String should have at most %d characters", maxEmailLength),
			nil, "email")
	}
	return checkEmail(email, "email")
}
