// Package webhook signs and delivers Till's outgoing webhooks the way
// upstream does (contract §4.10), so receivers written for Polar verify
// Till's requests unchanged.
//
// Deliveries follow Standard Webhooks: the webhook-id header carries the
// event id (stable across retries), webhook-timestamp the time of the
// attempt, and webhook-signature an HMAC-SHA256 over "<id>.<timestamp>.<body>".
// Upstream keys that HMAC with the UTF-8 bytes of the whole secret string,
// "whsec_" prefix included, so receivers pass base64(secret) to their
// Standard Webhooks library; [Sign] reproduces that quirk on purpose.
//
// Endpoint URLs are chosen by organizations, so a delivery is a request the
// server makes on a stranger's behalf. [Sender] therefore refuses to connect
// to loopback, private and other non-global addresses (checked on the
// resolved address at connect time, see [IsGlobalIP]), never follows
// redirects and reads only a bounded prefix of the answer. Self-hosters whose
// receivers live on their own network opt out with [Sender.AllowPrivate].
//
// [Payload] turns the stored event envelope into the body for an endpoint's
// format: raw JSON, or a short chat message for Slack and Discord.
package webhook
