// Package connlimit caps how many TCP connections one client holds open at once. Request
// deadlines bound how long a stalled connection lives; this bounds how many one client can
// stall at the same time, so a single address cannot use up the server's file descriptors.
// It counts by the TCP peer, the only address a client cannot choose: a trusted proxy's
// X-Forwarded-For names clients per request, not per connection, and is handled by the
// request-level limits.
package connlimit

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// Listener is a net.Listener that closes, as soon as they are accepted, connections from a
// client that already holds Max of them. Closing at accept costs no goroutine, no read and
// no answer: the refused client sees its connection end before any request.
type Listener struct {
	net.Listener
	max     int
	refused atomic.Uint64

	mu   sync.Mutex
	open map[netip.Prefix]int
}

// New wraps ln so that one client holds at most max connections; max <= 0 returns ln as is.
func New(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		return ln
	}
	return &Listener{Listener: ln, max: max, open: map[netip.Prefix]int{}}
}

// Accept returns the next connection within its client's allowance, closing the others.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, ok := clientOf(c.RemoteAddr())
		if !ok {
			return c, nil // not TCP/IP (a unix socket): no client address to count by
		}
		if !l.acquire(key) {
			l.refused.Add(1)
			_ = c.Close()
			continue
		}
		return &conn{Conn: c, release: func() { l.releaseKey(key) }}, nil
	}
}

// Refused is how many connections were closed at accept because their client was at the cap.
func (l *Listener) Refused() uint64 { return l.refused.Load() }

func (l *Listener) acquire(key netip.Prefix) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key] >= l.max {
		return false
	}
	l.open[key]++
	return true
}

func (l *Listener) releaseKey(key netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
}

// clientOf is the unit a client is counted by: its IPv4 address, or the /64 of its IPv6
// address, since one IPv6 subscriber is routinely given a whole /64 and could otherwise
// open the cap's worth of connections from each of its addresses.
func clientOf(a net.Addr) (netip.Prefix, bool) {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}, false
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ip = ip.Unmap().WithZone("")
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, err := ip.Prefix(bits)
	return p, err == nil
}

// conn gives its client's slot back exactly once, however often it is closed.
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
