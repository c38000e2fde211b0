package resolvers

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// Bounds on live subscriptions, so one client cannot hold a process's memory or goroutines.
const (
	// maxLivePerConnection is how many subscriptions one websocket may hold at once.
	maxLivePerConnection = 25
	// maxLivePerCredential is how many one credential (token or session) may hold in one
	// process, over all its connections.
	maxLivePerCredential = 100
	// liveRecheck is how often a quiet subscription checks its credential again; every
	// delivered event checks it too, unless the credential cache still gives the answer
	// the last check passed (auth.Stamp).
	liveRecheck = 5 * time.Second
	// liveCatchUpBatch is how many events a lagging subscription reads per statement.
	liveCatchUpBatch = 500
)

// liveStream is one subscription: what it follows and how to check it may go on.
type liveStream struct {
	org    uuid.UUID
	filter storage.LiveFilter
	after  *string
	// field is the subscription field, whose guard is applied again on every recheck.
	field *ast.FieldDefinition
	// customer is the portal session's customer, which the stream must keep being.
	customer uuid.UUID
	// credential is whose budget the stream's events spend, each cost points (liveCost).
	credential uuid.UUID
	cost       int
}

// subscribeOrganization starts a stream of an organization's events for an organization
// token or a user: organizationID picks the organization of a user who belongs to several.
func (r *Resolver) subscribeOrganization(ctx context.Context, organizationID *uuid.UUID, f storage.LiveFilter, after *string) (<-chan *storage.LiveEvent, error) {
	org, err := targetOrganization(ctx, organizationID)
	if err != nil {
		return nil, err
	}
	return r.subscribeLive(ctx, liveStream{org: org, filter: f, after: after})
}

// subscribePortal starts a stream of the session's own customer's events. A member whose
// role does not reach billing follows the customer and its benefit grants only, as it reads
// no orders or subscriptions in the portal either.
func (r *Resolver) subscribePortal(ctx context.Context, types []string, after *string) (<-chan *storage.LiveEvent, error) {
	p := auth.FromContext(ctx)
	families := []string{"customer", "benefit_grant", "order", "subscription"}
	if r.requireBillingRole(ctx) != nil {
		families = families[:2]
	}
	f := storage.LiveFilter{Families: families, Types: types, CustomerID: p.CustomerID}
	return r.subscribeLive(ctx, liveStream{org: p.OrganizationID, filter: f, after: after, customer: p.CustomerID})
}

// subscribeLive checks the stream's limits and cursor, joins its organization's feed and
// follows it on a goroutine of its own until the client stops or the credential fails.
func (r *Resolver) subscribeLive(ctx context.Context, s liveStream) (<-chan *storage.LiveEvent, error) {
	conn, credential, err := r.openLiveSlot(ctx, &s)
	if err != nil {
		return nil, err
	}
	feed, err := r.live.join(ctx, s.org)
	if err != nil {
		r.closeLiveSlot(conn, credential)
		return nil, err
	}
	cursor, err := r.liveCursor(ctx, s.org, s.after, feed.position())
	if err != nil {
		r.live.leave(feed)
		r.closeLiveSlot(conn, credential)
		return nil, err
	}
	out := make(chan *storage.LiveEvent)
	go func() {
		defer close(out)
		defer r.closeLiveSlot(conn, credential)
		defer r.live.leave(feed)
		r.endLive(ctx, r.follow(ctx, conn, s, feed, cursor, out))
	}()
	return out, nil
}

// openLiveSlot starts a subscription s of the field being resolved: it must come over a
// websocket, and is counted against its connection's and its credential's limits until
// closeLiveSlot.
func (r *Resolver) openLiveSlot(ctx context.Context, s *liveStream) (*liveConn, uuid.UUID, error) {
	conn, ok := ctx.Value(liveConnKey{}).(*liveConn)
	if !ok || r.live == nil { // liveOperations refuses it first where subscriptions are served
		return nil, uuid.Nil, Invalid("value_error", "Subscriptions are served over a websocket at /graphql (graphql-transport-ws).", nil, "query")
	}
	if fc := graphql.GetFieldContext(ctx); fc != nil {
		s.field = fc.Field.Definition
	}
	s.cost = liveCost(ctx)
	if !conn.take() {
		return nil, uuid.Nil, tooManyLive("This connection has too many open subscriptions.")
	}
	credential := auth.FromContext(ctx).TokenID
	if err := r.live.hold(credential); err != nil {
		conn.release()
		return nil, uuid.Nil, err
	}
	s.credential = credential
	return conn, credential, nil
}

func (r *Resolver) closeLiveSlot(conn *liveConn, credential uuid.UUID) {
	r.live.release(credential)
	conn.release()
}

