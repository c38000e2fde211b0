package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"till/internal/mail"
	"till/internal/ratelimit"
	"till/resolvers"
)

// mailFrom is the sender of Till's mail: TILL_MAIL_FROM, or till@ the public URL's host.
func (c config) mailFrom() string {
	if c.MailFrom != "" {
		return c.MailFrom
	}
	host := "localhost"
	if u, err := url.Parse(c.PublicURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return "Till <till@" + host + ">"
}

// mailbox is the mbox file mail goes to without an SMTP server.
func (c config) mailbox() string {
	if c.Mailbox != "" {
		return c.Mailbox
	}
	return filepath.Join(c.DataDir, "mailbox")
}

// checkMail refuses a TILL_SMTP_URL or TILL_MAIL_FROM Till could never send with, at start
// rather than at the first sign-in.
func (c config) checkMail() error {
	if c.SMTPURL == "" {
		_, err := mail.Compose(c.mailFrom(), mail.Message{To: "check@example.com"})
		if err != nil {
			return fmt.Errorf("TILL_MAIL_FROM: %w", err)
		}
		return nil
	}
	if _, err := mail.ParseSMTPURL(c.SMTPURL, c.mailFrom()); err != nil {
		return fmt.Errorf("TILL_SMTP_URL %s: %w", maskSMTPURL(c.SMTPURL), err)
	}
	return nil
}

// mailSender is where the mail of use cases goes: the SMTP server, or else the log and the
// local mailbox, so that someone trying Till reads their sign-in code with no mail server.
func mailSender(c config, logger *slog.Logger) (mail.Sender, error) {
	if c.SMTPURL == "" {
		return mail.Tee{mail.Log{Logger: logger}, &mail.Mailbox{Path: c.mailbox(), From: c.mailFrom()}}, nil
	}
	s, err := mail.ParseSMTPURL(c.SMTPURL, c.mailFrom())
	if err != nil {
		return nil, err
	}
	s.Timeout = mailTimeout
	return s, nil
}

// printMail adds the mail settings to the printed configuration, the password masked.
func (c config) printMail(w io.Writer) {
	if c.SMTPURL != "" {
		fmt.Fprintf(w, "  TILL_SMTP_URL=%s\n", maskSMTPURL(c.SMTPURL))
	} else {
		fmt.Fprintf(w, "  TILL_SMTP_URL=(none: mail goes to the log and to TILL_MAILBOX=%s)\n", c.mailbox())
	}
	fmt.Fprintf(w, "  TILL_MAIL_FROM=%s\n  TILL_SIGNIN_RATE_PER_EMAIL=%d\n  TILL_SIGNIN_RATE_PER_IP=%d (per %s)\n",
		c.mailFrom(), c.SignInRatePerEmail, c.SignInRatePerIP, c.SignInRateWindow)
}

// signInLimits builds the sign-in rate limits: requesting and redeeming codes each get
// TILL_SIGNIN_RATE_PER_EMAIL per email and TILL_SIGNIN_RATE_PER_IP per client address in
// every TILL_SIGNIN_RATE_WINDOW; 0 turns a limit off.
func signInLimits(c config) (*resolvers.SignInLimits, error) {
	rule := func() (*ratelimit.Guard, error) {
		return ratelimit.New(ratelimit.Config{
			PerIP:  ratelimit.Limit{Rate: c.SignInRatePerIP, Interval: c.SignInRateWindow},
			PerKey: ratelimit.Limit{Rate: c.SignInRatePerEmail, Interval: c.SignInRateWindow}})
	}
	request, err := rule()
	if err != nil {
		return nil, fmt.Errorf("TILL_SIGNIN_RATE_*: %w", err)
	}
	redeem, err := rule()
	if err != nil {
		return nil, fmt.Errorf("TILL_SIGNIN_RATE_*: %w", err)
	}
	return &resolvers.SignInLimits{Request: request, Redeem: redeem}, nil
}

// signInNote tells the operator at start where sign-in codes go.
func signInNote(c config, w io.Writer) {
	if c.SMTPURL == "" {
		fmt.Fprintf(w, "  Sign in: %s/login (no TILL_SMTP_URL: codes are in the log and in %s)\n", c.PublicURL, c.mailbox())
		return
	}
	fmt.Fprintf(w, "  Sign in: %s/login\n", c.PublicURL)
}

// maskSMTPURL hides the credentials of an SMTP URL, also of one that does not parse, whose
// error would otherwise show it whole.
func maskSMTPURL(s string) string {
	if _, err := url.Parse(s); err == nil {
		return maskURL(s)
	}
	if i, j := strings.Index(s, "://"), strings.LastIndex(s, "@"); i >= 0 && j > i {
		return s[:i+3] + "xxxxx" + s[j:]
	}
	return "(not shown: it does not parse)"
}

// mailTimeout bounds one delivery attempt to the SMTP server.
const mailTimeout = 30 * time.Second
