package main

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"till/internal/ratelimit"
)

// publicLicensePaths are the license operations that need no token and so are open to
// anyone who learnt a key: upstream rate-limits exactly these.
var publicLicensePaths = map[string]bool{
	"/v1/customer-portal/license-keys/validate":   true,
	"/v1/customer-portal/license-keys/activate":   true,
	"/v1/customer-portal/license-keys/deactivate": true,
}

// licenseRateLimit builds the guard of the public license endpoints from the configuration.
// One guard serves the three paths, so they share one budget per client and per key, as
// upstream's single rule does. Other requests pass untouched.
func licenseRateLimit(cfg config) (func(http.Handler) http.Handler, error) {
	proxies, err := trustedProxies(cfg)
	if err != nil {
		return nil, err
	}
	rc := ratelimit.DefaultConfig()
	rc.PerIP = ratelimit.Limit{Rate: cfg.LicenseRatePerIP, Interval: time.Second, Block: cfg.LicenseRateIPBlock}
	rc.PerKey = ratelimit.Limit{Rate: cfg.LicenseRatePerKey, Interval: time.Second, Block: cfg.LicenseRateKeyBlock}
	g, err := ratelimit.New(rc, ratelimit.ClientIP(proxies))
	if err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		limited := g.Handler(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && publicLicensePaths[strings.TrimPrefix(r.URL.Path, "/api")] {
				limited.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// trustedProxies parses TILL_TRUSTED_PROXIES: the proxies whose X-Forwarded-For names the
// client, for every per-address limit.
func trustedProxies(cfg config) ([]netip.Prefix, error) {
	var proxies []netip.Prefix
	for _, s := range cfg.TrustedProxies {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("TILL_TRUSTED_PROXIES: %w", err)
		}
		proxies = append(proxies, p)
	}
	return proxies, nil
}