// endLive reports why a stream ended, unless its client ended it: the error goes to the
// client before the stream completes. A credential that is gone is UNAUTHENTICATED.
func (r *Resolver) endLive(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	present := ctx
	if te, ok := errors.AsType[*Error](err); ok && te.Code == CodeUnauthorized {
		present = auth.WithPrincipal(ctx, auth.Principal{})
	}
	transport.AddSubscriptionError(ctx, ErrorPresenter(r.logger)(present, err))
}

// liveCursor is where a stream starts: after the cursor a client passed, or after last, the
// feed's last event. A cursor past the organization's last committed event is refused: it
// names no event. One past the feed's may come from another process that heard of a commit
// first (a client failing over), so the database decides.
func (r *Resolver) liveCursor(ctx context.Context, org uuid.UUID, after *string, last int64) (int64, error) {
	if after == nil {
		return last, nil
	}
	n, err := strconv.ParseInt(*after, 10, 64)
	if err == nil && n > last {
		if last, err = storage.LivePosition(ctx, r.db, org); err != nil {
			return 0, err
		}
	}
	if err != nil || n < 0 || n > last {
		return 0, Invalid("value_error", "The cursor names no event of this organization.", *after, "after")
	}
	return n, nil
}

// follow sends s's events after cursor to out, in commit order, until ctx ends or a
// recheck of the credential fails (the error it returns). Events come from the feed, or from
// the database while the stream lags behind what the feed keeps (a slow client, or one whose
// credential's event budget makes it wait). The credential is checked after the wait, so an
// event goes only to a credential valid when it is sent: resolved again, or resolved before
// by a credential cache that would still answer the same (its stamp is current; a
// revocation flushes it).
func (r *Resolver) follow(ctx context.Context, conn *liveConn, s liveStream, feed *liveFeed, cursor int64, out chan<- *storage.LiveEvent) error {
	checked := time.Now()
	var passed auth.Stamp
	timer := time.NewTimer(liveRecheck)
	defer timer.Stop()
	for {
		events, changed, upTo, inFeed := feed.since(cursor)
		caughtUp := false
		if !inFeed {
			var err error
			if events, err = storage.LiveEventsAfter(ctx, r.db, s.org, cursor, upTo, s.filter, liveCatchUpBatch); err != nil {
				return err
			}
			caughtUp = len(events) < liveCatchUpBatch // none of the stream's events remain up to upTo
		}
		for _, e := range events {
			if inFeed && !s.filter.Matches(e) {
				cursor = e.Position
				continue
			}
			if !r.live.pace(ctx, s.credential, s.cost) {
				return nil
			}
			if !passed.Current() {
				var err error
				if passed, err = r.recheckLive(ctx, conn, s); err != nil {
					return err
				}
				checked = time.Now()
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return nil
			}
			cursor = e.Position
		}
		if caughtUp {
			cursor = max(cursor, upTo)
			continue
		}
		if len(events) > 0 {
			continue
		}
		timer.Reset(max(0, liveRecheck-time.Since(checked)))
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-timer.C:
			var err error
			if passed, err = r.recheckLive(ctx, conn, s); err != nil {
				return err
			}
			checked = time.Now()
		}
	}
}

// recheckLive resolves the connection's credential again and applies the stream's guard to
// it: the field's directives and role, the organization and, for a portal session, the
// customer. A revoked token, a removed member or a lowered role ends the stream. The guard
// reads nothing but the principal, so it holds while the returned stamp is current.
func (r *Resolver) recheckLive(ctx context.Context, conn *liveConn, s liveStream) (auth.Stamp, error) {
	p, stamp, err := conn.principal(ctx)
	if err != nil {
		return auth.Stamp{}, err
	}
	if err := r.guardLive(auth.WithPrincipal(ctx, p), s); err != nil {
		return auth.Stamp{}, err
	}
	return stamp, nil
}

// guardLive applies s's guard to the principal of ctx.
func (r *Resolver) guardLive(ctx context.Context, s liveStream) error {
	p := auth.FromContext(ctx)
	var err error
	if s.field != nil {
		if err := r.authorizeField(ctx, &ast.Field{Definition: s.field}); err != nil {
			return err
		}
		if d := s.field.Directives.ForName("hasScope"); d != nil {
			if arg := d.Arguments.ForName("permission"); arg != nil {
				if ctx, err = r.narrowByRole(ctx, wirePermission(model.Permission(arg.Value.Raw)), nil, false); err != nil {
					return err
				}
			}
		}
	}
	if s.customer != uuid.Nil {
		if p.CustomerID != s.customer || p.OrganizationID != s.org {
			return Unauthorized()
		}
		return nil
	}
	for _, o := range organizations(ctx) {
		if o == s.org {
			return nil
		}
	}
	return NotPermitted("You no longer have access to this organization's events.")
}

// liveFamily is the family (the type before the dot) of an event type.
func liveFamily(typ string) string {
	family, _, _ := strings.Cut(typ, ".")
	return family
}

// tooManyLive refuses a subscription over a limit of open subscriptions.
func tooManyLive(detail string) *Error { return &Error{Code: CodeRateLimited, Detail: detail} }
