package rest_test

import (
	"encoding/json"
	"testing"

	"till/resolvers/resolverstest"
	"till/storage/storagetest"
)

// TestGetOrderBodyIsTheListedOrder pins that GET /v1/orders/{id}, whose order read carries the
// customer, product, discount, subscription and lines it embeds, answers byte for byte what
// GET /v1/orders/ answers for the same order, whose relations the loaders read: same
// document fragment, same records, whichever statement read them.
func TestGetOrderBodyIsTheListedOrder(t *testing.T) {
	t.Parallel()
	w := newOrderWorld(t, newV1(t))
	rec := w.s.do(t, call{target: "/v1/orders/?limit=100", token: w.org.Token})
	want{status: 200}.check(t, rec)
	var page struct{ Items []json.RawMessage }
	decodeJSON(t, rec.Body.Bytes(), &page)
	listed := map[string]string{}
	for _, it := range page.Items {
		var id struct{ ID string }
		decodeJSON(t, it, &id)
		listed[id.ID] = string(it)
	}
	for name, o := range map[string]string{
		"with a product and a line":                                w.a.ID.String(),
		"with a product, a discount, a subscription and a line":    w.b.ID.String(),
		"without product, discount or subscription, with one line": w.c.ID.String(),
	} {
		t.Run("an order "+name+" reads as listed", func(t *testing.T) {
			rec := w.s.do(t, call{target: "/v1/orders/" + o, token: w.org.Token})
			want{status: 200}.check(t, rec)
			if got := rec.Body.String(); got != listed[o] {
				t.Errorf("GET /v1/orders/%s:\n%s\nlisted:\n%s", o, got, listed[o])
			}
		})
	}
}

// TestGetOrderCostsTwoStatements pins the statements of GET /v1/orders/{id} through the real
// handler on a counting connection: the token's lookup, and the order carrying the customer,
// product, discount, subscription and lines its body embeds.
//
// Not parallel: the count is of the whole pool.
func TestGetOrderCostsTwoStatements(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	w := newOrderWorld(t, newV1On(t, db))
	for run := 1; run <= 3; run++ {
		counter.Reset()
		rec := w.s.do(t, call{target: "/v1/orders/" + w.b.ID.String(), token: w.org.Token})
		want{status: 200, has: []string{`"discount":{"duration":"once"`, `"subscription":{"metadata"`}}.check(t, rec)
		if got := counter.Snapshot(); got.Statements() != 2 || got.Begins != 0 {
			t.Errorf("run %d: %s; want 2 statements and no transaction", run, got)
		}
	}
}
