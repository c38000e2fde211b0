package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
)

// liveSocket is the websocket under the subscription transport: gqlgen's coder/websocket
// adapter, except for how an event's frame is encoded. gqlgen encodes the response, then
// hands the adapter a message holding it as a json.RawMessage; json.Marshal would compact
// and validate those bytes a second time, a seventh of the server's CPU at 1,000
// subscribers. The response came out of json.Marshal a moment before, so it is copied as it
// is, and the frame's bytes stay those json.Marshal writes (a test holds them equal).
type liveSocket struct {
	accept websocket.AcceptOptions
	frames *liveFrames
}

// newLiveSocket accepts websockets with opts.
func newLiveSocket(opts websocket.AcceptOptions) liveSocket {
	return liveSocket{accept: opts, frames: &liveFrames{}}
}

var _ transport.WebsocketImplementation = liveSocket{}

// Accept implements transport.WebsocketImplementation.
func (s liveSocket) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	for key, values := range o.ResponseHeader {
		for _, v := range values {
			w.Header().Add(key, v)
		}
	}
	opts := s.accept
	opts.Subprotocols = slices.Clone(opts.Subprotocols)
	for _, p := range o.Subprotocols {
		if !slices.Contains(opts.Subprotocols, p) {
			opts.Subprotocols = append(opts.Subprotocols, p)
		}
	}
	conn, err := websocket.Accept(w, r, &opts)
	if err != nil {
		return nil, err
	}
	return &liveSocketConn{conn: conn, frames: s.frames}, nil
}

// liveSocketConn is one accepted websocket.
type liveSocketConn struct {
	conn   *websocket.Conn
	frames *liveFrames

	mu sync.Mutex
	// deadline closes the connection when a pong is overdue (SetReadDeadline).
	deadline *time.Timer
	// closing is set once WriteClose has started the close handshake, which then owns the
	// connection's end.
	closing bool
}

var (
	_ transport.WebsocketConn          = (*liveSocketConn)(nil)
	_ transport.WebsocketReadLimiter   = (*liveSocketConn)(nil)
	_ transport.WebsocketReadDeadliner = (*liveSocketConn)(nil)
)

// NextReader implements transport.WebsocketConn: a normal close by the peer is
// transport.ErrWebsocketClosed.
func (c *liveSocketConn) NextReader() (int, io.Reader, error) {
	typ, data, err := c.conn.Read(context.Background())
	if err != nil {
		switch websocket.CloseStatus(err) {
		case websocket.StatusNormalClosure, websocket.StatusNoStatusRcvd:
			return int(typ), nil, transport.ErrWebsocketClosed
		}
		return int(typ), nil, err
	}
	return int(typ), bytes.NewReader(data), nil
}

// WriteJSON implements transport.WebsocketConn.
func (c *liveSocketConn) WriteJSON(v any) error {
	buf, _ := c.frames.buffers.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	frame, ok := c.frames.appendFrame((*buf)[:0], v)
	if !ok {
		var err error
		if frame, err = json.Marshal(v); err != nil {
			return err
		}
	}
	err := c.conn.Write(context.Background(), websocket.MessageText, frame)
	if ok && cap(frame) <= liveFrameKeep { // the websocket has copied the frame
		*buf = frame
		c.frames.buffers.Put(buf)
	}
	return err
}

// liveFrameKeep is the largest buffer kept for the next frame.
const liveFrameKeep = 64 << 10

// WriteClose implements transport.WebsocketConn. The close handshake waits up to five
// seconds for the peer's answer, so it runs on its own: the transport's teardown does not
// wait on a slow or gone peer.
func (c *liveSocketConn) WriteClose(code int, reason string) error {
	c.mu.Lock()
	c.stopDeadline()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	c.mu.Unlock()
	go func() { _ = c.conn.Close(websocket.StatusCode(code), reason) }()
	return nil
}

// Close implements io.Closer; after WriteClose the handshake closes the connection itself.
func (c *liveSocketConn) Close() error {
	c.mu.Lock()
	c.stopDeadline()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return nil
	}
	return c.conn.CloseNow()
}

// Subprotocol implements transport.WebsocketConn.
func (c *liveSocketConn) Subprotocol() string { return c.conn.Subprotocol() }

