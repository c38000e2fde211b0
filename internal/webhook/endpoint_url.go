package webhook

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// MaxURLLength is the longest endpoint URL upstream accepts (its HttpsUrl max_length).
const MaxURLLength = 2083

// The messages upstream's URL validators raise for hosts (contract §3.13).
const (
	hostnameMsg    = "Value error, Invalid webhook URL: the hostname contains characters not allowed in domain names."
	privateHostMsg = "Value error, Webhook URLs cannot point to localhost or private IP addresses."
)

// URLError is a refused endpoint URL, worded as the validation item upstream reports for
// the body's url field: pydantic's error Type (url_parsing, url_too_long, url_scheme or
// value_error), the Msg exactly as the wire shows it, and the item's Ctx. Callers place it
// at the url field of their input.
type URLError struct {
	Type string
	Msg  string
	Ctx  map[string]any
}

func (e *URLError) Error() string { return e.Msg }

// ValidateURL checks an endpoint URL an organization gives and returns it without
// surrounding whitespace. The URL must parse, have a host and be at most MaxURLLength
// bytes; the host must be a valid IDNA domain name or an IP literal.
//
// requireHTTPS is the production rule set and upstream's: https only, and no localhost,
// 127.0.0.1, 0.0.0.0, [::1] or other non-global IP literal ([IsGlobalIP]), because a
// delivery is a request the server makes on the organization's behalf. A development
// server passes false so local receivers can be used: http is allowed too and so are
// private hosts. Host names are not resolved here; the sender checks the address it
// actually connects to.
func ValidateURL(raw string, requireHTTPS bool) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", parseError("input is empty")
	}
	if len(s) > MaxURLLength {
		return "", &URLError{Type: "url_too_long", Msg: "URL should have at most " + strconv.Itoa(MaxURLLength) + " characters",
			Ctx: map[string]any{"max_length": MaxURLLength}}
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", parseError(parseFailure(err))
	}
	if u.Scheme == "" {
		return "", parseError("relative URL without a base")
	}
	if err := checkScheme(strings.ToLower(u.Scheme), requireHTTPS); err != nil {
		return "", err
	}
	if u.Hostname() == "" {
		return "", parseError("empty host")
	}
	if err := checkHost(u, requireHTTPS); err != nil {
		return "", err
	}
	return s, nil
}

// parseError is pydantic's url_parsing item for a URL that does not parse.
func parseError(reason string) *URLError {
	return &URLError{Type: "url_parsing", Msg: "Input should be a valid URL, " + reason, Ctx: map[string]any{"error": reason}}
}

// parseFailure words a net/url error as the URL Standard parser upstream uses would.
func parseFailure(err error) string {
	text := err.Error()
	switch {
	case strings.Contains(text, "port"):
		return "invalid port number"
	case strings.Contains(text, "IP-literal"):
		return "invalid IPv6 address"
	case strings.Contains(text, "host name"):
		return "invalid domain character"
	case strings.Contains(text, "scheme"), strings.Contains(text, "colon"):
		return "relative URL without a base"
	}
	return "invalid URL"
}

// checkScheme allows https, and http too outside production.
func checkScheme(scheme string, requireHTTPS bool) error {
	expected := "'https'"
	if !requireHTTPS {
		expected = "'http' or 'https'"
	}
	if scheme == "https" || (!requireHTTPS && scheme == "http") {
		return nil
	}
	return &URLError{Type: "url_scheme", Msg: "URL scheme should be " + expected, Ctx: map[string]any{"expected_schemes": expected}}
}

// checkHost applies upstream's host rules in its order: a valid name or IP literal first,
// then (in production) no localhost and no non-global address.
func checkHost(u *url.URL, requireHTTPS bool) error {
	host := strings.ToLower(u.Hostname())
	var (
		addr netip.Addr
		err  error
	)
	switch {
	case strings.HasPrefix(u.Host, "["):
		if addr, err = netip.ParseAddr(host); err != nil {
			return parseError("invalid IPv6 address")
		}
	case hostEndsInNumber(host):
		var isIPv4 bool
		if addr, isIPv4 = parseIPv4Host(host); !isIPv4 {
			return parseError("invalid IPv4 address")
		}
	case !validDomain(host):
		return &URLError{Type: "value_error", Msg: hostnameMsg, Ctx: map[string]any{"error": map[string]any{}}}
	}
	if !requireHTTPS {
		return nil
	}
	if host == "localhost" || host == "localhost." || (addr.IsValid() && !IsGlobalIP(addr)) {
		return &URLError{Type: "value_error", Msg: privateHostMsg, Ctx: map[string]any{"error": map[string]any{}}}
	}
	return nil
}

// hostLabels splits a host into labels, dropping the empty label of one trailing dot.
func hostLabels(host string) []string {
	labels := strings.Split(host, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	return labels
}

// hostEndsInNumber is the URL Standard's test for a host to be read as IPv4: its last label
// is decimal digits or 0x-prefixed hex. Such hosts are never domain names, so
// "https://0x7f.1/" is 127.0.0.1 here as it is for every browser and for upstream's parser.
func hostEndsInNumber(host string) bool {
	labels := hostLabels(host)
	last := labels[len(labels)-1]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		return strings.Trim(last[2:], "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// parseIPv4Host reads a host as the URL Standard's IPv4 parser does: one to four parts,
// each decimal, octal (leading 0) or hex (0x), the last one filling the remaining bytes.
func parseIPv4Host(host string) (netip.Addr, bool) {
	parts := hostLabels(host)
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := ipv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// ipv4Part parses one IPv4 part in its radix.
func ipv4Part(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	radix := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		radix, p = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		radix, p = 8, p[1:]
	}
	if p == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(p, radix, 32)
	return n, err == nil
}

// validDomain reports whether a lowercase host name would pass IDNA 2008 encoding, as
// upstream checks with idna.encode: the IDNA registration rules of RFC 5891 section 4
// (no mapping, letters, digits and inner hyphens only, hyphens not in both the third and
// fourth places, labels of 1 to 63 and a name of at most 253 octets, the Bidi and
// joiner rules). An "xn--" label must decode to such a label. One trailing dot, the root,
// is allowed as idna.encode allows it.
func validDomain(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return false
	}
	_, err := idna.Registration.ToASCII(host)
	return err == nil
}
