package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/scalar"
	"till/storage"
)

// renewalBatch is how many renewal steps advanceTestClock runs per RenewDue call.
const renewalBatch = 100

// advanceTestClock moves a test-mode organization's clock forward and renews, at the new
// time, everything that falls due on the way, until nothing is due any more. Each step runs
// at the time it fell due (a period end at the period's end, a retry at its scheduled time),
// so jumping a year ahead leaves the same history as living through it.
func (r *Resolver) advanceTestClock(ctx context.Context, in model.AdvanceTestClockInput) (*model.AdvanceTestClockPayload, error) {
	orgID, err := targetOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	org, err := storage.GetOrganization(ctx, r.db, orgID)
	if err != nil {
		return nil, notFoundOr(err, "")
	}
	if org.ProcessorMode != storage.ProcessorModeTest {
		return nil, BadRequest("Test clocks are only available to organizations in test mode.")
	}
	current, err := r.clockFor(ctx, r.db, orgID)
	if err != nil {
		return nil, err
	}
	backwards := Invalid("value_error", "The test clock only moves forward: the time must be after "+
		scalar.FormatDateTime(current)+".", scalar.FormatDateTime(in.To), "input", "to")
	if !in.To.After(current) {
		return nil, backwards
	}
	clock, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.TestClock, error) {
		return storage.AdvanceTestClock(ctx, q, orgID, in.To.UTC())
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, backwards
	}
	if err != nil {
		return nil, err
	}
	total := 0
	for {
		n, err := r.RenewDue(ctx, &orgID, clock.FrozenAt, renewalBatch)
		total += n
		if err != nil {
			return nil, err
		}
		if n < renewalBatch {
			break
		}
	}
	return &model.AdvanceTestClockPayload{TestClock: clock, Renewals: total}, nil
}

// testClock reads the organization's test clock, nil when it has none.
func (r *Resolver) testClock(ctx context.Context, orgID *uuid.UUID) (*storage.TestClock, error) {
	id, err := targetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	c, err := storage.GetTestClock(ctx, r.db, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	return c, err
}

// strandedClockAfter is how long after its last advance a test clock's due renewals count as
// stranded: an advance renews everything due before it answers, and one that takes longer
// shares its work safely (renewals are claimed one by one).
const strandedClockAfter = 30 * time.Second

// RenewStrandedTestClocks finishes the renewals that an advance of a test clock left undone
// because its process died: the background loop leaves test-clock organizations to their
// advances, so nobody else would. It runs in any process, at each clock's own time.
func (r *Resolver) RenewStrandedTestClocks(ctx context.Context) (int, error) {
	clocks, err := storage.StrandedTestClocks(ctx, r.db, r.Now().Add(-strandedClockAfter))
	if err != nil {
		return 0, err
	}
	total := 0
	for _, clock := range clocks {
		for {
			n, err := r.RenewDue(ctx, &clock.OrganizationID, clock.FrozenAt, renewalBatch)
			total += n
			if err != nil {
				return total, err
			}
			if n < renewalBatch {
				break
			}
		}
	}
	return total, nil
}
