package webhook_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/webhook"
)

const (
	hostnameMsg = "Value error, Invalid webhook URL: the hostname contains characters not allowed in domain names."
	privateMsg  = "Value error, Webhook URLs cannot point to localhost or private IP addresses."
)

// valueError is the item of a hostname rule.
func valueError(msg string) *webhook.URLError {
	return &webhook.URLError{Type: "value_error", Msg: msg, Ctx: map[string]any{"error": map[string]any{}}}
}

// parsing is the item of a URL that does not parse.
func parsing(reason string) *webhook.URLError {
	return &webhook.URLError{Type: "url_parsing", Msg: "Input should be a valid URL, " + reason, Ctx: map[string]any{"error": reason}}
}

func TestValidateURL(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("a", webhook.MaxURLLength-len("https://example.com/"))
	tests := []struct {
		name   string
		raw    string
		strict bool
		want   string // the accepted URL when err is nil
		err    *webhook.URLError
	}{
		{"a public https URL is accepted", "https://example.com/hook?x=1", true, "https://example.com/hook?x=1", nil},
		{"surrounding whitespace is stripped", " \thttps://example.com/hook\n", true, "https://example.com/hook", nil},
		{"a URL of exactly the maximum length is accepted", long, true, long, nil},
		{"an internationalized host is accepted", "https://bücher.example/", true, "https://bücher.example/", nil},
		{"a punycode host is accepted", "https://xn--bcher-kva.example/", true, "https://xn--bcher-kva.example/", nil},
		{"a public IPv4 literal is accepted", "https://8.8.8.8/", true, "https://8.8.8.8/", nil},
		{"a public IPv6 literal is accepted", "https://[2606:4700::1111]:8443/", true, "https://[2606:4700::1111]:8443/", nil},
		{"a Japanese host is accepted", "https://例え.example/", true, "https://例え.example/", nil},
		{"an Arabic host passes the Bidi rule", "https://ليهمابتكلموشعربي؟.example/", true, "https://ليهمابتكلموشعربي؟.example/", nil},
		{"a mixed-script A-label is accepted", "https://xn--3b-ww4c5e180e575a65lsy2b.example/", true, "https://xn--3b-ww4c5e180e575a65lsy2b.example/", nil},
		{"a trailing dot is accepted", "https://example.com./", true, "https://example.com./", nil},

		{"an empty URL does not parse", "", true, "", parsing("input is empty")},
		{"blank space does not parse", "  ", true, "", parsing("input is empty")},
		{"a URL longer than 2083 characters is too long", long + "a", true, "", &webhook.URLError{Type: "url_too_long",
			Msg: "URL should have at most 2083 characters", Ctx: map[string]any{"max_length": 2083}}},
		{"a URL without a scheme does not parse", "example.com/hook", true, "", parsing("relative URL without a base")},
		{"http is refused in production", "http://example.com/", true, "", &webhook.URLError{Type: "url_scheme",
			Msg: "URL scheme should be 'https'", Ctx: map[string]any{"expected_schemes": "'https'"}}},
		{"other schemes are refused in development", "ftp://example.com/", false, "", &webhook.URLError{Type: "url_scheme",
			Msg: "URL scheme should be 'http' or 'https'", Ctx: map[string]any{"expected_schemes": "'http' or 'https'"}}},
		{"a URL without a host does not parse", "https:///hook", true, "", parsing("empty host")},
		{"a space in the host does not parse", "https://exa mple.com/", true, "", parsing("invalid domain character")},
		{"an IPv4 part above 255 does not parse", "https://256.1.1.1/", true, "", parsing("invalid IPv4 address")},

		{"an underscore in the host is not IDNA-valid", "https://my_host.example.com/", true, "", valueError(hostnameMsg)},
		{"a leading hyphen is not IDNA-valid", "https://-bad.example.com/", true, "", valueError(hostnameMsg)},
		{"hyphens in the third and fourth places are not IDNA-valid", "https://ab--c.example.com/", true, "", valueError(hostnameMsg)},
		{"a 64-character label is not IDNA-valid", "https://" + strings.Repeat("a", 64) + ".com/", true, "", valueError(hostnameMsg)},
		{"an empty label is not IDNA-valid", "https://a..example.com/", true, "", valueError(hostnameMsg)},
		{"a malformed punycode label is not IDNA-valid", "https://xn--.example/", true, "", valueError(hostnameMsg)},
		{"a punycode label of plain ASCII is not IDNA-valid", "https://xn--abc-.example/", true, "", valueError(hostnameMsg)},
		{"an A-label ending inside a number is not IDNA-valid", "https://xn--bcher-kv.example/", true, "", valueError(hostnameMsg)},
		{"an A-label that overflows is not IDNA-valid", "https://xn--99999999999a.example/", true, "", valueError(hostnameMsg)},
		{"an A-label beyond the last code point is not IDNA-valid", "https://xn--zzzzzzzzz.example/", true, "", valueError(hostnameMsg)},
		{"a host in capitals is judged in lowercase", "https://BÜCHER.example/", true, "https://BÜCHER.example/", nil},
		{"a zero width joiner out of context is not IDNA-valid", "https://a\u200db.example/", true, "", valueError(hostnameMsg)},
		{"IDNA validity is checked in development too", "http://my_host/", false, "", valueError(hostnameMsg)},

		{"localhost is refused", "https://localhost/hook", true, "", valueError(privateMsg)},
		{"localhost in capitals with a port is refused", "https://LOCALHOST:8443/", true, "", valueError(privateMsg)},
		{"127.0.0.1 is refused", "https://127.0.0.1/", true, "", valueError(privateMsg)},
		{"0.0.0.0 is refused", "https://0.0.0.0/", true, "", valueError(privateMsg)},
		{"[::1] is refused", "https://[::1]/", true, "", valueError(privateMsg)},
		{"a private IPv4 address is refused", "https://10.1.2.3/", true, "", valueError(privateMsg)},
		{"another private IPv4 range is refused", "https://192.168.0.10/", true, "", valueError(privateMsg)},
		{"a link-local address (cloud metadata) is refused", "https://169.254.169.254/latest", true, "", valueError(privateMsg)},
		{"carrier-grade NAT is refused", "https://100.64.0.1/", true, "", valueError(privateMsg)},
		{"a documentation range is refused", "https://192.0.2.1/", true, "", valueError(privateMsg)},
		{"multicast is refused", "https://224.0.0.1/", true, "", valueError(privateMsg)},
		{"an IPv6 unique local address is refused", "https://[fd00::1]/", true, "", valueError(privateMsg)},
		{"an IPv6 link-local address is refused", "https://[fe80::1]/", true, "", valueError(privateMsg)},
		{"an IPv4-mapped loopback is refused", "https://[::ffff:127.0.0.1]/", true, "", valueError(privateMsg)},
		{"loopback written in hex is refused", "https://0x7f.1/", true, "", valueError(privateMsg)},
		{"loopback written as one number is refused", "https://2130706433/", true, "", valueError(privateMsg)},

		{"development allows http to localhost", "http://localhost:8080/hook", false, "http://localhost:8080/hook", nil},
		{"development allows private addresses", "http://10.0.0.5/hook", false, "http://10.0.0.5/hook", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhook.ValidateURL(tt.raw, tt.strict)
			if tt.err == nil {
				if err != nil || got != tt.want {
					t.Fatalf("ValidateURL(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
				}
				return
			}
			var ue *webhook.URLError
			if !errors.As(err, &ue) {
				t.Fatalf("ValidateURL(%q) = %q, %v; want a *URLError", tt.raw, got, err)
			}
			if diff := cmp.Diff(tt.err, ue); diff != "" {
				t.Errorf("ValidateURL(%q) error (-want +got):\n%s", tt.raw, diff)
			}
			if ue.Error() != tt.err.Msg {
				t.Errorf("Error() = %q, want the message", ue.Error())
			}
		})
	}
}
