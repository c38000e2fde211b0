// Package ratelimit protects Till's unauthenticated license-key endpoints
// (POST /v1/customer-portal/license-keys/validate|activate|deactivate) from
// abuse. Apps call them on every launch without a token, so nothing but the
// caller's address and the key in the body identifies who is calling.
//
// Upstream (contract §1.10) allows 3 requests per second per client IP and
// blocks an address for 60 seconds once it goes over. Till applies the same
// per-IP rule and a second rule per license key, so a leaked or brute-forced
// key cannot be hammered from many addresses at once.
//
// [Limiter] is the counting primitive: a fixed window per key, opened by the
// key's first request, followed by a block once the key exceeds its rate.
// [Guard] is the HTTP middleware built from two limiters, and [ClientIP]
// decides which address a request counts against.
package ratelimit
