package webhook

import (
	"fmt"
	"net/netip"
	"syscall"
)

// BlockedAddrError reports that a delivery was refused because the endpoint
// resolved to an address the server must not reach on an organization's
// behalf (see [IsGlobalIP]). It reaches callers wrapped in the
// *url.Error and *net.OpError of the HTTP client; use errors.As.
type BlockedAddrError struct {
	Addr netip.Addr
}

func (e *BlockedAddrError) Error() string {
	return fmt.Sprintf("webhook: refusing to connect to non-global address %s", e.Addr)
}

// IsGlobalIP reports whether ip is a publicly routable unicast address, the
// only kind an organization's webhook endpoint may resolve to. Loopback,
// private (RFC 1918, IPv6 unique local), link-local, unspecified, multicast,
// carrier-grade NAT (100.64.0.0/10), documentation, benchmarking and other
// IANA special-purpose ranges are not global. IPv4-mapped IPv6 addresses and
// the NAT64 well-known prefix 64:ff9b::/96 are judged by the IPv4 address
// they carry, so neither form smuggles an internal IPv4 target through.
// The zero Addr is not global.
func IsGlobalIP(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	switch {
	case ip.Is4():
		return isGlobal4(ip.As4())
	case ip.Is6():
		return isGlobal6(ip.As16())
	}
	return false
}

// isGlobal4 rejects the IPv4 special-purpose ranges (RFC 6890 and the IANA
// registry) that are not globally reachable unicast.
func isGlobal4(b [4]byte) bool {
	switch {
	case b[0] == 0: // 0.0.0.0/8 "this network"
	case b[0] == 10: // 10.0.0.0/8 private
	case b[0] == 100 && b[1]&0xc0 == 64: // 100.64.0.0/10 carrier-grade NAT
	case b[0] == 127: // 127.0.0.0/8 loopback
	case b[0] == 169 && b[1] == 254: // 169.254.0.0/16 link-local (cloud metadata)
	case b[0] == 172 && b[1]&0xf0 == 16: // 172.16.0.0/12 private
	case b[0] == 192 && b[1] == 0 && b[2] == 0: // 192.0.0.0/24 IETF protocol assignments
	case b[0] == 192 && b[1] == 0 && b[2] == 2: // 192.0.2.0/24 documentation
	case b[0] == 192 && b[1] == 88 && b[2] == 99: // 192.88.99.0/24 6to4 relay anycast
	case b[0] == 192 && b[1] == 168: // 192.168.0.0/16 private
	case b[0] == 198 && b[1]&0xfe == 18: // 198.18.0.0/15 benchmarking
	case b[0] == 198 && b[1] == 51 && b[2] == 100: // 198.51.100.0/24 documentation
	case b[0] == 203 && b[1] == 0 && b[2] == 113: // 203.0.113.0/24 documentation
	case b[0] >= 224: // multicast, reserved 240.0.0.0/4, broadcast
	default:
		return true
	}
	return false
}

// isGlobal6 accepts only the global unicast allocation 2000::/3, minus its
// special-purpose parts, and NAT64 addresses whose embedded IPv4 address is
// global. Everything outside 2000::/3 (loopback, unspecified, IPv4-compatible
// and translated forms, unique local, link-local, site-local, multicast,
// discard-only, NAT64 local-use) is refused.
func isGlobal6(b [16]byte) bool {
	if isNAT64WellKnown(b) {
		return isGlobal4([4]byte(b[12:16]))
	}
	switch {
	case b[0]&0xe0 != 0x20: // outside 2000::/3
	case b[0] == 0x20 && b[1] == 0x01 && b[2] < 0x02: // 2001::/23 IETF protocol assignments (Teredo, ORCHID, benchmarking)
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8: // 2001:db8::/32 documentation
	case b[0] == 0x20 && b[1] == 0x02: // 2002::/16 6to4, which embeds any IPv4 address
	case b[0] == 0x3f && b[1] == 0xff && b[2]&0xf0 == 0: // 3fff::/20 documentation
	default:
		return true
	}
	return false
}

// isNAT64WellKnown reports whether b is in 64:ff9b::/96 (RFC 6052). On an
// IPv6-only network with DNS64 every IPv4-only receiver resolves there, so
// the prefix is allowed and the embedded address decides.
func isNAT64WellKnown(b [16]byte) bool {
	return b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b &&
		[8]byte(b[4:12]) == [8]byte{}
}

// dialGuard returns the net.Dialer Control hook that enforces [IsGlobalIP].
// Control runs after name resolution, once per address actually dialled, so
// the check applies to the IP the socket connects to: a host name that
// resolves to a private address, or that changes its answer between
// validation and delivery (DNS rebinding), is still refused.
func dialGuard(allowPrivate bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if allowPrivate {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("webhook: unexpected dial address %q: %w", address, err)
		}
		if !IsGlobalIP(ap.Addr()) {
			return &BlockedAddrError{Addr: ap.Addr()}
		}
		return nil
	}
}
