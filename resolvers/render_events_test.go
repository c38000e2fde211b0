package resolvers_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
	"till/storage"
)

// countingRenderer renders every customer event as {} and counts how often each is rendered.
type countingRenderer struct {
	mu    sync.Mutex
	times map[uuid.UUID]int
}

func (c *countingRenderer) Families() []string { return []string{"customer"} }

func (c *countingRenderer) Render(_ context.Context, e *storage.DomainEvent) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.times[e.ID]++
	return `{}`, nil
}

// TestProcessesDivideTheRendering runs the render loop of three processes at once over one
// backlog: every event is rendered and published once, by one of them.
func TestProcessesDivideTheRendering(t *testing.T) {
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	ctx := context.Background()
	const events = 120
	for range events {
		if _, err := storage.InsertDomainEvent(ctx, s.DB, org.ID, "customer.updated", uuid.New()); err != nil {
			t.Fatal(err)
		}
	}
	renderer := &countingRenderer{times: map[uuid.UUID]int{}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	rendered := 0
	for range 3 {
		r := resolvers.New(resolvers.Deps{DB: s.DB, Logger: s.Deps.Logger, Clock: s.Deps.Clock,
			Renderer: func(*resolvers.Executor) resolvers.EventRenderer { return renderer }})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := r.RenderEvents(ctx, 10)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				rendered += n
				mu.Unlock()
				if n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	if rendered != events || len(renderer.times) != events {
		t.Errorf("rendered %d (%d distinct), want %d", rendered, len(renderer.times), events)
	}
	for id, n := range renderer.times {
		if n != 1 {
			t.Errorf("event %s rendered %d times", id, n)
		}
	}
	var left int
	if err := s.DB.Get(&left, `SELECT count(*) FROM domain_events WHERE payload IS NULL`); err != nil || left != 0 {
		t.Errorf("%d events left without a payload (%v)", left, err)
	}
}
