package resolvers

import (
	"context"

	"till/storage"
)

// PublishEvent exposes publishEvent to the package's external tests: publishing follows
// rendering, which needs the /v1 layer, so the tests publish payloads of their own.
func (r *Resolver) PublishEvent(ctx context.Context, e *storage.DomainEvent, payload string) error {
	return r.publishEvent(ctx, webhookTargets{}, e, payload)
}
