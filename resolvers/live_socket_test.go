package resolvers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"

	"till/resolvers/resolverstest"
)

// TestLiveFramesOnTheWire reads an event's frame as bytes off the socket: valid JSON, and
// exactly what json.Marshal writes for its message (payload compact, HTML characters
// escaped), under an id json.Marshal must escape.
func TestLiveFramesOnTheWire(t *testing.T) {
	t.Parallel()
	s := resolverstest.NewLive(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, resolverstest.WebsocketURL(s.URL), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	send := func(m resolverstest.LiveMessage) {
		t.Helper()
		if err := conn.Write(ctx, websocket.MessageText, marshal(t, m)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() []byte {
		t.Helper()
		for {
			_, frame, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(frame, []byte(`"type":"ping"`)) {
				return frame
			}
		}
	}
	send(resolverstest.LiveMessage{Type: "connection_init", Payload: marshal(t, map[string]string{"Authorization": "Bearer " + org.Token})})
	if ack := read(); string(ack) != `{"type":"connection_ack"}` {
		t.Fatalf("got %s, want the ack", ack)
	}
	const id = "<sub & 1>"
	send(resolverstest.LiveMessage{Type: "subscribe", ID: id, Payload: marshal(t, map[string]string{
		"query": `subscription { customerEvents { type customer { email name } } }`})})
	time.Sleep(200 * time.Millisecond) // the subscription starts after what committed before it
	createCustomer(t, s, org.Token, vars{"email": "wire@example.com", "name": "Zoë <b>&</b> \u2028 \"q\""})

	frame := read()
	if !json.Valid(frame) {
		t.Fatalf("frame %s is not JSON", frame)
	}
	var m resolverstest.LiveMessage
	if err := json.Unmarshal(frame, &m); err != nil {
		t.Fatal(err)
	}
	// json.Marshal compacts and escapes the payload again: the frame must need neither.
	want := marshal(t, struct {
		Payload json.RawMessage `json:"payload,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
	}{m.Payload, m.ID, m.Type})
	if !bytes.Equal(frame, want) {
		t.Errorf("frame\n%s\nwant\n%s", frame, want)
	}
	var body struct {
		Data struct {
			CustomerEvents struct {
				Type     string
				Customer struct{ Email, Name string }
			}
		}
	}
	if err := json.Unmarshal(m.Payload, &body); err != nil {
		t.Fatal(err)
	}
	if e := body.Data.CustomerEvents; m.Type != "next" || m.ID != id || e.Type != "customer.created" || e.Customer.Name != "Zoë <b>&</b> \u2028 \"q\"" {
		t.Errorf("got %s %q %+v", m.Type, m.ID, e)
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
