package fastapi

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// URL is pydantic's AnyUrl with UrlConstraints (HttpUrl is Schemes http and
// https, MaxLength 2083). pydantic parses with the Rust url crate, a WHATWG
// URL parser, and stores the serialised form, which is what the variable
// carries: lowercase scheme and host, punycode, default port dropped, "/" as
// the empty path, dot segments resolved, unsafe characters percent-encoded.
// Hosts are not NFC-normalised (clients send NFC).
type URL struct {
	Schemes   []string // allowed schemes; nil allows any
	MaxLength int      // in bytes of the input, checked before parsing; 0: none
}

func (URL) validatorName() string { return "url" }

func (u URL) validate(in any, loc []any) (outcome, []ValidationError) {
	s, isStr := in.(string)
	if !isStr {
		return fail(newError("url_type", loc, "URL input should be a string or URL", in))
	}
	if s == "" {
		return fail(errURLParsing(loc, in, "input is empty"))
	}
	if u.MaxLength > 0 && len(s) > u.MaxLength {
		return fail(newError("url_too_long", loc, fmt.Sprintf("URL should have at most %d characters", u.MaxLength), in, "max_length", u.MaxLength))
	}
	serialized, scheme, errText := parseWHATWG(s)
	if errText != "" {
		return fail(errURLParsing(loc, in, errText))
	}
	if u.Schemes != nil && !containsString(u.Schemes, scheme) {
		expected := pyOrList(u.Schemes)
		return fail(newError("url_scheme", loc, "URL scheme should be "+expected, in, "expected_schemes", expected))
	}
	return ok(serialized, lax)
}

func errURLParsing(loc []any, in any, errText string) ValidationError {
	return newError("url_parsing", loc, "Input should be a valid URL, "+errText, in, "error", errText)
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// defaultPort tells the WHATWG special schemes (file aside) and their ports.
func defaultPort(scheme string) (string, bool) {
	switch scheme {
	case "http", "ws":
		return "80", true
	case "https", "wss":
		return "443", true
	case "ftp":
		return "21", true
	}
	return "", false
}

// parseWHATWG parses s as the URL Standard does for special schemes and
// returns its serialisation; other schemes only have their scheme read,
// which is all a scheme check needs.
func parseWHATWG(s string) (serialized, scheme, errText string) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !isASCIIAlpha(s[0]) || strings.IndexFunc(s[:colon], func(r rune) bool {
		return !(r < 0x80 && (isASCIIAlpha(byte(r)) || isDigit(byte(r)) || r == '+' || r == '-' || r == '.'))
	}) >= 0 {
		return "", "", "relative URL without a base"
	}
	scheme = strings.ToLower(s[:colon])
	port, special := defaultPort(scheme)
	if !special {
		return s, scheme, ""
	}
	rest := strings.TrimLeft(s[colon+1:], `/\`)
	end := strings.IndexAny(rest, `/\?#`)
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo := ""
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, authority = authority[:at], authority[at+1:]
	}
	hostText, portText := splitHostPort(authority)
	if hostText == "" {
		return "", scheme, "empty host"
	}
	host, errText := parseHost(hostText)
	if errText != "" {
		return "", scheme, errText
	}
	var b strings.Builder
	b.WriteString(scheme + "://")
	if userinfo != "" {
		user, pass, _ := strings.Cut(userinfo, ":")
		b.WriteString(percentEncode(user, userinfoSet))
		if pass != "" {
			b.WriteString(":" + percentEncode(pass, userinfoSet))
		}
		if user != "" || pass != "" {
			b.WriteByte('@')
		}
	}
	b.WriteString(host)
	if portText != "" {
		digits := strings.TrimLeft(portText, "0")
		n, err := strconv.Atoi("0" + digits)
		if strings.TrimLeft(portText, "0123456789") != "" || len(digits) > 5 || err != nil || n > 65535 {
			return "", scheme, "invalid port number"
		}
		if p := strconv.Itoa(n); p != port {
			b.WriteString(":" + p)
		}
	}
	path, query, fragment, hasQuery, hasFragment := splitTail(tail)
	b.WriteString(normalizePath(path))
	if hasQuery {
		b.WriteString("?" + percentEncode(query, specialQuerySet))
	}
	if hasFragment {
		b.WriteString("#" + percentEncode(fragment, fragmentSet))
	}
	return b.String(), scheme, ""
}

func isASCIIAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func splitHostPort(authority string) (host, port string) {
	if strings.HasPrefix(authority, "[") {
		if end := strings.IndexByte(authority, ']'); end >= 0 {
			host, rest := authority[:end+1], authority[end+1:]
			return host, strings.TrimPrefix(rest, ":")
		}
		return authority, ""
	}
	if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		return authority[:i], authority[i+1:]
	}
	return authority, ""
}

func splitTail(tail string) (path, query, fragment string, hasQuery, hasFragment bool) {
	if i := strings.IndexByte(tail, '#'); i >= 0 {
		tail, fragment, hasFragment = tail[:i], tail[i+1:], true
	}
	if i := strings.IndexByte(tail, '?'); i >= 0 {
		tail, query, hasQuery = tail[:i], tail[i+1:], true
	}
	return tail, query, fragment, hasQuery, hasFragment
}

