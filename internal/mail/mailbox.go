package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Mailbox appends each message to a file in mbox format (mboxrd), for a server with no mail
// server: the operator, or a new user trying Till, reads their sign-in code there, with
// any text editor or `mutt -f`. Each message is one write to a file opened for appending,
// so processes sharing the data directory (serve and its workers) never interleave them.
type Mailbox struct {
	// Path is the mbox file; its directory is created when missing.
	Path string
	// From is the sender's address written in each message.
	From string

	mu sync.Mutex
}

// Send appends m to the mailbox.
func (b *Mailbox) Send(_ context.Context, m Message) error {
	msg, err := Compose(b.From, m)
	if err != nil {
		return err
	}
	var raw bytes.Buffer
	if _, err := msg.WriteTo(&raw); err != nil {
		return fmt.Errorf("mail: writing the message: %w", err)
	}
	entry := mboxEntry(b.From, time.Now(), raw.Bytes())
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(b.Path), 0o700); err != nil {
		return fmt.Errorf("mail: mailbox directory: %w", err)
	}
	f, err := os.OpenFile(b.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("mail: opening the mailbox: %w", err)
	}
	_, err = f.Write(entry)
	return errors.Join(err, f.Close())
}

// mboxEntry is one mboxrd entry: the From_ line, the message with LF line ends and its
// lines that start with any number of ">" then "From " quoted by one more ">", and a blank
// line.
func mboxEntry(from string, at time.Time, raw []byte) []byte {
	sender := "till@localhost"
	if i, j := strings.LastIndex(from, "<"), strings.LastIndex(from, ">"); i >= 0 && j > i {
		sender = from[i+1 : j]
	} else if strings.Contains(from, "@") {
		sender = strings.TrimSpace(from)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "From %s %s\n", sender, at.UTC().Format("Mon Jan _2 15:04:05 2006"))
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, ">"), "From ") {
			out.WriteByte('>')
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// Tee hands every message to each of its senders in turn, all of them even when one fails;
// the failures are returned together, and the job tries again (a second delivery to those
// that succeeded is the price, rare with local senders).
type Tee []Sender

// Send delivers m to every sender of t.
func (t Tee) Send(ctx context.Context, m Message) error {
	var errs []error
	for _, s := range t {
		errs = append(errs, s.Send(ctx, m))
	}
	return errors.Join(errs...)
}
