package storage

import (
	"context"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// ExplainMeterQuantity runs MeterQuantity's statement under EXPLAIN (ANALYZE, BUFFERS) and
// returns the plan, to check on a real database that each customer branch uses its index.
func ExplainMeterQuantity(ctx context.Context, q sqlx.ExtContext, m *Meter, customer MeterCustomer, from, to time.Time) (string, error) {
	query, args, err := meterTotalSQL(m, &customer, from, to)
	if err != nil {
		return "", err
	}
	var lines []string
	if err := sqlx.SelectContext(ctx, q, &lines, "EXPLAIN (ANALYZE, BUFFERS) "+query, args...); err != nil {
		return "", mapErr(err)
	}
	return strings.Join(lines, "\n"), nil
}
