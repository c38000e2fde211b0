package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// SMTP delivers messages through a mail server, one connection per message: sign-in codes
// and invitations are rare, and a connection per message never holds a stale one open.
// Credentials are never sent in clear: a plain smtp:// server must offer STARTTLS, and
// smtps:// speaks TLS from the first byte.
type SMTP struct {
	// Host and Port are the server's address.
	Host string
	Port int
	// ImplicitTLS speaks TLS from the start (smtps://, port 465); otherwise the connection
	// must be upgraded with STARTTLS before anything else is sent.
	ImplicitTLS bool
	// Username and Password authenticate with the server (PLAIN, LOGIN or what it offers);
	// an empty Username sends none.
	Username, Password string
	// From is the sender's address, e.g. "Till <till@example.com>".
	From string
	// Timeout bounds connecting and each exchange with the server; 0 is 30 seconds.
	Timeout time.Duration
	// TLSConfig replaces the system's trust for the server's certificate; nil trusts the
	// system roots, for Host.
	TLSConfig *tls.Config
}

// ParseSMTPURL reads TILL_SMTP_URL: smtp://user:pass@host[:587] with STARTTLS, or
// smtps://user:pass@host[:465] with implicit TLS. User and password are URL-encoded;
// nothing else may follow the address.
func ParseSMTPURL(raw, from string) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	s := &SMTP{From: from}
	switch strings.ToLower(u.Scheme) {
	case "smtp":
		s.Port = 587
	case "smtps":
		s.Port, s.ImplicitTLS = 465, true
	default:
		return nil, fmt.Errorf("the scheme must be smtp (STARTTLS) or smtps (TLS), not %q", u.Scheme)
	}
	s.Host = u.Hostname()
	if s.Host == "" {
		return nil, errors.New("it names no host")
	}
	if p := u.Port(); p != "" {
		if s.Port, err = strconv.Atoi(p); err != nil || s.Port <= 0 || s.Port > 65535 {
			return nil, fmt.Errorf("port %q is not a port", p)
		}
	}
	if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("nothing may follow host:port")
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	if err := gomail.NewMsg().From(from); from == "" || err != nil {
		return nil, fmt.Errorf("the sender address %q (TILL_MAIL_FROM) is not an address", from)
	}
	return s, nil
}

// Send delivers m, or says why it could not; the job that called it tries again later.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := Compose(s.From, m)
	if err != nil {
		return err
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	opts := []gomail.Option{gomail.WithPort(s.Port), gomail.WithTimeout(timeout)}
	tlsConfig := s.TLSConfig
	if tlsConfig == nil {
		tlsConfig = &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}
	}
	opts = append(opts, gomail.WithTLSConfig(tlsConfig))
	if s.ImplicitTLS {
		opts = append(opts, gomail.WithSSLPort(false))
	} else {
		opts = append(opts, gomail.WithTLSPortPolicy(gomail.TLSMandatory))
	}
	if s.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.Username), gomail.WithPassword(s.Password))
	}
	c, err := gomail.NewClient(s.Host, opts...)
	if err != nil {
		return fmt.Errorf("mail: smtp client: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mail: sending to %s:%d: %w", s.Host, s.Port, err)
	}
	return nil
}

// Compose builds m as an RFC 5322 message from from, with a Date and a Message-ID: UTF-8
// text, written as it is when it is plain ASCII in short lines (so a code and a link read
// the same in the raw message as in a mail client), quoted-printable otherwise. The SMTP
// sender sends it and the mailbox keeps it.
func Compose(from string, m Message) (*gomail.Msg, error) {
	enc := gomail.NoEncoding
	if !plainASCII(m.Text) {
		enc = gomail.EncodingQP
	}
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent(), gomail.WithEncoding(enc))
	if err := msg.From(from); err != nil {
		return nil, fmt.Errorf("mail: sender %q: %w", from, err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("mail: recipient %q: %w", m.To, err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	return msg, nil
}

// plainASCII reports whether text is printable ASCII in lines of at most 998 characters,
// which any mail server carries unencoded.
func plainASCII(text string) bool {
	line := 0
	for i := range len(text) {
		c := text[i]
		switch {
		case c == '\n':
			line = 0
			continue
		case c >= 0x80 || c < 0x20 && c != '\t' || c == 0x7f:
			return false
		}
		if line++; line > 998 {
			return false
		}
	}
	return true
}
