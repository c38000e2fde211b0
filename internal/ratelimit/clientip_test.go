package ratelimit

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	proxies := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("fd00::/8"),
		netip.MustParsePrefix("::ffff:172.16.0.0/108"),
	}
	tests := []struct {
		name    string
		trusted []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		{"peer without proxies", nil, "203.0.113.7:4000", nil, "203.0.113.7"},
		{"untrusted peer sending XFF is ignored", proxies, "203.0.113.7:4000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"XFF ignored when no proxy is trusted", nil, "10.0.0.1:4000", []string{"198.51.100.1"}, "10.0.0.1"},
		{"trusted proxy: last hop is the client", proxies, "10.0.0.1:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"spoofed entries left of the client are ignored", proxies, "10.0.0.1:4000", []string{"1.1.1.1, 2.2.2.2, 198.51.100.1"}, "198.51.100.1"},
		{"chain of trusted proxies", proxies, "10.0.0.1:4000", []string{"198.51.100.1, 10.0.0.9, 10.0.0.8"}, "198.51.100.1"},
		{"header lines read in order", proxies, "10.0.0.1:4000", []string{"1.1.1.1, 198.51.100.1", "10.0.0.9"}, "198.51.100.1"},
		{"garbage stops at the last trusted hop", proxies, "10.0.0.1:4000", []string{"198.51.100.1, not-an-ip, 10.0.0.9"}, "10.0.0.9"},
		{"all hops trusted", proxies, "10.0.0.1:4000", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3"},
		{"trusted proxy without XFF", proxies, "10.0.0.1:4000", nil, "10.0.0.1"},
		{"empty XFF", proxies, "10.0.0.1:4000", []string{""}, "10.0.0.1"},
		{"XFF entry with port", proxies, "10.0.0.1:4000", []string{"198.51.100.1:5555"}, "198.51.100.1"},
		{"XFF IPv6 entry with brackets", proxies, "10.0.0.1:4000", []string{"[2001:db8::1]"}, "2001:db8::/64"},
		{"IPv6 peer counts as its /64", nil, "[2001:db8::1]:4000", nil, "2001:db8::/64"},
		{"another address of the same /64 is the same client", nil, "[2001:db8::ffff:ffff:ffff:fffe]:4000", nil, "2001:db8::/64"},
		{"the next /64 is another client", nil, "[2001:db8:0:1::1]:4000", nil, "2001:db8:0:1::/64"},
		{"IPv6 zone dropped", nil, "[fe80::1%eth0]:4000", nil, "fe80::/64"},
		{"IPv6 trusted proxy", proxies, "[fd00::1]:4000", []string{"2001:DB8:1:2:3::2"}, "2001:db8:1:2::/64"},
		{"a trusted IPv6 proxy is matched by its whole address", []netip.Prefix{netip.MustParsePrefix("fd00::1/128")},
			"[fd00::2]:4000", []string{"2001:db8::9"}, "fd00::/64"},
		{"IPv4-mapped peer is unmapped", nil, "[::ffff:203.0.113.7]:4000", nil, "203.0.113.7"},
		{"IPv4-mapped trusted prefix", proxies, "172.16.0.5:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"IPv4-mapped XFF entry", proxies, "10.0.0.1:4000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"RemoteAddr without port", nil, "203.0.113.7", nil, "203.0.113.7"},
		{"unparsable RemoteAddr kept as is", proxies, "@", []string{"198.51.100.1"}, "@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientIP(tt.trusted)(r); got != tt.want {
				t.Fatalf("ClientIP = %q, want %q", got, tt.want)
			}
		})
	}
}
