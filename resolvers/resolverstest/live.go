package resolverstest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"till/internal/wake"
	"till/resolvers"
	"till/storage"
	"till/storage/storagetest"
)

// NewLive starts a server whose GraphQL subscriptions are live as in till serve: a LiveHub
// woken by a wake.Listener on the test database. It returns once the listener listens, so
// every event committed afterwards reaches the hub.
func NewLive(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	return NewLiveWithHub(tb, nil, opts...)
}

// NewLiveWithHub is NewLive with a hub made with hubOpts (an event budget, say).
func NewLiveWithHub(tb testing.TB, hubOpts []resolvers.LiveHubOption, opts ...Option) *Server {
	tb.Helper()
	dsn := storagetest.DSN(tb)
	db, err := storage.Open(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	logger := slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	hub := resolvers.NewLiveHub(db, logger, hubOpts...)
	s := NewWithDB(tb, db, append([]Option{func(d *resolvers.Deps) { d.Live = hub }}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	l := wake.New(dsn, logger)
	l.OnPayload(storage.LiveChannel, hub.Notify)
	l.OnPayload(storage.UsageChannel, hub.NotifyUsage)
	go l.Run(ctx)
	go hub.Run(ctx)
	for deadline := time.Now().Add(30 * time.Second); !l.Listening(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatal("resolverstest: the live listener did not start")
		}
	}
	return s
}

// LiveMessage is one graphql-transport-ws message.
type LiveMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// LiveClient is a graphql-transport-ws client, as a dashboard opens one. Once connected, a
// reader answers pings and queues messages, so waiting for a message with a deadline that
// passes leaves the connection open.
type LiveClient struct {
	Conn     *websocket.Conn
	messages chan LiveMessage
	readErr  error
}

// WebsocketURL is the ws:// address of a /graphql http:// URL.
func WebsocketURL(graphqlURL string) string {
	return "ws" + strings.TrimPrefix(graphqlURL, "http")
}

// DialLive opens a connection to url (ws://…/graphql) with header on the upgrade request and
// init as the connection_init payload, and waits for connection_ack. An error is whatever
// refused the connection: the HTTP answer, or the server's close.
func DialLive(ctx context.Context, url string, header http.Header, init map[string]any) (*LiveClient, error) {
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header, Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("%w (HTTP %d)", err, resp.StatusCode)
		}
		return nil, err
	}
	conn.SetReadLimit(1 << 22)
	c := &LiveClient{Conn: conn}
	payload, _ := json.Marshal(init)
	if err := wsjson.Write(ctx, conn, LiveMessage{Type: "connection_init", Payload: payload}); err != nil {
		conn.CloseNow()
		return nil, err
	}
	for {
		m, err := c.Next(ctx)
		if err != nil {
			conn.CloseNow()
			return nil, err
		}
		switch m.Type {
		case "connection_ack":
			c.messages = make(chan LiveMessage, 1024)
			go c.read()
			return c, nil
		case "ping":
			_ = wsjson.Write(ctx, conn, LiveMessage{Type: "pong"})
		case "ka", "pong":
		default:
			conn.CloseNow()
			return nil, fmt.Errorf("connection refused: %s %s", m.Type, m.Payload)
		}
	}
}

// Subscribe starts operation query with variables under id.
func (c *LiveClient) Subscribe(ctx context.Context, id, query string, variables map[string]any) error {
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": variables})
	return wsjson.Write(ctx, c.Conn, LiveMessage{Type: "subscribe", ID: id, Payload: payload})
}

// Stop ends the subscription id.
func (c *LiveClient) Stop(ctx context.Context, id string) error {
	return wsjson.Write(ctx, c.Conn, LiveMessage{Type: "complete", ID: id})
}

// Next returns the next message, or an error when ctx ends first or the connection is closed.
func (c *LiveClient) Next(ctx context.Context) (LiveMessage, error) {
	if c.messages == nil {
		return c.receive(ctx)
	}
	select {
	case m, ok := <-c.messages:
		if !ok {
			return m, c.readErr
		}
		return m, nil
	case <-ctx.Done():
		return LiveMessage{}, ctx.Err()
	}
}

// read queues the connection's messages until it closes.
func (c *LiveClient) read() {
	defer close(c.messages)
	for {
		m, err := c.receive(context.Background())
		if err != nil {
			c.readErr = err
			return
		}
		c.messages <- m
	}
}

// receive reads one message, answering pings on the way.
func (c *LiveClient) receive(ctx context.Context) (LiveMessage, error) {
	for {
		var m LiveMessage
		if err := wsjson.Read(ctx, c.Conn, &m); err != nil {
			return m, err
		}
		if m.Type == "ping" {
			_ = wsjson.Write(ctx, c.Conn, LiveMessage{Type: "pong"})
			continue
		}
		return m, nil
	}
}

// Close closes the connection.
func (c *LiveClient) Close() { _ = c.Conn.Close(websocket.StatusNormalClosure, "") }
