package rest

import (
	"errors"
	"io"
	"net/http"

	"till/internal/payment"
	"till/resolvers"
)

// stripeSigned is the guard of Stripe's webhook endpoint: Stripe sends no token, and the
// use case accepts only a body signed with the endpoint's secret.
var stripeSigned = Guard{Public: "Stripe's signature over the body, made with the endpoint's signing secret", Kinds: allKinds}

// stripeRoutes is the endpoint Stripe delivers its events to, at upstream's path.
func stripeRoutes(r *resolvers.Resolver) []Route {
	return []Route{{Method: http.MethodPost, Path: "/v1/integrations/stripe/webhook", Handler: stripeWebhook(r), Guard: stripeSigned}}
}

// stripeWebhook serves POST /v1/integrations/stripe/webhook as upstream does: 202 with a
// null body once the event is kept (or was kept before), 400 without a Stripe-Signature
// header or for a body that is no event, 401 when the signature does not verify or is too
// old, 404 when Till has no Stripe endpoint configured.
func stripeWebhook(r *resolvers.Resolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		payload, err := io.ReadAll(req.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeBodyTooLarge(w)
				return
			}
			writeDetail(w, http.StatusBadRequest, "Bad Request")
			return
		}
		switch err := r.ReceiveStripeEvent(req.Context(), payload, req.Header.Get("Stripe-Signature")); {
		case errors.Is(err, resolvers.ErrStripeEndpointOff):
			writeDetail(w, http.StatusNotFound, "Not Found")
		case errors.Is(err, payment.ErrStripeSignature):
			writeDetail(w, http.StatusUnauthorized, "Unauthorized")
		case errors.Is(err, resolvers.ErrStripeEventMalformed):
			writeDetail(w, http.StatusBadRequest, "Bad Request")
		case err != nil:
			writeInternal(w)
		default:
			writeJSON(w, http.StatusAccepted, []byte("null"))
		}
	})
}
