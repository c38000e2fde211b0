package resolvers_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"till/internal/payment"
)

// TestConcurrentRenewalsCycleEachPeriodOnce races 24 renewal workers over five subscriptions
// that are each three periods behind: every period must be cycled exactly once, with one
// order and one charge, whichever worker claims it.
func TestConcurrentRenewalsCycleEachPeriodOnce(t *testing.T) {
	t.Parallel()
	const workers, subscriptions, periods = 24, 5, 3
	w := newSubWorld(t, payment.TokenVisa)
	ids := make([]uuid.UUID, subscriptions)
	for i := range ids {
		c := w.s.NewCustomer(t, w.org.ID, "")
		card := w.saveCard(t, c.ID, payment.TokenVisa)
		ids[i] = w.subscribe(t, w.plan.ID, c.ID, &card, 1000, 0, nil).ID
	}
	now := at(5, 1) // after the period ends of February 28, March 31 and April 30

	var (
		steps atomic.Int64
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				n, err := w.s.Resolver.RenewDue(context.Background(), &w.org.ID, now, 1)
				if err != nil {
					errs <- err
					return
				}
				if n == 0 {
					return
				}
				steps.Add(int64(n))
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("RenewDue: %v", err)
	}

	if got := steps.Load(); got != subscriptions*periods {
		t.Errorf("%d renewal steps, want %d", got, subscriptions*periods)
	}
	for _, id := range ids {
		orders := w.orders(t, id)
		if len(orders) != periods {
			t.Errorf("subscription %s: %d cycle orders, want %d", id, len(orders), periods)
		}
		for _, o := range orders {
			if o.Status != "paid" || o.PaidPayments != 1 || o.BillingReason != "subscription_cycle" {
				t.Errorf("subscription %s: order %+v", id, o)
			}
		}
		if got := w.get(t, id); !got.CurrentPeriodStart.Equal(at(4, 30)) || !got.CurrentPeriodEnd.Equal(at(5, 31)) {
			t.Errorf("subscription %s: period %s – %s", id, got.CurrentPeriodStart, got.CurrentPeriodEnd)
		}
	}
	var charges int
	w.s.Get(t, &charges, `SELECT count(*) FROM payments WHERE organization_id = $1`, w.org.ID)
	if charges != subscriptions*periods {
		t.Errorf("%d charges recorded, want %d", charges, subscriptions*periods)
	}
}
