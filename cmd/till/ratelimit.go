package main

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"till/internal/ratelimit"
)

// clientIPs is the middleware that names, once per request, the address the request's
// rate limits count against, with TILL_TRUSTED_PROXIES deciding whose X-Forwarded-For is
// believed. It goes in front of every endpoint, so /v1 and /graphql agree on who calls.
func clientIPs(cfg config) (func(http.Handler) http.Handler, error) {
	proxies, err := trustedProxies(cfg)
	if err != nil {
		return nil, err
	}
	return ratelimit.WithClientIP(ratelimit.ClientIP(proxies)), nil
}

// licenseLimits builds the rules of the public license-key operations from the
// configuration. The use cases ask them on every call, so validate, activate and
// deactivate share one budget per client and per key, as upstream's single rule does,
// whether they are called on /v1 or through GraphQL.
func licenseLimits(cfg config) (*ratelimit.Guard, error) {
	rc := ratelimit.DefaultConfig()
	rc.PerIP = ratelimit.Limit{Rate: cfg.LicenseRatePerIP, Interval: time.Second, Block: cfg.LicenseRateIPBlock}
	rc.PerKey = ratelimit.Limit{Rate: cfg.LicenseRatePerKey, Interval: time.Second, Block: cfg.LicenseRateKeyBlock}
	return ratelimit.New(rc)
}

// costBudget builds each principal's GraphQL cost budget per minute; nil when it is off.
func costBudget(cfg config) (*ratelimit.Limiter, error) {
	if cfg.GraphQLCostBudget == 0 {
		return nil, nil
	}
	l, err := ratelimit.NewLimiter(ratelimit.Limit{Rate: cfg.GraphQLCostBudget, Interval: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("TILL_GRAPHQL_COST_BUDGET: %w", err)
	}
	return l, nil
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
