package resolvers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// emit records a domain event in the caller's transaction, so the event exists exactly when
// the change does. Its payload is rendered after commit (RenderEvents). A customer.* event
// also drops the customer from r.customers, and a customer.* or member.* event has the
// request's session cache forget its sessions once the request is done (a session carries
// its customer and its member's role).
func (r *Resolver) emit(ctx context.Context, tx sqlx.ExtContext, orgID uuid.UUID, typ string, objectID uuid.UUID) error {
	if strings.HasPrefix(typ, "customer.") && r.customers != nil { // every change to a customer is announced
		r.customers.Remove(objectID)
	}
	if strings.HasPrefix(typ, "customer.") || strings.HasPrefix(typ, "member.") {
		auth.SessionsChanged(ctx)
	}
	_, err := storage.InsertDomainEvent(ctx, tx, orgID, typ, objectID)
	return err
}

// eventsPage lists the organization's domain events, newest first.
func (r *Resolver) eventsPage(ctx context.Context, a listArgs, types []string, objectIDs []uuid.UUID) (*model.DomainEventPage, error) {
	p, w, err := rootWindow(ctx, a, nil, func(_ []storage.Sort, w storage.Window) (storage.Paged[*storage.DomainEvent], error) {
		return storage.ListDomainEvents(ctx, r.db, organizations(ctx), storage.DomainEventFilter{Types: types, ObjectIDs: objectIDs}, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.DomainEventPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}

// eventPayload is the rendered payload, or null while it is not rendered.
func eventPayload(e *storage.DomainEvent) storage.RawJSON {
	if e.Payload == nil {
		return nil
	}
	return storage.RawJSON(*e.Payload)
}

// EventRenderer renders event payloads, {"type", "timestamp", "data"} with data the /v1
// shape of the changed object; the /v1 layer provides it because it owns those shapes, so a
// webhook body is byte for byte what GET on the object returns.
type EventRenderer interface {
	// Families lists the event families (the type before the dot) it can render.
	Families() []string
	// Render renders one event from the committed state of its object.
	Render(ctx context.Context, e *storage.DomainEvent) (string, error)
}

// EventRef is what rendering an event's payload needs to know of the event: the payload's
// data is read from the committed state of the object, not from the event's row.
type EventRef struct {
	Type           string
	OrganizationID uuid.UUID
	ObjectID       uuid.UUID
	CreatedAt      time.Time
}

// PayloadRenderer is the /v1 layer's side of an EventRenderer: it renders from an EventRef,
// so the layer that owns the shapes never handles a storage record.
type PayloadRenderer interface {
	// Families lists the event families (the type before the dot) it can render.
	Families() []string
	// RenderPayload renders one event from the committed state of its object.
	RenderPayload(ctx context.Context, e EventRef) (string, error)
}

// RenderPayloads adapts p to the EventRenderer RenderEvents calls.
func RenderPayloads(p PayloadRenderer) EventRenderer { return payloadRenderer{p} }

type payloadRenderer struct{ PayloadRenderer }

// Render implements EventRenderer.
func (p payloadRenderer) Render(ctx context.Context, e *storage.DomainEvent) (string, error) {
	return p.RenderPayload(ctx, EventRef{Type: e.Type, OrganizationID: e.OrganizationID, ObjectID: e.ObjectID, CreatedAt: e.CreatedAt})
}

// renderParallelism is how many events RenderEvents renders at once. Rendering reads the
// committed state through the executor and waits on the database, so a few in flight keep
// the processor busy; queuing for webhooks stays in event order.
const renderParallelism = 4

// renderLease is how long a renderer holds the events it claimed: far longer than a batch
// takes to render, and the longest a dead process can delay them.
const renderLease = 30 * time.Second

// RenderEvents renders up to limit events still missing their payload, oldest first. The
// serve and worker loops call it continuously, in any number of processes: each claims the
// events it renders, so the work is divided, not repeated. Events render concurrently and are
// published (stored and queued for webhooks) in their order, as soon as they and those
// before them are rendered: whatever has finished rendering by then goes in one statement,
// so a burst costs a few commits rather than one per event. An event published before an
// older one of the same object waits for it at delivery (storage.ClaimWebhookHeads). An
// event that fails to render is retried a few times, then left with its error, so one
// unreadable object never holds up the others. It returns how many it rendered.
func (r *Resolver) RenderEvents(ctx context.Context, limit int) (int, error) {
	if r.renderEvent == nil {
		return 0, nil
	}
	events, err := storage.ClaimUnrenderedDomainEvents(ctx, r.db, r.renderEvent.Families(), limit, renderLease)
	if err != nil {
		return 0, err
	}
	out := make([]rendering, len(events))
	for i := range out {
		out[i].done = make(chan struct{})
	}
	slots := make(chan struct{}, renderParallelism)
	go func() {
		for i, e := range events {
			slots <- struct{}{}
			go func() {
				defer func() { <-slots; close(out[i].done) }()
				out[i].payload, out[i].err = r.renderEvent.Render(ctx, e)
			}()
		}
	}()
	n := 0
	var firstErr error
	targets := webhookTargets{}
	for i := 0; i < len(events); {
		<-out[i].done
		end := i + 1
		for end < len(events) && out[end].finished() {
			end++
		}
		published, err := r.publishRendered(ctx, targets, events[i:end], out[i:end])
		n += published
		firstErr = cmp.Or(firstErr, err)
		i = end
	}
	return n, firstErr
}

// rendering is one claimed event's payload or error, once done is closed.
type rendering struct {
	payload string
	err     error
	done    chan struct{}
}

func (r rendering) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// publishRendered publishes the rendered events of a run of claimed ones in one statement
// and records the failures: a render error counts against its event; a failed publication
// releases its events for another try.
func (r *Resolver) publishRendered(ctx context.Context, targets webhookTargets, events []*storage.DomainEvent, done []rendering) (int, error) {
	var errs []error
	var ready []*storage.DomainEvent
	var payloads []string
	for i, e := range events {
		if err := done[i].err; err != nil {
			errs = append(errs, fmt.Errorf("rendering event %s (%s): %w", e.ID, e.Type, err),
				storage.FailDomainEventRender(ctx, r.db, e.ID, err.Error()))
			continue
		}
		ready, payloads = append(ready, e), append(payloads, done[i].payload)
	}
	if len(ready) == 0 {
		return 0, errors.Join(errs...)
	}
	if err := r.publishEvents(ctx, targets, ready, payloads); err != nil {
		errs = append(errs, fmt.Errorf("publishing %d events from %s (%s): %w", len(ready), ready[0].ID, ready[0].Type, err))
		for _, e := range ready {
			errs = append(errs, storage.ReleaseDomainEvent(context.WithoutCancel(ctx), r.db, e.ID))
		}
		return 0, errors.Join(errs...)
	}
	return len(ready), errors.Join(errs...)
}
