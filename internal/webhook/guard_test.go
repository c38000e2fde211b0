package webhook_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"till/internal/webhook"
)

func TestIsGlobalIP(t *testing.T) {
	tests := []struct {
		addr   string
		global bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"100.63.255.255", true},
		{"100.128.0.0", true},
		{"172.15.255.255", true},
		{"172.32.0.0", true},
		{"198.20.0.1", true},
		{"223.255.255.254", true},
		{"2606:4700:4700::1111", true},
		{"2a00:1450:4001::200e", true},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::808:808", true},

		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.1", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"169.254.169.254", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.0.0.8", false},
		{"192.0.2.1", false},
		{"192.88.99.1", false},
		{"192.168.1.1", false},
		{"198.18.0.1", false},
		{"198.19.255.255", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		{"::", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.1.2.3", false},
		{"::127.0.0.1", false},
		{"64:ff9b::a00:1", false},
		{"64:ff9b::7f00:1", false},
		{"64:ff9b:1::808:808", false},
		{"100::1", false},
		{"2001::1", false},
		{"2001:1ff::1", false},
		{"2001:db8::1", false},
		{"2002:a00:1::1", false},
		{"3fff::1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fec0::1", false},
		{"ff02::1", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := webhook.IsGlobalIP(netip.MustParseAddr(tt.addr)); got != tt.global {
				t.Errorf("IsGlobalIP(%s) = %v, want %v", tt.addr, got, tt.global)
			}
		})
	}
	if webhook.IsGlobalIP(netip.Addr{}) {
		t.Error("the zero Addr is global")
	}
}

// guardTarget is an endpoint the guard must refuse by default. reachable
// targets are served by a test receiver, so AllowPrivate must get through;
// the others have nothing listening, so with AllowPrivate the attempt may
// only fail for a reason other than the guard.
type guardTarget struct {
	name      string
	url       string
	addr      string
	reachable bool
}

func guardTargets(t *testing.T) []guardTarget {
	t.Helper()
	srv, _ := receive(t, answer(http.StatusOK, ""))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	hostPort := func(host string) string { return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/hook" }
	targets := []guardTarget{
		{"loopback 127.0.0.1", srv.URL, "127.0.0.1", true},
		{"a host name resolving to loopback", hostPort("localhost"), "", true},
		{"unspecified 0.0.0.0", hostPort("0.0.0.0"), "0.0.0.0", true},
		{"private 10.x", "http://10.0.0.1:9/", "10.0.0.1", false},
		{"private 192.168.x", "http://192.168.1.1:9/", "192.168.1.1", false},
		{"link-local 169.254.x (cloud metadata)", "http://169.254.169.254/latest", "169.254.169.254", false},
		{"carrier-grade NAT 100.64.x", "http://100.64.0.1:9/", "100.64.0.1", false},
	}
	if v6 := loopbackV6(t); v6 != nil {
		targets = append(targets, guardTarget{"loopback ::1", v6.URL, "::1", true})
	}
	return targets
}

// loopbackV6 serves on [::1], or returns nil where IPv6 is unavailable.
func loopbackV6(t *testing.T) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Logf("no IPv6 loopback (%v); skipping the ::1 target", err)
		return nil
	}
	srv := httptest.NewUnstartedServer(answer(http.StatusOK, ""))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestSenderRefusesNonGlobalAddressesByDefault(t *testing.T) {
	for _, tt := range guardTargets(t) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &webhook.Sender{Timeout: 2 * time.Second}
			res := s.Send(t.Context(), webhook.Delivery{URL: tt.url, Secret: testSecret, MsgID: "m", Body: []byte("{}")})
			var blocked *webhook.BlockedAddrError
			if res.Success || !errors.As(res.Err, &blocked) {
				t.Fatalf("Send = %+v, want a *BlockedAddrError", res)
			}
			if tt.addr != "" && blocked.Addr != netip.MustParseAddr(tt.addr) {
				t.Errorf("blocked %s, want %s", blocked.Addr, tt.addr)
			}
			if res.StatusCode != 0 || res.Response == "" {
				t.Errorf("Send = %+v, want no status and the reason as response", res)
			}
		})
	}
}

func TestSenderAllowPrivateReachesNonGlobalAddresses(t *testing.T) {
	for _, tt := range guardTargets(t) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &webhook.Sender{AllowPrivate: true, Timeout: 300 * time.Millisecond}
			res := s.Send(t.Context(), webhook.Delivery{URL: tt.url, Secret: testSecret, MsgID: "m", Body: []byte("{}")})
			var blocked *webhook.BlockedAddrError
			if errors.As(res.Err, &blocked) {
				t.Fatalf("AllowPrivate still refused %s: %v", blocked.Addr, res.Err)
			}
			if tt.reachable && !res.Success {
				t.Fatalf("Send = %+v, want success", res)
			}
		})
	}
}

// A proxy from the environment would make the connection itself, so the
// guard would only see the proxy's address; the Sender must ignore it.
func TestSenderIgnoresProxyEnvironment(t *testing.T) {
	proxy, proxyRec := receive(t, answer(http.StatusOK, "proxied"))
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	s := &webhook.Sender{AllowPrivate: true, Timeout: 300 * time.Millisecond}
	// 192.0.2.0/24 is documentation space: nothing answers there directly.
	res := s.Send(t.Context(), webhook.Delivery{URL: "http://192.0.2.10:8080/hook", Secret: testSecret, MsgID: "m"})
	if res.Success || len(proxyRec.requests()) != 0 {
		t.Fatalf("delivery went through the environment's proxy: %+v", res)
	}
}
