package resolvers_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"till/resolvers/resolverstest"
)

// race runs fn from n goroutines released at once.
func race(n int, fn func(i int)) {
	var start, done sync.WaitGroup
	start.Add(1)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			start.Wait()
			fn(i)
		}()
	}
	start.Done()
	done.Wait()
}

func TestConcurrentWrites(t *testing.T) {
	t.Parallel()
	const n = 50

	t.Run("racing member sessions of one customer create exactly one owner member", func(t *testing.T) {
		s := resolverstest.New(t)
		org := s.NewOrg(t, resolverstest.AllScopes)
		s.Exec(t, `UPDATE organizations SET feature_settings = '{"member_model_enabled": true}' WHERE id = $1`, org.ID)
		c := s.NewCustomer(t, org.ID, "")
		var mu sync.Mutex
		var failures []string
		race(n, func(int) {
			res := s.Do(t, org.Token, `mutation($id: UUID!) { createCustomerSession(input: {customerId: $id}) { token } }`,
				vars{"id": c.ID})
			if len(res.Errors) > 0 || !strings.Contains(string(res.Data), "till_mst_") {
				mu.Lock()
				failures = append(failures, string(res.Body))
				mu.Unlock()
			}
		})
		if len(failures) > 0 {
			t.Fatalf("%d of %d session creations failed, first: %s", len(failures), n, failures[0])
		}
		var owners, sessions int
		s.Get(t, &owners, `SELECT count(*) FROM members WHERE customer_id = $1 AND role = 'owner'`, c.ID)
		s.Get(t, &sessions, `SELECT count(*) FROM member_sessions WHERE customer_id = $1`, c.ID)
		if owners != 1 || sessions != n {
			t.Fatalf("owners = %d, sessions = %d; want 1 and %d", owners, sessions, n)
		}
	})

	t.Run("racing creations with one email store one customer and reject the rest cleanly", func(t *testing.T) {
		s := resolverstest.New(t)
		org := s.NewOrg(t, resolverstest.AllScopes)
		var mu sync.Mutex
		codes := map[string]int{}
		race(n, func(i int) {
			res := s.Do(t, org.Token, `mutation($in: CustomerCreateInput!) { createCustomer(input: $in) { id } }`,
				vars{"in": vars{"email": "same@example.com", "name": fmt.Sprint(i)}})
			code := "ok"
			if len(res.Errors) > 0 {
				code = res.Errors[0].Extensions.Code + " " + res.Errors[0].Extensions.Reason
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
		if codes["ok"] != 1 || codes["BAD_USER_INPUT PolarRequestValidationError"] != n-1 {
			t.Fatalf("outcomes = %v, want 1 ok and %d BAD_USER_INPUT PolarRequestValidationError", codes, n-1)
		}
		var stored int
		s.Get(t, &stored, `SELECT count(*) FROM customers WHERE organization_id = $1`, org.ID)
		if stored != 1 {
			t.Fatalf("%d customers stored, want 1", stored)
		}
	})
}
