// Package mailtest runs a real SMTP server (emersion/go-smtp) inside a test process, with
// TLS under a certificate made for the test and PLAIN authentication, so Till's SMTP sender
// is tested against the protocol rather than a double of it.
package mailtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"till/internal/mail"
)

// Options shape a server.
type Options struct {
	// Addr is where to listen; empty picks a free loopback port.
	Addr string
	// ImplicitTLS speaks TLS from the first byte (smtps); otherwise the server offers
	// STARTTLS.
	ImplicitTLS bool
	// Username and Password, when set, are required before any mail is accepted.
	Username, Password string
	// NoTLS offers neither TLS nor STARTTLS: a server a sender must refuse to talk to.
	NoTLS bool
}

// Received is one message the server accepted.
type Received struct {
	From string
	To   []string
	Data []byte
}

// Server is a running SMTP server.
type Server struct {
	Host string
	Port int
	// ClientTLS trusts the server's certificate.
	ClientTLS *tls.Config

	opts     Options
	mu       sync.Mutex
	received []Received
}

// Start runs a server until tb ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	cert, pool := certificate(tb)
	s := &Server{opts: opts, ClientTLS: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	srv.Domain = "localhost"
	if !opts.NoTLS {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	} else {
		srv.AllowInsecureAuth = true
	}
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	if opts.ImplicitTLS {
		ln, err = tls.Listen("tcp", addr, srv.TLSConfig)
	} else {
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		tb.Fatalf("mailtest: listening on %s: %v", addr, err)
	}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s.Host = host
	s.Port, _ = strconv.Atoi(port)
	return s
}

// Sender is Till's SMTP sender configured for s.
func (s *Server) Sender(from string) *mail.SMTP {
	return &mail.SMTP{Host: s.Host, Port: s.Port, ImplicitTLS: s.opts.ImplicitTLS, Username: s.opts.Username,
		Password: s.opts.Password, From: from, TLSConfig: s.ClientTLS, Timeout: 5 * time.Second}
}

// Received returns the messages accepted so far.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// FreeAddr returns a loopback address nothing listens on (for a server that is down),
// which Start can take later.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// session is one SMTP conversation.
type session struct {
	s      *Server
	authed bool
	msg    Received
}

var errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

func (c *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (c *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != c.s.opts.Username || password != c.s.opts.Password {
			return errors.New("invalid credentials")
		}
		c.authed = true
		return nil
	}), nil
}

func (c *session) Mail(from string, _ *smtp.MailOptions) error {
	if c.s.opts.Username != "" && !c.authed {
		return errAuthRequired
	}
	c.msg = Received{From: from}
	return nil
}

func (c *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	c.msg.To = append(c.msg.To, to)
	return nil
}

func (c *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	c.msg.Data = b
	c.s.mu.Lock()
	c.s.received = append(c.s.received, c.msg)
	c.s.mu.Unlock()
	return nil
}

func (c *session) Reset()        { c.msg = Received{} }
func (c *session) Logout() error { return nil }

// certificate makes a self-signed certificate for 127.0.0.1 and the pool that trusts it.
func certificate(tb testing.TB) (tls.Certificate, *x509.CertPool) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mailtest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: parsed}, pool
}
