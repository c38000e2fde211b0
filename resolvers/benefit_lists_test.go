package resolvers_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestBenefitListsWalkTheSameThreeWays pages every root and portal list of the benefit
// domain by offset, by first/after and by last/before, two rows at a time: the grants of a
// purchase are made in one transaction, so the lists are full of ties on created_at, and each
// way must see every row once and in the same order.
func TestBenefitListsWalkTheSameThreeWays(t *testing.T) {
	t.Parallel()
	g := newBenefitGraph(t)
	for _, c := range []struct {
		name, token, field, args string
		// path leads from data to the list's page.
		path []string
		want int
	}{
		{"the organization's grants", g.org.Token, "benefitGrants", "", []string{"benefitGrants"}, 11},
		{"the grants of a customer filter", g.org.Token, "benefitGrants", fmt.Sprintf(`customerId: ["%s"]`, g.team.ID),
			[]string{"benefitGrants"}, 5},
		{"the organization's license keys", g.org.Token, "licenseKeys", "", []string{"licenseKeys"}, 4},
		{"the organization's benefits", g.org.Token, "benefits", "", []string{"benefits"}, 3},
		{"a customer session's grants", g.annToken, "benefitGrants", "", []string{"me", "benefitGrants"}, 3},
		{"a customer session's downloadables", g.annToken, "downloadables", "", []string{"me", "downloadables"}, 1},
		{"a member session's grants", g.adaToken, "benefitGrants", "", []string{"me", "benefitGrants"}, 2},
		{"a member session's seats", g.adaToken, "seats", "", []string{"me", "seats"}, 1},
		{"a member session's license keys", g.adaToken, "licenseKeys", "", []string{"me", "licenseKeys"}, 1},
	} {
		for _, sorting := range []string{"", `sorting: ["-created_at"]`} {
			t.Run(strings.TrimSpace(c.name+" "+sorting), func(t *testing.T) {
				page := func(args string) orderWindow {
					t.Helper()
					all := strings.Join([]string{c.args, sorting, args}, " ")
					doc := fmt.Sprintf(`{ %s(%s) { items { id } pagination { totalCount }
						pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, c.field, all)
					if c.path[0] == "me" {
						doc = "{ me " + doc + " }"
					}
					res := g.s.Do(t, c.token, doc, nil)
					if len(res.Errors) > 0 {
						t.Fatalf("%s: %s", doc, res.Body)
					}
					raw := res.Data
					for _, k := range c.path {
						var next map[string]json.RawMessage
						mustUnmarshal(t, raw, &next)
						raw = next[k]
					}
					var w orderWindow
					mustUnmarshal(t, raw, &w)
					return w
				}
				var byOffset, forward, backward []uuid.UUID
				for p := 1; p <= (c.want+1)/2; p++ {
					w := page(fmt.Sprintf("page: %d, limit: 2", p))
					byOffset = append(byOffset, itemIDs(w.Items)...)
					if w.Pagination.TotalCount != c.want {
						t.Fatalf("totalCount %d, want %d", w.Pagination.TotalCount, c.want)
					}
				}
				requireEachOnce(t, "offset pages", byOffset, c.want)
				after := ""
				for range c.want + 1 {
					w := page("first: 2" + after)
					forward = append(forward, itemIDs(w.Items)...)
					if !w.PageInfo.HasNextPage {
						break
					}
					after = fmt.Sprintf(`, after: "%s"`, *w.PageInfo.EndCursor)
				}
				before := ""
				for range c.want + 1 {
					w := page("last: 2" + before)
					backward = append(itemIDs(w.Items), backward...)
					if !w.PageInfo.HasPreviousPage {
						break
					}
					before = fmt.Sprintf(`, before: "%s"`, *w.PageInfo.StartCursor)
				}
				if !slices.Equal(forward, byOffset) || !slices.Equal(backward, byOffset) {
					t.Errorf("offset %v\nfirst/after %v\nlast/before %v", byOffset, forward, backward)
				}
			})
		}
	}
}
