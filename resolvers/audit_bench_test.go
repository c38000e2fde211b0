package resolvers_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// auditBenchRound is how many calls each mutation makes per round of BenchmarkAuditedMutations.
const auditBenchRound = 100

// BenchmarkAuditedMutations measures what the audit log costs two hot mutations end to end,
// over HTTP through the real /graphql handler: a customer's rename (updateCustomer) and a
// license key's activation followed by its deactivation (activateLicenseKey, then
// deactivateLicenseKey, one pair per call). Each round makes every mutation's calls with the
// audit triggers disabled, then enabled, and each variant's cost is its median round, so the
// machine's drift weighs on both alike. It reports µs per call and the ratio audited /
// unaudited of each mutation.
//
// Unaudited here means without the triggers' records; the request still carries its actor,
// whose setting rides on BEGIN (storage.InTx) and costs no round trip. What wrapping a
// single-statement write in a transaction costs is BenchmarkAuditedWrite's (storage).
//
//	go test -run '^$' -bench AuditedMutations -benchtime 10x ./resolvers/
func BenchmarkAuditedMutations(b *testing.B) {
	w := newKeyWorld(b, vars{"activations": vars{"limit": 5}})
	s, tok := w.s, w.org.Token
	cust := s.NewCustomer(b, w.org.ID, "")
	const rename = `mutation($id: UUID!, $n: String!) { updateCustomer(input: {id: $id, name: $n}) { id } }`
	activate := `mutation($in: LicenseKeyActivateInput!) { activateLicenseKey(input: $in) { id } }`
	deactivate := `mutation($in: LicenseKeyDeactivateInput!) { deactivateLicenseKey(input: $in) }`
	mutations := []struct {
		name string
		call func(n int)
	}{
		{"updateCustomer", func(n int) {
			s.Query(b, tok, rename, vars{"id": cust.ID, "n": "Name " + uuid.NewString()[:8]}, nil)
		}},
		{"activateLicenseKey+deactivateLicenseKey", func(n int) {
			var out struct{ ActivateLicenseKey struct{ ID uuid.UUID } }
			s.Query(b, tok, activate, vars{"in": vars{"key": w.key.Key, "organizationId": w.org.ID, "label": "bench"}}, &out)
			s.Query(b, tok, deactivate, vars{"in": vars{"key": w.key.Key, "organizationId": w.org.ID,
				"activationId": out.ActivateLicenseKey.ID}}, nil)
		}},
	}
	rounds := map[string][]time.Duration{}
	b.ResetTimer()
	for range b.N {
		for _, audited := range []bool{false, true} {
			auditTriggers(b, s.App, audited)
			for _, m := range mutations {
				start := time.Now()
				for n := range auditBenchRound {
					m.call(n)
				}
				key := m.name + map[bool]string{true: " audited", false: " unaudited"}[audited]
				rounds[key] = append(rounds[key], time.Since(start)/auditBenchRound)
			}
		}
	}
	b.StopTimer()
	auditTriggers(b, s.App, true)
	for _, m := range mutations {
		on, off := medianOf(rounds[m.name+" audited"]), medianOf(rounds[m.name+" unaudited"])
		b.ReportMetric(float64(on.Microseconds()), "µs/"+m.name+"-audited")
		b.ReportMetric(float64(off.Microseconds()), "µs/"+m.name+"-unaudited")
		b.ReportMetric(float64(on)/float64(off), m.name+"-audited/unaudited")
	}
}

// auditTriggers enables or disables the audit trigger of every audited table.
func auditTriggers(tb testing.TB, a *resolverstest.App, on bool) {
	tb.Helper()
	verb := "DISABLE"
	if on {
		verb = "ENABLE"
	}
	a.Exec(tb, `DO $$ DECLARE t regclass; BEGIN
		FOR t IN SELECT tgrelid::regclass FROM pg_trigger WHERE tgname = 'audit' LOOP
			EXECUTE format('ALTER TABLE %s `+verb+` TRIGGER audit', t);
		END LOOP; END $$`)
}

func medianOf(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
