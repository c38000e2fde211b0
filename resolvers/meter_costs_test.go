package resolvers_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

const meterCostsDoc = `query($ids: [UUID!]!, $from: DateTime!, $to: DateTime!, $i: MeterQuantityInterval!, $c: UUID, $x: String) {
	meterCosts(ids: $ids, startTimestamp: $from, endTimestamp: $to, interval: $i, customerId: $c, externalCustomerId: $x) {
		meter { id } costs { timestamp costs events } total } }`

// meterCostsAnswer is what a test reads of meterCosts: per meter, its id, its buckets as
// (costs, events) and its total.
type meterCostsAnswer struct {
	Meter   uuid.UUID
	Buckets [][2]float64
	Total   float64
}

func queryMeterCosts(tb testing.TB, s *resolverstest.Server, token string, v vars) []meterCostsAnswer {
	tb.Helper()
	var out struct {
		MeterCosts []struct {
			Meter struct{ ID uuid.UUID }
			Costs []struct {
				Timestamp string
				Costs     float64
				Events    int64
			}
			Total float64
		}
	}
	s.Query(tb, token, meterCostsDoc, v, &out)
	answers := []meterCostsAnswer{}
	for _, m := range out.MeterCosts {
		a := meterCostsAnswer{Meter: m.Meter.ID, Total: m.Total}
		for i, b := range m.Costs {
			if want := time.Date(2026, 2, 2+i, 0, 0, 0, 0, time.UTC).Format(time.RFC3339); b.Timestamp != want {
				tb.Errorf("bucket %d at %s, want %s", i, b.Timestamp, want)
			}
			a.Buckets = append(a.Buckets, [2]float64{b.Costs, float64(b.Events)})
		}
		answers = append(answers, a)
	}
	return answers
}