// normalizePath resolves dot segments and percent-encodes a special path.
func normalizePath(path string) string {
	segs := strings.Split(strings.ReplaceAll(path, `\`, "/"), "/")
	if len(segs) > 0 && segs[0] == "" {
		segs = segs[1:]
	}
	var out []string
	for i, seg := range segs {
		last := i == len(segs)-1
		switch strings.ToLower(seg) {
		case ".", "%2e":
			if last {
				out = append(out, "")
			}
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, percentEncode(seg, pathSet))
		}
	}
	return "/" + strings.Join(out, "/")
}

// The URL Standard's percent-encode sets; every non-ASCII byte is encoded.
const (
	fragmentSet     = "\x00 \"<>`"
	specialQuerySet = "\x00 \"#<>'"
	pathSet         = "\x00 \"#<>?`{}"
	userinfoSet     = "\x00 \"#<>?`{}/:;=@[\\]^|"
)

func percentEncode(s, set string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || strings.IndexByte(set, c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// parseHost is the host parser for special schemes: IPv6 in brackets, an
// IPv4 address when the last label is numeric, else a domain that goes
// through IDNA (lowercased, punycoded when not ASCII).
func parseHost(h string) (string, string) {
	if strings.HasPrefix(h, "[") {
		inner := strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
		addr, err := netip.ParseAddr(inner)
		if err != nil || !strings.HasSuffix(h, "]") || addr.Is4() || addr.Zone() != "" {
			return "", "invalid IPv6 address"
		}
		return "[" + ipv6String(addr.As16()) + "]", ""
	}
	decoded := []byte(unquoteBytes(h))
	if !utf8.Valid(decoded) {
		return "", "invalid international domain name"
	}
	domain, errText := domainToASCII(string(decoded))
	if errText != "" {
		return "", errText
	}
	if endsInNumber(domain) {
		ip, ok := parseIPv4(domain)
		if !ok {
			return "", "invalid IPv4 address"
		}
		return ip, ""
	}
	return domain, ""
}

// unquoteBytes percent-decodes, leaving malformed escapes as they are.
func unquoteBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// domainToASCII is the URL Standard's domain to ASCII with beStrict false: UTS #46
// non-transitional processing (so "ß" is kept and punycoded, not mapped to "ss") with
// CheckBidi and CheckJoiners, but without CheckHyphens, UseSTD3ASCIIRules or
// VerifyDnsLength, which is why "x_y.com", "-x.com" and "x..com" pass as they do for
// upstream. No forbidden domain code point may remain in the result.
func domainToASCII(d string) (string, string) {
	const invalid = "invalid international domain name"
	profile := idna.New(idna.MapForLookup(), idna.Transitional(false), idna.CheckHyphens(false),
		idna.StrictDomainName(false), idna.VerifyDNSLength(false), idna.BidiRule())
	ascii, err := profile.ToASCII(d)
	if err != nil || hasBareACEPrefix(d) || strings.IndexFunc(ascii, forbiddenDomainCodePoint) >= 0 {
		return "", invalid
	}
	return ascii, ""
}

// hasBareACEPrefix reports a label that is "xn--" alone: UTS #46 makes a label that
// decodes to nothing an error, which x/net/idna lets through as an empty label.
func hasBareACEPrefix(d string) bool {
	for _, label := range strings.Split(d, ".") {
		if strings.EqualFold(label, "xn--") {
			return true
		}
	}
	return false
}

// forbiddenDomainCodePoint is the URL Standard's set: C0 controls, space, DEL and
// "#%/:<>?@[\\]^|".
func forbiddenDomainCodePoint(r rune) bool {
	return r <= 0x20 || r == 0x7f || strings.ContainsRune("#%/:<>?@[\\]^|", r)
}

func endsInNumber(domain string) bool {
	labels := strings.Split(domain, ".")
	if labels[len(labels)-1] == "" && len(labels) > 1 {
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if last != "" && strings.TrimLeft(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Number(last)
	return ok && (strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X"))
}

// ipv4Number parses one part: decimal, 0x-hex or 0-octal.
func ipv4Number(p string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	if p == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 64)
	return n, err == nil
}

func parseIPv4(domain string) (string, bool) {
	parts := strings.Split(domain, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return "", false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return "", false
	}
	ip := last
	for i, n := range nums[:len(nums)-1] {
		ip += n << (8 * (3 - i))
	}
	return fmt.Sprintf("%d.%d.%d.%d", ip>>24, ip>>16&0xff, ip>>8&0xff, ip&0xff), true
}

// ipv6String serialises as the URL Standard does: lowercase hex groups, the
// first longest run of two or more zero groups compressed, no IPv4 form.
func ipv6String(b [16]byte) string {
	var groups [8]uint16
	for i := range groups {
		groups[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	bestStart, bestLen := -1, 1
	for i := 0; i < 8; {
		if groups[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && groups[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestStart, bestLen = i, j-i
		}
		i = j
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == bestStart {
			sb.WriteString("::")
			i += bestLen - 1
			continue
		}
		if i > 0 && i != bestStart+bestLen {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(groups[i]), 16))
	}
	return sb.String()
}
