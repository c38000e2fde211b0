package reqinfo_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"till/internal/reqinfo"
)

func TestLogHandlerAddsTheRequestID(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(reqinfo.LogHandler{Handler: slog.NewJSONHandler(&out, nil)}).With("component", "test")
	ctx, _ := reqinfo.New(context.Background(), "abc")
	cases := []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"a record logged with a request's context carries its id", ctx, true},
		{"a record logged outside a request carries none", context.Background(), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out.Reset()
			logger.ErrorContext(c.ctx, "failed")
			if got := strings.Contains(out.String(), `"request_id":"abc"`); got != c.want {
				t.Errorf("logged %s, want request id: %v", out.String(), c.want)
			}
		})
	}
}

func TestInfoOutsideARequestIsSafe(t *testing.T) {
	info := reqinfo.From(context.Background())
	info.SetOperation(reqinfo.Operation{Name: "x"})
	info.SetPrincipal("organization", "o")
	if _, ok := info.Operation(); ok {
		t.Error("an absent Info reports an operation")
	}
	if kind, org := info.Principal(); kind != "" || org != "" {
		t.Errorf("an absent Info reports principal %q %q", kind, org)
	}
}
