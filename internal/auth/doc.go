// Package auth turns a bearer credential into the one principal a request acts
// as, and writes the exact authentication errors upstream Polar clients expect.
//
// Till's /v1 layer must be byte-compatible with Polar API 2026-04, so token
// formats, the order in which prefixes are recognised and the 401/403 bodies
// and headers all mirror upstream, with Till's own prefixes (till_oat_, …) and
// realm ("till"). Only an HMAC of a token is ever stored, so this package owns
// the hashing too: every caller that stores or looks up a credential must hash
// it the same way.
//
// The package is a leaf: it imports nothing else from this module, so storage,
// REST and GraphQL code can all depend on it without cycles. Storage plugs in
// through [Resolver].
package auth
