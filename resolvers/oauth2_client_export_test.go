package resolvers

import "till/storage"

// VerifyClientSecret exposes verifyClientSecret to the package's external tests, which check
// it against clients made through the API.
func (r *Resolver) VerifyClientSecret(c *storage.OAuth2Client, secret string) bool {
	return r.verifyClientSecret(c, secret)
}
