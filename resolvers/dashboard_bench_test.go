package resolvers_test

import (
	"testing"

	"till/resolvers/resolverstest"
)

// BenchmarkDashboardPage runs dashboard queries in process against the seed of
// TestDashboardQueriesCostPinnedStatements, so that -cpuprofile and -benchmem show what a
// page costs the server around its statements. bench/ measures pages over HTTP against a
// ceiling.
func BenchmarkDashboardPage(b *testing.B) {
	s := resolverstest.New(b)
	s.DB.SetMaxIdleConns(20) // as `till serve` keeps them: no connection opened per request
	org := s.NewOrg(b, resolverstest.AllScopes)
	seedDashboard(b, s.DB, org.ID)
	s.Exec(b, "ANALYZE")
	queries := []struct{ name, query string }{
		{"customers page", `{ customers(limit: 50) { items { id email name createdAt orders(limit: 5) { items { id
			status totalAmount createdAt product { id name } } pagination { totalCount } } } pagination { totalCount } } }`},
		{"one order", `{ orders(limit: 1) { items { id status totalAmount customer { id email }
			product { id name } items { label amount } } } }`},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := s.Do(b, org.Token, q.query, nil); len(res.Errors) > 0 {
					b.Fatal(string(res.Body))
				}
			}
		})
	}
}
