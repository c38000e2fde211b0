package resolvers_test

import (
	"sync"
	"sync/atomic"
	"testing"
)

// The license invariants under concurrency: racing goroutines must neither pass a limit
// nor lose a write.
func TestLicenseKeyLimitsHoldUnderConcurrency(t *testing.T) {
	t.Parallel()
	const racers = 60
	race := func(fn func() bool) int {
		var wg sync.WaitGroup
		var ok atomic.Int64
		start := make(chan struct{})
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if fn() {
					ok.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		return int(ok.Load())
	}

	t.Run("activations stop exactly at the limit", func(t *testing.T) {
		t.Parallel()
		w := newKeyWorld(t, vars{"activations": vars{"limit": 7}})
		won := race(func() bool {
			_, err := w.activate(t, vars{"label": "machine"})
			if err != nil && err.Extensions.Cause != "activation_limit_reached" {
				t.Errorf("unexpected error %+v", err)
			}
			return err == nil
		})
		if _, _, live := w.counters(t); won != 7 || live != 7 {
			t.Errorf("%d activations succeeded, %d stored; want 7 and 7", won, live)
		}
	})
	t.Run("usage increments stop exactly at the limit and none is lost", func(t *testing.T) {
		t.Parallel()
		w := newKeyWorld(t, vars{"limit_usage": 25})
		won := race(func() bool { return w.validate(t, "", vars{"incrementUsage": 1}).Valid })
		usage, validations, _ := w.counters(t)
		if won != 25 || usage != 25 || validations != 25 {
			t.Errorf("%d validations passed, usage %d, validations %d; want 25 each", won, usage, validations)
		}
	})
	t.Run("unlimited usage counts every validation", func(t *testing.T) {
		t.Parallel()
		w := newKeyWorld(t, vars{})
		won := race(func() bool { return w.validate(t, w.org.Token, vars{"incrementUsage": 2}).Valid })
		usage, validations, _ := w.counters(t)
		if won != racers || usage != 2*racers || validations != racers {
			t.Errorf("%d passed, usage %d, validations %d; want %d, %d, %d", won, usage, validations, racers, 2*racers, racers)
		}
	})
	t.Run("deactivating one activation from many goroutines succeeds once", func(t *testing.T) {
		t.Parallel()
		w := newKeyWorld(t, vars{"activations": vars{"limit": 2}})
		id, err := w.activate(t, vars{"label": "m"})
		if err != nil {
			t.Fatal(err)
		}
		won := race(func() bool {
			res := w.s.Do(t, "", `mutation($in: LicenseKeyDeactivateInput!) { portalDeactivateLicenseKey(input: $in) }`,
				vars{"in": vars{"key": w.key.Key, "organizationId": w.org.ID, "activationId": id}})
			return len(res.Errors) == 0
		})
		if _, _, live := w.counters(t); won != 1 || live != 0 {
			t.Errorf("%d deactivations succeeded, %d live; want 1 and 0", won, live)
		}
	})
}
