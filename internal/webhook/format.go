package webhook

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Endpoint formats (upstream's WebhookFormat). Raw endpoints receive the
// event envelope itself; Slack and Discord endpoints are incoming-webhook
// URLs of those chat services, which only accept their own message shapes.
const (
	FormatRaw     = "raw"
	FormatSlack   = "slack"
	FormatDiscord = "discord"
)

// nameLimit bounds the names echoed into chat messages, well under the
// services' field limits (Discord: 256 for an embed title).
const nameLimit = 200

// FormatError reports an endpoint format Till does not know.
type FormatError struct {
	Format string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("webhook: unknown endpoint format %q", e.Format)
}

// Payload returns the body to deliver for an event to an endpoint of the
// given format. raw is the stored envelope
// ({"type":…,"timestamp":…,"data":{…}}) and is returned unchanged, same
// backing array, for [FormatRaw], because the signature must cover exactly
// the stored bytes.
//
// The chat formats carry a one-line notice, not the data: the event type,
// the object's id and a name (the object's own "name", else its product's).
// That is enough to tell someone to look in the dashboard, and cheap enough
// to compute per attempt without knowing every event's schema.
func Payload(format, eventType string, raw []byte) ([]byte, error) {
	switch format {
	case FormatRaw:
		return raw, nil
	case FormatSlack, FormatDiscord:
		s, err := summarize(eventType, raw)
		if err != nil {
			return nil, err
		}
		if format == FormatSlack {
			return json.Marshal(slackMessage(s))
		}
		return json.Marshal(discordMessage(s))
	}
	return nil, &FormatError{Format: format}
}

// summary is what a chat notice says about an event.
type summary struct {
	eventType string
	id        string
	name      string
	timestamp string // RFC 3339, or empty when the envelope has none
}

// summarize reads the few envelope fields a chat notice shows. Fields that
// are missing or not strings stay empty; only a body that is not a JSON
// object is an error.
func summarize(eventType string, raw []byte) (summary, error) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(raw, &env); err != nil {
		return summary{}, fmt.Errorf("webhook: event payload is not a JSON object: %w", err)
	}
	data := object(env["data"])
	s := summary{
		eventType: eventType,
		id:        clip(str(data["id"]), nameLimit),
		name:      str(data["name"]),
	}
	if s.name == "" {
		s.name = str(object(data["product"])["name"])
	}
	s.name = clip(s.name, nameLimit)
	if ts := str(env["timestamp"]); ts != "" {
		if _, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			s.timestamp = ts
		}
	}
	return s, nil
}

// object decodes a JSON object's members, or returns nil for anything else.
func object(v json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return nil
	}
	return m
}

// str decodes a JSON string, or returns "" for anything else.
func str(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// line is the plain-text notice: "order.paid: Pro plan (id 3f…)".
func (s summary) line() string {
	var b strings.Builder
	b.WriteString(s.eventType)
	if s.name != "" {
		b.WriteString(": ")
		b.WriteString(s.name)
	}
	if s.id != "" {
		b.WriteString(" (id ")
		b.WriteString(s.id)
		b.WriteString(")")
	}
	return b.String()
}

// slackMessage is a Slack incoming-webhook body: "text" for notifications
// and one mrkdwn section. Slack treats &, < and > as markup (links,
// mentions such as <!channel>), so they are escaped in every text.
func slackMessage(s summary) any {
	section := "*" + slackEscape(s.eventType) + "*"
	if s.name != "" {
		section += "\n" + slackEscape(s.name)
	}
	if s.id != "" {
		section += "\nid: " + slackEscape(s.id)
	}
	return slackBody{
		Text:   slackEscape(s.line()),
		Blocks: []slackBlock{{Type: "section", Text: slackText{Type: "mrkdwn", Text: section}}},
	}
}

type slackBody struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type string    `json:"type"`
	Text slackText `json:"text"`
}

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// discordMessage is a Discord webhook body with one embed. Mentions are
// disabled, so a product named "@everyone" cannot ping a whole server.
func discordMessage(s summary) any {
	e := discordEmbed{Title: s.eventType, Description: s.name, Timestamp: s.timestamp}
	if s.id != "" {
		e.Fields = []discordField{{Name: "id", Value: s.id}}
	}
	msg := discordBody{Embeds: []discordEmbed{e}}
	msg.AllowedMentions.Parse = []string{}
	return msg
}

type discordBody struct {
	Embeds          []discordEmbed `json:"embeds"`
	AllowedMentions struct {
		Parse []string `json:"parse"`
	} `json:"allowed_mentions"`
}

type discordEmbed struct {
	Title       string         `json:"title"`
	Description string         `json:"description,omitempty"`
	Fields      []discordField `json:"fields,omitempty"`
	Timestamp   string         `json:"timestamp,omitempty"`
}

type discordField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}