// TestMeterCostsQuery sums the _cost.amount of the events each meter's filter selects, per
// day, narrowed to a customer as meterQuantities narrows, for several meters in the order
// asked, and refuses another organization's meter, too many meters and a bad window.
func TestMeterCostsQuery(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	tokens := createMeter(t, s, org.Token, apiCallsInput(vars{"aggregation": vars{"func": "sum", "property": "tokens"}}))
	chats := createMeter(t, s, org.Token, apiCallsInput(vars{"name": "Chats",
		"filter": vars{"conjunction": "and", "clauses": []any{vars{"property": "name", "operator": "eq", "value": "chat"}}}}))
	alice, bob := s.NewCustomer(t, org.ID, "alice"), s.NewCustomer(t, org.ID, "bob")
	stranger := s.NewOrg(t, resolverstest.AllScopes)
	theirMeter := createMeter(t, s, stranger.Token, apiCallsInput(nil))
	day := func(d int) time.Time { return time.Date(2026, 2, d, 12, 0, 0, 0, time.UTC) }
	for _, e := range []struct {
		org      uuid.UUID
		name     string
		customer *uuid.UUID
		external *string
		at       time.Time
		metadata string
	}{
		{org.ID, "api_call", &alice.ID, nil, day(2), `{"tokens": 5, "_cost": {"amount": 1.5, "currency": "usd"}}`},
		// Nothing to sum, yet it cost something.
		{org.ID, "api_call", nil, ptr("alice"), day(2), `{"_cost": {"amount": "0.25", "currency": "usd"}}`},
		{org.ID, "api_call", nil, ptr("alice"), day(4), `{"tokens": 11}`},
		{org.ID, "api_call", &bob.ID, nil, day(3), `{"tokens": 1, "_cost": {"amount": 100, "currency": "usd"}}`},
		{org.ID, "api_call", nil, ptr("ghost"), day(3), `{"_cost": {"amount": 1000, "currency": "usd"}}`},
		{org.ID, "chat", &alice.ID, nil, day(4), `{"_cost": {"amount": 3, "currency": "usd"}}`},
		{stranger.ID, "api_call", nil, ptr("alice"), day(2), `{"_cost": {"amount": 10000, "currency": "usd"}}`},
	} {
		s.Exec(t, `INSERT INTO events (organization_id, name, customer_id, external_customer_id, "timestamp", metadata)
			VALUES ($1, $2, $3, $4, $5, $6)`, e.org, e.name, e.customer, e.external, e.at, e.metadata)
	}
	from, to := "2026-02-02T00:00:00Z", "2026-02-05T00:00:00Z"
	aliceTokens := meterCostsAnswer{Meter: tokens.ID, Buckets: [][2]float64{{1.75, 2}, {0, 0}, {0, 0}}, Total: 1.75}
	aliceChats := meterCostsAnswer{Meter: chats.ID, Buckets: [][2]float64{{0, 0}, {0, 0}, {3, 1}}, Total: 3}
	nothing := func(m uuid.UUID) meterCostsAnswer {
		return meterCostsAnswer{Meter: m, Buckets: [][2]float64{{0, 0}, {0, 0}, {0, 0}}}
	}
	for _, c := range []struct {
		name string
		vars vars
		want []meterCostsAnswer
	}{
		{"everyone's", vars{"ids": []uuid.UUID{tokens.ID}}, []meterCostsAnswer{
			{Meter: tokens.ID, Buckets: [][2]float64{{1.75, 2}, {1100, 2}, {0, 0}}, Total: 1101.75}}},
		{"by customer id", vars{"ids": []uuid.UUID{tokens.ID}, "c": alice.ID}, []meterCostsAnswer{aliceTokens}},
		{"by external id", vars{"ids": []uuid.UUID{tokens.ID}, "x": "alice"}, []meterCostsAnswer{aliceTokens}},
		{"by both, disagreeing", vars{"ids": []uuid.UUID{tokens.ID}, "c": alice.ID, "x": "bob"}, []meterCostsAnswer{nothing(tokens.ID)}},
		{"unknown customer", vars{"ids": []uuid.UUID{tokens.ID}, "c": uuid.New()}, []meterCostsAnswer{nothing(tokens.ID)}},
		{"several meters in the order asked, a repeated one once", vars{"ids": []uuid.UUID{chats.ID, tokens.ID, chats.ID}, "c": alice.ID},
			[]meterCostsAnswer{aliceChats, aliceTokens}},
		{"no meters", vars{"ids": []uuid.UUID{}}, []meterCostsAnswer{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := vars{"from": from, "to": to, "i": "day"}
			for k, x := range c.vars {
				v[k] = x
			}
			if diff := cmp.Diff(c.want, queryMeterCosts(t, s, org.Token, v)); diff != "" {
				t.Errorf("meterCosts (-want +got):\n%s", diff)
			}
		})
	}

	tooMany := make([]uuid.UUID, resolvers.MaxMeterCostMeters+1)
	for i := range tooMany {
		tooMany[i] = tokens.ID
	}
	for _, c := range []struct {
		name         string
		token        string
		vars         vars
		code, reason string
		fields       []fieldErr
	}{
		{"their meter is not found", org.Token, vars{"ids": []uuid.UUID{tokens.ID, theirMeter.ID}}, "NOT_FOUND", "ResourceNotFound", nil},
		{"my meter is not found by them", stranger.Token, vars{"ids": []uuid.UUID{tokens.ID}}, "NOT_FOUND", "ResourceNotFound", nil},
		{"a meter that does not exist", org.Token, vars{"ids": []uuid.UUID{uuid.New()}}, "NOT_FOUND", "ResourceNotFound", nil},
		{fmt.Sprintf("%d ids are too many", len(tooMany)), org.Token, vars{"ids": tooMany}, "BAD_USER_INPUT", "PolarRequestValidationError",
			[]fieldErr{{Type: "too_long", Loc: []any{"ids"}, Input: float64(len(tooMany)),
				Msg: fmt.Sprintf("List should have at most %d items after validation, not %d", resolvers.MaxMeterCostMeters, len(tooMany))}}},
		{"a reversed window", org.Token, vars{"ids": []uuid.UUID{tokens.ID}, "from": to, "to": from}, "BAD_USER_INPUT", "PolarRequestValidationError",
			[]fieldErr{{Type: "value_error", Loc: []any{"endTimestamp"}, Input: from, Msg: "endTimestamp must be after startTimestamp."}}},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			v := vars{"from": from, "to": to, "i": "day"}
			for k, x := range c.vars {
				v[k] = x
			}
			wantError(t, s.QueryError(t, c.token, meterCostsDoc, v), c.code, c.reason, c.fields...)
		})
	}
}