// SetReadLimit implements transport.WebsocketReadLimiter.
func (c *liveSocketConn) SetReadLimit(limit int64) { c.conn.SetReadLimit(limit) }

// SetReadDeadline implements transport.WebsocketReadDeadliner: the connection is closed at
// deadline unless a later call moves it; the zero time clears it.
func (c *liveSocketConn) SetReadDeadline(deadline time.Time) error {
	c.mu.Lock()
	c.stopDeadline()
	wait := time.Until(deadline)
	if !deadline.IsZero() && wait > 0 {
		c.deadline = time.AfterFunc(wait, func() { _ = c.conn.CloseNow() })
	}
	c.mu.Unlock()
	if !deadline.IsZero() && wait <= 0 {
		return c.conn.CloseNow()
	}
	return nil
}

// stopDeadline clears the read deadline; c.mu is held.
func (c *liveSocketConn) stopDeadline() {
	if c.deadline != nil {
		c.deadline.Stop()
		c.deadline = nil
	}
}

// liveFrameShape is where a gqlgen message struct keeps its fields, found once per type.
type liveFrameShape struct {
	ok                   bool
	payload, id, msgType int
}

// liveFrames encodes the frames of a server's websockets.
type liveFrames struct {
	// buffers holds *[]byte to encode frames into.
	buffers sync.Pool
	// shapes maps a message's reflect.Type to its liveFrameShape.
	shapes sync.Map
}

// appendFrame appends v's encoding to buf when v is a data message of gqlgen's
// websocket protocols (a pointer to a struct of Payload json.RawMessage, ID and Type with
// gqlgen's tags, Type "next" or "data"): {"payload":…,"id":"…","type":"next"}, the bytes
// json.Marshal writes for it, the payload as it is. Those messages' payloads are the
// responses gqlgen has just encoded with json.Marshal, so they are already compact and
// escaped as json.Marshal escapes. It reports false for anything else, which the caller
// encodes with json.Marshal: other messages may carry what a client sent (a ping's
// payload), which json.Marshal must compact.
func (lf *liveFrames) appendFrame(buf []byte, v any) ([]byte, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return buf, false
	}
	rv = rv.Elem()
	shape := lf.shapeOf(rv.Type())
	if !shape.ok {
		return buf, false
	}
	payload, id, typ := rv.Field(shape.payload).Bytes(), rv.Field(shape.id).String(), rv.Field(shape.msgType).String()
	if (typ != "next" && typ != "data") || len(payload) == 0 {
		return buf, false
	}
	buf = append(buf, `{"payload":`...)
	buf = append(buf, payload...)
	if id != "" {
		buf = append(buf, `,"id":`...)
		buf = appendJSONString(buf, id)
	}
	buf = append(buf, `,"type":"`...)
	buf = append(buf, typ...)
	return append(buf, `"}`...), true
}

// shapeOf finds the fields of gqlgen's message struct t, or none when t is not one: it
// must have exactly the three exported fields, in the order and with the tags that make
// json.Marshal write payload, id and type in that order.
func (lf *liveFrames) shapeOf(t reflect.Type) liveFrameShape {
	if s, ok := lf.shapes.Load(t); ok {
		return s.(liveFrameShape)
	}
	want := []struct {
		name, tag string
		kind      reflect.Kind
	}{{"Payload", "payload,omitempty", reflect.Slice}, {"ID", "id,omitempty", reflect.String}, {"Type", "type", reflect.String}}
	var s liveFrameShape
	var found []int
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			found = append(found, i)
		}
	}
	s.ok = len(found) == len(want)
	for i := 0; s.ok && i < len(want); i++ {
		f := t.Field(found[i])
		s.ok = f.Name == want[i].name && f.Tag.Get("json") == want[i].tag && f.Type.Kind() == want[i].kind &&
			(f.Type.Kind() != reflect.Slice || f.Type == reflect.TypeFor[json.RawMessage]()) &&
			(f.Type.Kind() != reflect.String || !f.Type.Implements(reflect.TypeFor[json.Marshaler]()))
	}
	if s.ok {
		s.payload, s.id, s.msgType = found[0], found[1], found[2]
	}
	lf.shapes.Store(t, s)
	return s
}

// appendJSONString appends s as json.Marshal writes a string: as it is when it holds only
// printable ASCII that needs no escape, through json.Marshal otherwise.
func appendJSONString(buf []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
