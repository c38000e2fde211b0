// Package ratelimit counts what callers may do per unit of time: the public
// license-key operations (validate, activate, deactivate, which take no token)
// and the GraphQL cost budget of every principal.
//
// Upstream (contract §1.10) allows 3 license-key requests per second per
// client IP and blocks an address for 60 seconds once it goes over. Till
// applies the same per-IP rule and a second rule per license key, so a leaked
// or brute-forced key cannot be hammered from many addresses at once. The
// rules belong to the operations, not to a transport: the use cases ask a
// [Guard] on every call, so /v1, GraphQL and each alias of a GraphQL document
// count against one budget.
//
// [Limiter] is the counting primitive: a fixed window per key, opened by the
// key's first request, followed by a block once the key exceeds its rate.
// [ClientIP] decides which address a request counts against, and
// [WithClientIP] computes it once per request and hands it to the use cases
// through the context.
package ratelimit
