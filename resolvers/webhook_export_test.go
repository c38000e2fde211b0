package resolvers

import (
	"context"

	"till/storage"
)

// PublishEvent exposes publishEvents to the package's external tests: publishing follows
// rendering, which needs the /v1 layer, so the tests publish payloads of their own.
func (r *Resolver) PublishEvent(ctx context.Context, e *storage.DomainEvent, payload string) error {
	return r.publishEvents(ctx, webhookTargets{}, []*storage.DomainEvent{e}, []string{payload})
}
