package mail_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"till/internal/mail"
	"till/internal/mail/mailtest"
)

const from = "Till <till@till.test>"

func TestSMTPDeliversThroughARealServer(t *testing.T) {
	msg := mail.Message{To: "ada@example.com", Subject: "Sign in to Till", Text: "Your code is ABCD-EFGH.\n"}
	for _, c := range []struct {
		name string
		opts mailtest.Options
	}{
		{"over STARTTLS with a password", mailtest.Options{Username: "till", Password: "s3cret"}},
		{"over TLS from the first byte", mailtest.Options{ImplicitTLS: true, Username: "till", Password: "s3cret"}},
		{"over STARTTLS without credentials", mailtest.Options{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := mailtest.Start(t, c.opts)
			if err := srv.Sender(from).Send(context.Background(), msg); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := srv.Received()
			if len(got) != 1 || got[0].From != "till@till.test" || strings.Join(got[0].To, ",") != "ada@example.com" {
				t.Fatalf("received %+v, want one message from till@till.test to ada@example.com", got)
			}
			data := string(got[0].Data)
			for _, want := range []string{"Subject: Sign in to Till", "Your code is ABCD-EFGH.", "Message-ID: <", "Date: "} {
				if !strings.Contains(data, want) {
					t.Errorf("the message lacks %q:\n%s", want, data)
				}
			}
		})
	}
}

func TestSMTPRefusals(t *testing.T) {
	msg := mail.Message{To: "ada@example.com", Subject: "s", Text: "t"}
	t.Run("a wrong password is an error, to be retried", func(t *testing.T) {
		srv := mailtest.Start(t, mailtest.Options{Username: "till", Password: "right"})
		s := srv.Sender(from)
		s.Password = "wrong"
		if err := s.Send(context.Background(), msg); err == nil || len(srv.Received()) != 0 {
			t.Fatalf("Send = %v with %d received, want an error and nothing delivered", err, len(srv.Received()))
		}
	})
	t.Run("a server that is down is an error", func(t *testing.T) {
		addr := mailtest.FreeAddr(t)
		host, port, _ := strings.Cut(addr, ":")
		s := &mail.SMTP{Host: host, From: from}
		if _, err := fmt.Sscan(port, &s.Port); err != nil {
			t.Fatal(err)
		}
		if err := s.Send(context.Background(), msg); err == nil {
			t.Fatal("Send to a closed port succeeded")
		}
	})
	t.Run("a server without STARTTLS never sees the password", func(t *testing.T) {
		srv := mailtest.Start(t, mailtest.Options{NoTLS: true, Username: "till", Password: "s3cret"})
		if err := srv.Sender(from).Send(context.Background(), msg); err == nil || len(srv.Received()) != 0 {
			t.Fatalf("Send = %v with %d received, want a refusal to talk in clear", err, len(srv.Received()))
		}
	})
	t.Run("a certificate the sender does not trust is refused", func(t *testing.T) {
		srv := mailtest.Start(t, mailtest.Options{})
		s := srv.Sender(from)
		s.TLSConfig = nil
		if err := s.Send(context.Background(), msg); err == nil || len(srv.Received()) != 0 {
			t.Fatalf("Send = %v with %d received, want the self-signed certificate refused", err, len(srv.Received()))
		}
	})
}

func TestParseSMTPURL(t *testing.T) {
	for _, c := range []struct {
		name, url     string
		host          string
		port          int
		implicit      bool
		user, pass    string
		wantErrSubstr string
	}{
		{name: "smtp means STARTTLS on 587", url: "smtp://u:p@mail.example.com", host: "mail.example.com", port: 587, user: "u", pass: "p"},
		{name: "smtps means TLS on 465", url: "smtps://u:p@mail.example.com", host: "mail.example.com", port: 465, implicit: true, user: "u", pass: "p"},
		{name: "a port and an encoded password are read", url: "smtp://me%40x.com:p%2Fw@mail.example.com:2525", host: "mail.example.com", port: 2525, user: "me@x.com", pass: "p/w"},
		{name: "no credentials is allowed", url: "smtp://relay.internal:25", host: "relay.internal", port: 25},
		{name: "another scheme is refused", url: "http://mail.example.com", wantErrSubstr: "scheme"},
		{name: "a missing host is refused", url: "smtp://u:p@:25", wantErrSubstr: "host"},
		{name: "a bad port is refused", url: "smtp://mail.example.com:99999", wantErrSubstr: "port"},
		{name: "a path is refused", url: "smtp://mail.example.com/x", wantErrSubstr: "follow"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := mail.ParseSMTPURL(c.url, from)
			if c.wantErrSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErrSubstr) {
					t.Fatalf("ParseSMTPURL(%q) = %v, want an error about %s", c.url, err, c.wantErrSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Host != c.host || s.Port != c.port || s.ImplicitTLS != c.implicit || s.Username != c.user || s.Password != c.pass {
				t.Errorf("ParseSMTPURL(%q) = %+v", c.url, s)
			}
		})
	}
	t.Run("a sender that is not an address is refused", func(t *testing.T) {
		if _, err := mail.ParseSMTPURL("smtp://mail.example.com", "not an address"); err == nil {
			t.Fatal("accepted a sender that is not an address")
		}
	})
}

func TestMailboxKeepsEveryMessageInMboxForm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "mailbox")
	box := &mail.Mailbox{Path: path, From: from}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			text := "From the start: code " + string(rune('A'+i)) + "\nhttp://127.0.0.1:8000/login/link?token=till_sl_x\n"
			if err := box.Send(ctx, mail.Message{To: "ada@example.com", Subject: "Sign in", Text: text}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	if n := strings.Count(text, "\nFrom till@till.test ") + boolInt(strings.HasPrefix(text, "From till@till.test ")); n != 20 {
		t.Errorf("%d messages start with a From_ line, want 20", n)
	}
	if strings.Count(text, "\n>From the start: code ") != 20 {
		t.Errorf("body lines starting with From are not quoted:\n%s", text)
	}
	if !strings.Contains(text, "?token=till_sl_x\n") {
		t.Errorf("the link is not readable as it was written:\n%s", text)
	}
	if strings.Contains(text, "\r") {
		t.Error("the mailbox has CR characters; mbox lines end with LF")
	}
}

func TestTeeDeliversToEverySenderAndReportsFailures(t *testing.T) {
	var got []string
	ok := senderFunc(func(m mail.Message) error { got = append(got, "first "+m.To); return nil })
	down := senderFunc(func(mail.Message) error { return errors.New("down") })
	last := senderFunc(func(m mail.Message) error { got = append(got, "last "+m.To); return nil })
	err := mail.Tee{ok, down, last}.Send(context.Background(), mail.Message{To: "a@example.com"})
	if err == nil || strings.Join(got, ", ") != "first a@example.com, last a@example.com" {
		t.Fatalf("Tee.Send = %v, delivered %v; want an error and both working senders served", err, got)
	}
}

type senderFunc func(mail.Message) error

func (f senderFunc) Send(_ context.Context, m mail.Message) error { return f(m) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
