package resolvers

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
)

// DefaultLiveEventBudget is each credential's points per second of delivered events in one
// process (TILL_LIVE_EVENT_BUDGET): ten events a second to subscriptions that together cost
// the most one subscription may (maxLiveEventCost), or hundreds to a dashboard's few cheap
// ones. A subscription's cost is charged to the minute's cost budget only when it starts,
// while its selection runs again for every event; without this, a credential's reads would
// grow with the organization's writes, multiplied by its subscriptions.
const DefaultLiveEventBudget = 10_000

// LiveHubOption tunes a LiveHub as it is made.
type LiveHubOption func(*LiveHub)

// WithLiveEventBudget gives each credential points per second of delivered events, each
// event costing its subscription's price (cost.go); 0 turns the budget off. A stream over
// the budget waits, and so falls behind and catches up later like a slow client: it loses
// nothing and holds no more memory.
func WithLiveEventBudget(points int) LiveHubOption {
	return func(h *LiveHub) { h.budget.rate = max(points, 0) }
}

// liveBudget holds a token bucket per credential with open subscriptions: rate points a
// second, at most a second's worth kept. A bucket goes with the credential's last
// subscription (LiveHub.release), so the hub keeps none for a credential that holds none.
type liveBudget struct {
	rate    int
	mu      sync.Mutex
	buckets map[uuid.UUID]*liveBucket
}

type liveBucket struct {
	points float64
	at     time.Time
}

// take spends cost points of credential's bucket at now, and returns 0, or how long until
// the bucket holds them when it does not yet. A cost over the rate counts as the rate, so an
// event always passes within a second.
func (b *liveBudget) take(credential uuid.UUID, cost int, now time.Time) time.Duration {
	if b.rate == 0 {
		return 0
	}
	rate := float64(b.rate)
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.buckets[credential]
	if !ok {
		k = &liveBucket{points: rate, at: now}
		b.buckets[credential] = k
	}
	k.points = min(rate, k.points+now.Sub(k.at).Seconds()*rate)
	k.at = now
	need := min(float64(cost), rate)
	if k.points >= need {
		k.points -= need
		return 0
	}
	return time.Duration((need - k.points) / rate * float64(time.Second))
}

// forget drops credential's bucket.
func (b *liveBudget) forget(credential uuid.UUID) {
	b.mu.Lock()
	delete(b.buckets, credential)
	b.mu.Unlock()
}

// pace waits until credential's budget admits an event costing cost; false when ctx ended
// first.
func (h *LiveHub) pace(ctx context.Context, credential uuid.UUID, cost int) bool {
	for {
		wait := h.budget.take(credential, cost, time.Now())
		if wait == 0 {
			return true
		}
		if sleep(ctx, wait); ctx.Err() != nil {
			return false
		}
	}
}

// liveCost is the price of the subscription being resolved, which each of its events costs:
// its operation's, as the cost extension reported it.
func liveCost(ctx context.Context) int {
	if !graphql.HasOperationContext(ctx) {
		return 0
	}
	if report, ok := graphql.GetOperationContext(ctx).Stats.GetExtension("cost").(*costReport); ok {
		return report.Requested
	}
	return 0
}
