package storage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
	"till/storage/storagetest"
)

// BenchmarkAuditedWrite measures what auditing adds to one write: a customer's rename, as
// updateCustomer makes it. It runs the write four ways and prints the audited ones' ratios
// to their unaudited twins:
//
//   - pool: the statement alone on the pool, the audit trigger disabled (a single-statement
//     write as it ran before the audit log);
//   - audited: storage.Audited with a request's actor, the trigger on (what such a write
//     costs now: a transaction carrying the actor, and the trigger's record);
//   - tx: the statement in InTx without an actor, the trigger disabled (a use case's
//     transaction before the audit log);
//   - audited-tx: InTx with an actor, the trigger on.
//
// Run it with go test -run '^$' -bench AuditedWrite -benchtime 15x ./storage/ (15 rounds).
func BenchmarkAuditedWrite(b *testing.B) {
	ctx := context.Background()
	db := storagetest.New(b)
	org, err := storage.CreateOrganization(ctx, db, "Bench", "bench-"+uuid.NewString()[:8])
	if err != nil {
		b.Fatal(err)
	}
	var id uuid.UUID
	if err := db.Get(&id, `INSERT INTO customers (organization_id, email) VALUES ($1, 'bench@example.com') RETURNING id`,
		org.ID); err != nil {
		b.Fatal(err)
	}
	actor := storage.WithAuditContext(ctx, storage.AuditContext{Kind: storage.AuditActorKindOrganization,
		TokenID: uuid.New(), Operation: "updateCustomer", API: "graphql", IP: "203.0.113.9", UserAgent: "bench/1.0",
		RequestID: "0123456789abcdef01234567"})
	rename := func(ctx context.Context, q sqlx.ExtContext, n int) error {
		_, err := q.ExecContext(ctx, `UPDATE customers SET name = $2, modified_at = now() WHERE id = $1`, id, fmt.Sprint("n", n))
		return err
	}
	trigger := func(on bool) {
		b.Helper()
		verb := "DISABLE"
		if on {
			verb = "ENABLE"
		}
		db.MustExec(`ALTER TABLE customers ` + verb + ` TRIGGER audit`)
	}
	variants := []struct {
		name    string
		trigger bool
		write   func(n int) error
	}{
		{"pool", false, func(n int) error { return rename(ctx, db, n) }},
		{"audited", true, func(n int) error {
			_, err := storage.Audited(actor, db, func(q sqlx.ExtContext) (struct{}, error) { return struct{}{}, rename(actor, q, n) })
			return err
		}},
		{"tx", false, func(n int) error {
			return storage.InTx(ctx, db, func(tx *sqlx.Tx) error { return rename(ctx, tx, n) })
		}},
		{"audited-tx", true, func(n int) error {
			return storage.InTx(actor, db, func(tx *sqlx.Tx) error { return rename(actor, tx, n) })
		}},
	}
	// Each round runs every variant benchRoundWrites times, the unaudited ones together and
	// the audited ones together (the trigger is switched between them), and each variant's
	// cost is its median round: the machine's noise, which drifts over seconds, then weighs on
	// the variants alike.
	rounds := map[string][]time.Duration{}
	for range b.N {
		for _, on := range []bool{false, true} {
			trigger(on)
			for _, v := range variants {
				if v.trigger != on {
					continue
				}
				start := time.Now()
				for n := range benchRoundWrites {
					if err := v.write(n); err != nil {
						b.Fatal(err)
					}
				}
				rounds[v.name] = append(rounds[v.name], time.Since(start)/benchRoundWrites)
			}
		}
	}
	trigger(true)
	perOp := map[string]time.Duration{}
	for _, v := range variants {
		perOp[v.name] = median(rounds[v.name])
		b.ReportMetric(float64(perOp[v.name].Microseconds()), "µs/"+v.name)
	}
	b.ReportMetric(ratio(perOp["audited"], perOp["pool"]), "audited/pool")
	b.ReportMetric(ratio(perOp["audited-tx"], perOp["tx"]), "audited-tx/tx")
}

// benchRoundWrites is how many writes each variant makes per round.
const benchRoundWrites = 200

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
