// Package mail delivers the messages Till sends people (sign-in codes, invitations). Use
// cases never send mail themselves: they enqueue a job in the transaction of the change that
// causes the message, and the job hands it to a Sender, so a message exists exactly when its
// cause commits and a failed delivery is retried instead of lost.
package mail

import (
	"context"
	"log/slog"
)

// Message is one plain-text mail to one recipient.
type Message struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
	Text    string `json:"text"`
}

// Sender delivers a message. An error means it was not delivered and may be tried again.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Log writes each message to a logger instead of delivering it: what a server without a
// mail server can still offer an operator reading its log.
type Log struct {
	Logger *slog.Logger
}

// Send logs m in full, the text included, since the log is then its only destination.
func (l Log) Send(ctx context.Context, m Message) error {
	l.Logger.InfoContext(ctx, "mail", "to", m.To, "subject", m.Subject, "text", m.Text)
	return nil
}
