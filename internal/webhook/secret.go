package webhook

import "till/internal/auth"

// NewSecret returns a fresh endpoint signing secret in upstream's format: "whsec_", 37
// characters from [A-Za-z0-9] and a 6-character CRC-32 base62 checksum (contract §2). It is
// the token generator of every other Till credential, so secret scanners that know Till's
// tokens recognise a leaked webhook secret too. Unlike those credentials it is stored in
// plaintext, because every delivery is signed with it.
func NewSecret() string {
	return auth.Generate(auth.PrefixWebhookSecret)
}
