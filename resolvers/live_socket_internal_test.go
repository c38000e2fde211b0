package resolvers

import (
	"bytes"
	"encoding/json"
	"testing"
)

// transportWSMessage and graphqlWSMessage have the shape of gqlgen's two websocket protocols'
// messages (graphql-transport-ws and graphql-ws), whose types are unexported.
type (
	transportWSMessage struct {
		Payload json.RawMessage `json:"payload,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    transportWSType `json:"type"`
		noOp    bool
	}
	transportWSType  string
	graphqlWSMessage struct {
		Payload json.RawMessage `json:"payload,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
		noOp    bool
	}
	// reordered would be written type first by json.Marshal.
	reordered struct {
		Type    string          `json:"type"`
		ID      string          `json:"id,omitempty"`
		Payload json.RawMessage `json:"payload,omitempty"`
	}
)

func (t transportWSType) MarshalText() ([]byte, error) { return []byte(t), nil }

// marshalled is v encoded by json.Marshal, as gqlgen encodes a response into a payload.
func marshalled(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLiveFramesAreWhatJSONMarshalWrites(t *testing.T) {
	response := marshalled(t, map[string]any{"data": map[string]any{"orderEvents": map[string]any{
		"cursor": "42", "name": "Zoë <b>&</b> \u2028\u2029 \"quoted\" \\ \x01", "amount": 1200, "tags": []string{}, "none": nil}}})
	pretty := json.RawMessage("{ \"data\" : { \"x\" : \"<\" } }") // as a client might send a ping
	cases := []struct {
		name string
		msg  any
		fast bool
	}{
		{"next", &transportWSMessage{Payload: response, ID: "1", Type: "next"}, true},
		{"next, id escaped", &transportWSMessage{Payload: response, ID: "a\"<&>\\é\n", Type: "next"}, true},
		{"next, id with HTML's characters", &transportWSMessage{Payload: response, ID: "<1>&", Type: "next"}, true},
		{"next, no id", &transportWSMessage{Payload: response, Type: "next"}, true},
		{"graphql-ws data", &graphqlWSMessage{Payload: response, ID: "sub-7", Type: "data"}, true},
		{"complete", &transportWSMessage{ID: "1", Type: "complete"}, false},
		{"error", &transportWSMessage{Payload: marshalled(t, []map[string]string{{"message": "<no>"}}), ID: "1", Type: "error"}, false},
		{"pong echoing a client's payload", &transportWSMessage{Payload: pretty, Type: "pong"}, false},
		{"ping", &transportWSMessage{Payload: json.RawMessage{}, Type: "ping"}, false},
		{"next without payload", &transportWSMessage{ID: "1", Type: "next"}, false},
		{"not a pointer", transportWSMessage{Payload: response, ID: "1", Type: "next"}, false},
		{"fields in another order", &reordered{Payload: response, ID: "1", Type: "next"}, false},
		{"a map", map[string]any{"type": "next"}, false},
		{"nil", (*transportWSMessage)(nil), false},
	}
	frames := &liveFrames{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, fast := frames.appendFrame([]byte("kept"), c.msg)
			if fast != c.fast {
				t.Fatalf("written directly: %v, want %v", fast, c.fast)
			}
			if !fast {
				if string(got) != "kept" {
					t.Fatalf("the buffer changed to %q", got)
				}
				return
			}
			got = bytes.TrimPrefix(got, []byte("kept"))
			if want := marshalled(t, c.msg); !bytes.Equal(got, want) {
				t.Fatalf("frame\n%s\nwant json.Marshal's\n%s", got, want)
			}
			if !json.Valid(got) {
				t.Fatalf("frame %s is not JSON", got)
			}
		})
	}
}
