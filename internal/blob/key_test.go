package blob_test

import (
	"errors"
	"strings"
	"testing"

	"till/internal/blob"
)

func TestValidateKey(t *testing.T) {
	cases := []struct {
		key    string
		reason string // "" when valid
	}{
		{"invoices/0b6c9a52-3f0e-4f6e-9a38-6c1d2f0e7a10/INV-0001.pdf", ""},
		{"single", ""},
		{"uploads/id/Rechnung März 2026 (final).pdf", ""},
		{"uploads/id/a..b", ""},
		{strings.Repeat("k", 200), ""},
		{"", "empty"},
		{"/abs/x", "absolute path"},
		{"a//b", "empty segment"},
		{"a/b/", "empty segment"},
		{"a/./b", "dot segment"},
		{"a/../b", "dot segment"},
		{"..", "dot segment"},
		{"a/.env", "segment starts with a dot"},
		{`a\b`, "backslash"},
		{"a/b\x00", "NUL byte"},
		{"a/b\r\nX-Evil: 1", "control character"},
		{"a/b\x7f", "control character"},
		{"a/\xc3(", "not valid UTF-8"},
		{strings.Repeat("k", 201), "segment longer than 200 bytes"},
		{strings.Repeat("k/", 512) + "k", "longer than 1024 bytes"},
	}
	for _, c := range cases {
		err := blob.ValidateKey(c.key)
		var ke *blob.KeyError
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("ValidateKey(%q) = %v, want valid", c.key, err)
		case c.reason != "" && (!errors.As(err, &ke) || ke.Reason != c.reason || !errors.Is(err, blob.ErrInvalidKey)):
			t.Errorf("ValidateKey(%q) = %v, want KeyError %q", c.key, err, c.reason)
		}
	}
}

func TestJoinKey(t *testing.T) {
	cases := []struct {
		segments []string
		want     string // "" when refused
	}{
		{[]string{"invoices", "0b6c9a52", "INV-0001.pdf"}, "invoices/0b6c9a52/INV-0001.pdf"},
		{[]string{"invoices", "id", "../x"}, ""},
		{[]string{"invoices", "id", "sub/x"}, ""},
		{[]string{"invoices", "", "x"}, ""},
		{[]string{"invoices", "id", ".."}, ""},
		{nil, ""},
	}
	for _, c := range cases {
		got, err := blob.JoinKey(c.segments...)
		if got != c.want || (c.want == "") != errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("JoinKey(%q) = %q, %v; want %q", c.segments, got, err, c.want)
		}
	}
}
