package storage_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// Writers creating and ending subscriptions of the same few customers while folds run lose
// and double no island: the folded rollups equal a rebuild from the base tables, and reads
// before the last fold equal the subscription-by-subscription count.
func TestMetricsSubscribersSurviveConcurrentFolds(t *testing.T) {
	t.Parallel()
	db := storagetest.New(t)
	ctx := context.Background()
	w := newSubscribersWorld(t, db)
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	const writers, rounds = 6, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers+3)
	done := make(chan struct{})
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range rounds {
				err := storage.InTx(ctx, db, func(tx *sqlx.Tx) error {
					from := day.Add(time.Duration(rng.IntN(24*6)) * time.Hour).Add(time.Duration(rng.IntN(60)) * time.Minute)
					var to *time.Time
					if rng.IntN(2) == 0 {
						end := from.Add(time.Duration(1+rng.IntN(48)) * time.Hour)
						to = &end
					}
					if _, err := w.insert(tx, rng.IntN(3), rng.IntN(3), from, to); err != nil {
						return err
					}
					// End, or move to another customer, one of the open subscriptions.
					_, err := tx.Exec(`UPDATE subscriptions SET ended_at = CASE WHEN $2 THEN started_at + interval '20 hours' END,
							customer_id = CASE WHEN $2 THEN customer_id ELSE $3 END
						WHERE id = (SELECT id FROM subscriptions WHERE organization_id = $1 AND ended_at IS NULL
							ORDER BY random() LIMIT 1)`, w.org, rng.IntN(3) > 0, w.customers[rng.IntN(3)])
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	// Hours, so that a customer's island lost or doubled for a few hours shows.
	f := storage.MetricsFilter{Orgs: []uuid.UUID{w.org}, From: day, To: day.AddDate(0, 0, 7),
		Interval: "hour", Zone: "UTC", Columns: []string{"subscribers"}}
	// A reader compares, in one snapshot, the series with the subscriptions it sees, while
	// the writers and the folds run.
	var folds sync.WaitGroup
	folds.Add(1)
	go func() {
		defer folds.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			tx, err := db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
			if err != nil {
				errs <- err
				return
			}
			points, err := storage.Metrics(ctx, tx, f)
			var want []int64
			if err == nil {
				want, err = countSubscribers(tx, w.org, points, f.To, nil, nil)
			}
			_ = tx.Rollback()
			if err != nil {
				errs <- err
				return
			}
			if got := subscribersOf(points); !slices.Equal(got, want) {
				errs <- fmt.Errorf("while writing: subscribers per hour %v, reference %v", got, want)
				return
			}
		}
	}()
	for range 2 {
		folds.Add(1)
		go func() {
			defer folds.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := storage.FoldMetrics(ctx, db); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	folds.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	read := func(t *testing.T) []int64 {
		t.Helper()
		points, err := storage.Metrics(ctx, db, f)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(referenceSubscribers(t, db, w.org, points, f.To, nil, nil), subscribersOf(points)); diff != "" {
			t.Errorf("subscribers per hour (-reference +got):\n%s", diff)
		}
		return subscribersOf(points)
	}
	read(t)
	if _, err := storage.FoldMetrics(ctx, db); err != nil {
		t.Fatal(err)
	}
	if got := read(t); !slices.ContainsFunc(got, func(n int64) bool { return n > 1 }) {
		t.Fatalf("subscribers %v: the writers left too little to compare", got)
	}
	folded := subscriberRollups(t, db, w.org)
	if _, err := db.Exec(`SELECT metric_rebuild($1)`, w.org); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(subscriberRollups(t, db, w.org), folded); diff != "" {
		t.Errorf("folded subscribers differ from a rebuild (-rebuild +folded):\n%s", diff)
	}
}
