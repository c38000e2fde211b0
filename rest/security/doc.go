// Package security is Till's standing attack suite. Its tests enumerate every GraphQL root
// field from the schema and every /v1 route from the route table, read the guard each one
// declares (a schema directive, or a hand-written route's rest.Guard), and call each with
// every kind of principal an attacker could hold: none, garbage, a bad checksum, expired
// and revoked tokens, another organization's token, a token without the scope, customer and
// member sessions, personal access tokens and OAuth2 tokens. Each answer must be the one the
// guard promises, and never a server error. A field or route without a declared guard fails
// the suite, so a new one cannot ship unguarded by accident.
//
// The package holds no code outside its tests.
package security
