package reqinfo

import (
	"context"
	"log/slog"
)

// LogHandler adds the request id to every record logged with a request's context (the
// *Context logging methods), so a resolver's error or a panic can be found next to the
// request's access log line.
type LogHandler struct{ slog.Handler }

// Handle implements slog.Handler.
func (h LogHandler) Handle(ctx context.Context, r slog.Record) error {
	if info := From(ctx); info != nil {
		r.AddAttrs(slog.String("request_id", info.ID))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return LogHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h LogHandler) WithGroup(name string) slog.Handler {
	return LogHandler{h.Handler.WithGroup(name)}
}
