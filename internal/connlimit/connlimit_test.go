package connlimit_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"till/internal/connlimit"
)

// acceptAll accepts connections on ln until it closes, handing each to the test.
func acceptAll(t *testing.T, ln net.Listener) <-chan net.Conn {
	t.Helper()
	out := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(out)
				return
			}
			out <- c
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return out
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// refused reports whether the listener closed c without handing it on; wait only bounds
// how long a failing test hangs.
func refused(c net.Conn, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func TestAClosedConnectionGivesItsSlotBack(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := connlimit.New(raw, 1)
	accepted := acceptAll(t, ln)
	addr := raw.Addr().String()

	dial(t, addr)
	first := <-accepted
	second := dial(t, addr)
	if !refused(second, 10*time.Second) {
		t.Fatal("a second connection was kept with a cap of 1")
	}
	if n := ln.(*connlimit.Listener).Refused(); n != 1 {
		t.Errorf("Refused() = %d, want 1", n)
	}
	first.Close()
	first.Close() // a second close must not free a second slot
	dial(t, addr)
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("no connection accepted after the first one closed")
	}
	if fourth := dial(t, addr); !refused(fourth, 10*time.Second) {
		t.Error("closing one connection twice freed two slots")
	}
}

func TestZeroCapLeavesTheListenerAlone(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if ln := connlimit.New(raw, 0); ln != raw {
		t.Errorf("New(ln, 0) = %T, want the listener itself", ln)
	}
}
