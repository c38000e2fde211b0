package webhook_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/webhook"
)

const orderEnvelope = `{"type":"order.paid","timestamp":"2026-04-01T12:00:00.123456Z",` +
	`"data":{"id":"5b1d2d3e-0000-4000-8000-000000000001","status":"paid","product":{"name":"Pro <plan> & more"}}}`

func TestPayloadRawIsTheStoredBytes(t *testing.T) {
	raw := []byte("{ \"type\":\"order.paid\" ,\n\"data\":{} }")
	got, err := webhook.Payload(webhook.FormatRaw, "order.paid", raw)
	if err != nil || string(got) != string(raw) {
		t.Fatalf("Payload(raw) = %q, %v; want the stored bytes unchanged", got, err)
	}
}

func TestPayloadSlack(t *testing.T) {
	tests := []struct {
		name      string
		eventType string
		raw       string
		want      string
	}{
		{"an order names its product and escapes Slack markup", "order.paid", orderEnvelope,
			`{"text":"order.paid: Pro &lt;plan&gt; &amp; more (id 5b1d2d3e-0000-4000-8000-000000000001)",` +
				`"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*order.paid*\nPro &lt;plan&gt; &amp; more\nid: 5b1d2d3e-0000-4000-8000-000000000001"}}]}`},
		{"an object's own name wins over its product", "product.updated",
			`{"data":{"id":"p1","name":"Starter","product":{"name":"ignored"}}}`,
			`{"text":"product.updated: Starter (id p1)","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*product.updated*\nStarter\nid: p1"}}]}`},
		{"missing or odd fields leave only the event type", "benefit.granted",
			`{"data":{"id":42,"name":null,"product":"x"}}`,
			`{"text":"benefit.granted","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*benefit.granted*"}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhook.Payload(webhook.FormatSlack, tt.eventType, []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, tt.want)
		})
	}
}

func TestPayloadDiscord(t *testing.T) {
	tests := []struct {
		name      string
		eventType string
		raw       string
		want      string
	}{
		{"an order becomes one embed without mentions", "order.paid", orderEnvelope,
			`{"embeds":[{"title":"order.paid","description":"Pro <plan> & more",` +
				`"fields":[{"name":"id","value":"5b1d2d3e-0000-4000-8000-000000000001"}],"timestamp":"2026-04-01T12:00:00.123456Z"}],` +
				`"allowed_mentions":{"parse":[]}}`},
		{"an unparsable timestamp is left out", "customer.created",
			`{"timestamp":"yesterday","data":{"id":"c1","name":"@everyone"}}`,
			`{"embeds":[{"title":"customer.created","description":"@everyone","fields":[{"name":"id","value":"c1"}]}],"allowed_mentions":{"parse":[]}}`},
		{"an empty envelope still names the event", "order.updated", `{}`,
			`{"embeds":[{"title":"order.updated"}],"allowed_mentions":{"parse":[]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhook.Payload(webhook.FormatDiscord, tt.eventType, []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, tt.want)
		})
	}
}

func TestPayloadClipsLongNames(t *testing.T) {
	raw := `{"data":{"id":"x","name":"` + strings.Repeat("é", 500) + `"}}`
	got, err := webhook.Payload(webhook.FormatDiscord, "product.created", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Embeds []struct{ Description string } `json:"embeds"`
	}
	if err := json.Unmarshal(got, &msg); err != nil {
		t.Fatal(err)
	}
	if d := msg.Embeds[0].Description; len(d) > 256 || !strings.HasPrefix(d, "éé") || strings.ContainsRune(d, '\uFFFD') {
		t.Errorf("description = %q (%d bytes), want a clean prefix of at most 256 bytes", d, len(d))
	}
}

func TestPayloadErrors(t *testing.T) {
	tests := []struct {
		name   string
		format string
		raw    string
	}{
		{"unknown format", "teams", orderEnvelope},
		{"empty format", "", orderEnvelope},
		{"chat format over a non-object", webhook.FormatSlack, `[1,2]`},
		{"chat format over invalid JSON", webhook.FormatDiscord, `{"data":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhook.Payload(tt.format, "order.paid", []byte(tt.raw))
			if err == nil {
				t.Fatalf("Payload = %s, want an error", got)
			}
		})
	}
	var fe *webhook.FormatError
	if _, err := webhook.Payload("teams", "order.paid", nil); !errors.As(err, &fe) || fe.Format != "teams" {
		t.Errorf("err = %v, want *FormatError{teams}", err)
	}
}

// assertJSON compares two JSON documents by value.
func assertJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("payload mismatch (-want +got):\n%s", diff)
	}
}
