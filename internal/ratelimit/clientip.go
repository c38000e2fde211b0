package ratelimit

import (
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP returns the function that names the address a request counts
// against. It is the TCP peer (RemoteAddr's host) unless the peer is inside
// one of trustedProxies; then X-Forwarded-For is read from the right, each
// trusted hop vouching for the address to its left, and the right-most
// address outside trustedProxies is the client. Anything left of it was
// written by the client and is ignored, so an untrusted peer cannot choose
// its own identity by sending the header. The client is named by its IPv4
// address or by the /64 of its IPv6 address (see clientKey), so one client
// has one key.
func ClientIP(trustedProxies []netip.Prefix) func(*http.Request) string {
	trusted := make([]netip.Prefix, len(trustedProxies))
	for i, p := range trustedProxies {
		trusted[i] = unmapPrefix(p)
	}
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) string {
		peer, ok := parseAddr(r.RemoteAddr)
		if !ok {
			return r.RemoteAddr
		}
		if !isTrusted(peer) {
			return clientKey(peer)
		}
		return clientKey(forwardedClient(r.Header.Values("X-Forwarded-For"), peer, isTrusted))
	}
}

// forwardedClient walks X-Forwarded-For from the right starting at the
// trusted peer. An entry that does not parse stops the walk at the last
// trusted hop: a trusted proxy never writes one, so it came from a client,
// and using it as the key would let that client pick any key it likes.
func forwardedClient(headers []string, peer netip.Addr, isTrusted func(netip.Addr) bool) netip.Addr {
	client := peer
	for i := len(headers) - 1; i >= 0; i-- {
		hops := strings.Split(headers[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			addr, ok := parseAddr(strings.TrimSpace(hops[j]))
			if !ok {
				return client
			}
			client = addr
			if !isTrusted(addr) {
				return client
			}
		}
	}
	return client
}

// parseAddr accepts "host:port", "[v6]:port" and a bare address, as found in
// RemoteAddr and in X-Forwarded-For entries of proxies that append ports.
func parseAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return canonical(ap.Addr()), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return canonical(a), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return canonical(a), true
		}
	}
	return netip.Addr{}, false
}

// clientKey names the unit a client is counted by: its IPv4 address, or the
// /64 of its IPv6 address ("2001:db8:1:2::/64"). One IPv6 subscriber is
// routinely given a whole /64, and counting each address would give it a
// fresh budget (license guesses, GraphQL cost, OAuth2 failures) per address;
// internal/connlimit groups connections the same way. a is canonical, so an
// IPv4-mapped address is already an IPv4 one here.
func clientKey(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}

func canonical(a netip.Addr) netip.Addr {
	return a.Unmap().WithZone("")
}

// unmapPrefix lets a prefix written as ::ffff:10.0.0.0/104 match the
// unmapped addresses parseAddr produces.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	a := p.Addr()
	if !a.Is4In6() {
		return p
	}
	bits := p.Bits() - 96
	if bits < 0 {
		return p
	}
	return netip.PrefixFrom(a.Unmap(), bits)
}
