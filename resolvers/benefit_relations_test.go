package resolvers_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

func TestBenefitRelationsReturnTheirRows(t *testing.T) {
	t.Parallel()
	g := newBenefitGraph(t)
	org := g.org.ID
	grantsOf := `SELECT id FROM benefit_grants WHERE organization_id = $1 AND `
	for _, c := range []struct {
		name, query string
		v           vars
		path        []string
		want        []string
	}{
		{"a customer's grants are those of all its purchases",
			`query($id: UUID!) { customer(id: $id) { benefitGrants(limit: 100) { items { id } } } }`, vars{"id": g.ann.ID},
			[]string{"customer", "benefitGrants", "items"}, g.sqlIDs(t, grantsOf+"customer_id = $2", org, g.ann.ID)},
		{"a customer's license keys",
			`query($id: UUID!) { customer(id: $id) { licenseKeys { items { id } } } }`, vars{"id": g.ann.ID},
			[]string{"customer", "licenseKeys", "items"},
			g.sqlIDs(t, `SELECT id FROM license_keys WHERE organization_id = $1 AND customer_id = $2`, org, g.ann.ID)},
		{"a customer's seats are those of its purchases, pending and claimed",
			`query($id: UUID!) { customer(id: $id) { seats { items { id } } } }`, vars{"id": g.team.ID},
			[]string{"customer", "seats", "items"},
			g.sqlIDs(t, `SELECT id FROM customer_seats WHERE organization_id = $1 AND customer_id = $2`, org, g.team.ID)},
		{"a customer's downloadables",
			`query($id: UUID!) { customer(id: $id) { downloadables { items { id } } } }`, vars{"id": g.ann.ID},
			[]string{"customer", "downloadables", "items"},
			g.sqlIDs(t, `SELECT id FROM downloadables WHERE organization_id = $1 AND customer_id = $2`, org, g.ann.ID)},
		{"a customer's members are its owner and the members its seats are assigned to",
			`query($id: UUID!) { customer(id: $id) { members { items { id } } } }`, vars{"id": g.team.ID},
			[]string{"customer", "members", "items"},
			g.sqlIDs(t, `SELECT id FROM members WHERE organization_id = $1 AND customer_id = $2 AND deleted_at IS NULL`, org, g.team.ID)},
		{"a subscription's grants are its seat holders' when it is seat-based",
			`query($id: UUID!) { subscription(id: $id) { benefitGrants { items { id } } } }`, vars{"id": g.teamSub},
			[]string{"subscription", "benefitGrants", "items"}, g.sqlIDs(t, grantsOf+"member_id = $2", org, g.ada)},
		{"a subscription's grants are its customer's otherwise",
			`query($id: UUID!) { subscription(id: $id) { benefitGrants { items { id } } } }`, vars{"id": g.bobSub},
			[]string{"subscription", "benefitGrants", "items"}, g.sqlIDs(t, grantsOf+"customer_id = $2", org, g.bob.ID)},
		{"a subscription's seats",
			`query($id: UUID!) { subscription(id: $id) { customerSeats { items { id } } } }`, vars{"id": g.teamSub},
			[]string{"subscription", "customerSeats", "items"},
			g.sqlIDs(t, `SELECT id FROM customer_seats WHERE subscription_id = $1`, g.teamSub)},
		{"an order's grants",
			`query($id: UUID!) { order(id: $id) { benefitGrants { items { id } } } }`, vars{"id": g.annOrder},
			[]string{"order", "benefitGrants", "items"}, g.sqlIDs(t, grantsOf+"order_id = $2", org, g.annOrder)},
		{"an order that is not seat-based has no seats",
			`query($id: UUID!) { order(id: $id) { customerSeats { items { id } } } }`, vars{"id": g.annOrder},
			[]string{"order", "customerSeats", "items"}, []string{}},
		{"a benefit's grants reach every holder",
			`query($id: UUID!) { benefit(id: $id) { grants(limit: 100) { items { id } } } }`, vars{"id": g.lk.ID},
			[]string{"benefit", "grants", "items"}, g.sqlIDs(t, grantsOf+"benefit_id = $2", org, g.lk.ID)},
		{"the root grant list needs no benefit and filters by customer",
			`query($id: UUID!) { benefitGrants(customerId: [$id], limit: 100) { items { id } } }`, vars{"id": g.ann.ID},
			[]string{"benefitGrants", "items"}, g.sqlIDs(t, grantsOf+"customer_id = $2", org, g.ann.ID)},
		{"the root license-key list filters by customer",
			`query($id: UUID!) { licenseKeys(customerId: [$id]) { items { id } } }`, vars{"id": g.bob.ID},
			[]string{"licenseKeys", "items"},
			g.sqlIDs(t, `SELECT id FROM license_keys WHERE organization_id = $1 AND customer_id = $2`, org, g.bob.ID)},
		{"a license key's benefit",
			`query($id: UUID!) { licenseKey(id: $id) { benefit { id } } }`, vars{"id": g.annLicenseKeyID},
			[]string{"licenseKey", "benefit"}, sortedIDs(g.lk.ID)},
		{"a license key's grant is the one that issued it",
			`query($id: UUID!) { licenseKey(id: $id) { grant { id } } }`, vars{"id": g.annLicenseKeyID},
			[]string{"licenseKey", "grant"}, sortedIDs(g.annLicenseKeyGrant)},
		{"a grant's license key, none for grants of other benefits",
			`query($id: UUID!) { customer(id: $id) { benefitGrants { items { licenseKey { id } } } } }`, vars{"id": g.ann.ID},
			[]string{"customer", "benefitGrants", "items", "licenseKey"}, sortedIDs(g.annLicenseKeyID)},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := g.s.Do(t, g.org.Token, c.query, c.v)
			if len(res.Errors) > 0 {
				t.Fatalf("%s", res.Body)
			}
			got := idsAt(t, res.Data, c.path...)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if len(c.want) == 0 && c.name != "an order that is not seat-based has no seats" {
				t.Error("the oracle found no rows: the case proves nothing")
			}
		})
	}

	t.Run("rows of another organization that name the customer never show", func(t *testing.T) {
		res := g.s.Do(t, g.org.Token, `query($id: UUID!) { customer(id: $id) {
			benefitGrants(limit: 100) { items { id } } licenseKeys(limit: 100) { items { id } }
			seats(limit: 100) { items { id } } members(limit: 100) { items { id } }
			downloadables(limit: 100) { items { id } } } }`, vars{"id": g.ann.ID})
		if len(res.Errors) > 0 {
			t.Fatalf("%s", res.Body)
		}
		for _, field := range []string{"benefitGrants", "licenseKeys", "seats", "members", "downloadables"} {
			got := idsAt(t, res.Data, "customer", field, "items")
			for table, id := range g.forged {
				if slices.Contains(got, id.String()) {
					t.Errorf("customer.%s shows the other organization's %s %s", field, table, id)
				}
			}
		}
		for _, q := range []string{
			`query($id: UUID!) { benefitGrants(customerId: [$id], limit: 100) { items { id } } }`,
			`query($id: UUID!) { licenseKeys(customerId: [$id], limit: 100) { items { id } } }`,
		} {
			res := g.s.Do(t, g.org.Token, q, vars{"id": g.ann.ID})
			for _, id := range g.forged {
				if slices.Contains(idsAt(t, res.Data, "benefitGrants", "items"), id.String()) ||
					slices.Contains(idsAt(t, res.Data, "licenseKeys", "items"), id.String()) {
					t.Errorf("%s shows the other organization's %s", q, id)
				}
			}
		}
	})
}

func TestNestedBenefitListsFilterSortAndPage(t *testing.T) {
	t.Parallel()
	g := newBenefitGraph(t)
	const doc = `query($id: UUID!, $page: Int, $limit: Int, $first: Int, $after: String, $last: Int, $before: String,
		$sorting: [String!], $benefitId: UUID) { customer(id: $id) {
		benefitGrants(benefitId: $benefitId, page: $page, limit: $limit, first: $first, after: $after, last: $last,
			before: $before, sorting: $sorting) { items { id } pagination { totalCount }
			pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`
	window := func(t *testing.T, v vars) orderWindow {
		t.Helper()
		v["id"] = g.ann.ID
		var out struct {
			Customer struct{ BenefitGrants orderWindow }
		}
		g.s.Query(t, g.org.Token, doc, v, &out)
		return out.Customer.BenefitGrants
	}
	// The bundle's three grants were made in one transaction: they tie on created_at.
	for _, sorting := range [][]string{{"created_at"}, {"-created_at"}, {"-granted_at"}} {
		t.Run(fmt.Sprint("tied grants sorted by ", sorting, " walk the same by offset, first/after and last/before"), func(t *testing.T) {
			var byOffset, forward, backward []uuid.UUID
			for page := 1; page <= 3; page++ {
				byOffset = append(byOffset, itemIDs(window(t, vars{"page": page, "limit": 1, "sorting": sorting}).Items)...)
			}
			requireEachOnce(t, "offset pages", byOffset, 3)
			var after, before *string
			for range 5 {
				w := window(t, vars{"first": 1, "after": after, "sorting": sorting})
				forward = append(forward, itemIDs(w.Items)...)
				if !w.PageInfo.HasNextPage {
					break
				}
				after = w.PageInfo.EndCursor
			}
			for range 5 {
				w := window(t, vars{"last": 2, "before": before, "sorting": sorting})
				backward = append(itemIDs(w.Items), backward...)
				if !w.PageInfo.HasPreviousPage {
					break
				}
				before = w.PageInfo.StartCursor
			}
			if !slices.Equal(forward, byOffset) || !slices.Equal(backward, byOffset) {
				t.Errorf("offset %v, first/after %v, last/before %v", byOffset, forward, backward)
			}
		})
	}
	t.Run("a filter narrows the nested list and its total", func(t *testing.T) {
		w := window(t, vars{"benefitId": g.lk.ID})
		if len(w.Items) != 1 || w.Pagination.TotalCount != 1 {
			t.Errorf("grants of the license-key benefit: %+v", w)
		}
	})
	t.Run("seats filter by status", func(t *testing.T) {
		for status, want := range map[string]int{"pending": 1, "claimed": 1, "revoked": 0} {
			var out struct {
				Customer struct {
					Seats struct{ Items []struct{ Status string } }
				}
			}
			g.s.Query(t, g.org.Token, `query($id: UUID!, $s: [CustomerSeatStatus!]) { customer(id: $id) {
				seats(status: $s) { items { status } } } }`, vars{"id": g.team.ID, "s": []string{status}}, &out)
			if n := len(out.Customer.Seats.Items); n != want {
				t.Errorf("%s seats: %d, want %d", status, n, want)
			}
		}
	})
	for _, c := range []struct {
		name string
		v    vars
	}{
		{"a forged cursor", vars{"first": 1, "after": "eyJvIjoxLCJrIjpbMV19"}},
		{"a cursor of another sorting", vars{"first": 1, "after": window(t, vars{"first": 1}).PageInfo.EndCursor,
			"sorting": []string{"granted_at"}}},
		{"first above 100", vars{"first": 101}},
		{"an unknown sorting", vars{"sorting": []string{"customer"}}},
	} {
		t.Run(c.name+" is the client's error", func(t *testing.T) {
			c.v["id"] = g.ann.ID
			res := g.s.Do(t, g.org.Token, doc, c.v)
			if len(res.Errors) == 0 || reason(res.Errors[0]) != "RequestValidationError" {
				t.Fatalf("want the client's error, got %s", res.Body)
			}
		})
	}
}

func TestPortalFollowsBenefitRelationsOfItsOwnCustomer(t *testing.T) {
	t.Parallel()
	g := newBenefitGraph(t)
	const both = `{ me {
		customer { benefitGrants(limit: 100) { items { id } } licenseKeys(limit: 100) { items { id } }
			seats(limit: 100) { items { id } } downloadables(limit: 100) { items { id } } }
		benefitGrants(limit: 100) { items { id } } licenseKeys(limit: 100) { items { id } }
		seats(limit: 100) { items { id } } downloadables(limit: 100) { items { id } } } }`
	for _, c := range []struct {
		name  string
		token string
		// want is how many of each list the session sees: grants, keys, seats, downloadables.
		want [4]int
	}{
		{"a customer session sees everything it bought", g.annToken, [4]int{3, 1, 0, 1}},
		{"a member session sees what it holds, not its customer's own", g.adaToken, [4]int{2, 1, 1, 1}},
	} {
		t.Run(c.name+", through its customer as through its own lists", func(t *testing.T) {
			res := g.s.Do(t, c.token, both, nil)
			if len(res.Errors) > 0 {
				t.Fatalf("%s", res.Body)
			}
			for i, field := range []string{"benefitGrants", "licenseKeys", "seats", "downloadables"} {
				viaCustomer := idsAt(t, res.Data, "me", "customer", field, "items")
				own := idsAt(t, res.Data, "me", field, "items")
				if !slices.Equal(viaCustomer, own) || len(own) != c.want[i] {
					t.Errorf("%s: me.customer %v, me %v, want %d", field, viaCustomer, own, c.want[i])
				}
			}
		})
	}

	for _, c := range []struct {
		name, token, query, field string
		v                         vars
	}{
		{"a benefit's grants reach other customers", g.annToken,
			`{ me { benefitGrants { items { id benefit { id grants { items { id } } } } } } }`, "grants", nil},
		{"members are no portal relation", g.annToken, `{ me { customer { id members { items { id } } } } }`, "members", nil},
		{"another customer's key validated by its text opens no grant", g.annToken,
			`mutation($in: LicenseKeyValidateInput!) { portalValidateLicenseKey(input: $in) { licenseKey { id grant { id } } } }`,
			"grant", vars{"in": vars{"key": g.bobKey, "organizationId": g.org.ID}}},
		{"another customer's key validated by its text opens no benefit", g.adaToken,
			`mutation($in: LicenseKeyValidateInput!) { portalValidateLicenseKey(input: $in) { licenseKey { id benefit { id } } } }`,
			"benefit", vars{"in": vars{"key": g.bobKey, "organizationId": g.org.ID}}},
		{"a key validated without a token opens nothing", "",
			`mutation($in: LicenseKeyValidateInput!) { portalValidateLicenseKey(input: $in) { licenseKey { id grant { id } } } }`,
			"grant", vars{"in": vars{"key": g.bobKey, "organizationId": g.org.ID}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := "NotPermitted"
			if c.token == "" {
				want = "Unauthorized"
			}
			requireFieldRefused(t, g.s.Do(t, c.token, c.query, c.v), c.field, want)
		})
	}

	t.Run("grants of a deleted benefit leave the portal's relation as they leave its list", func(t *testing.T) {
		g.s.Query(t, g.org.Token, `mutation($id: UUID!) { deleteBenefit(id: $id) { id } }`, vars{"id": g.note.ID}, nil)
		res := g.s.Do(t, g.annToken, both, nil)
		viaCustomer := idsAt(t, res.Data, "me", "customer", "benefitGrants", "items")
		if own := idsAt(t, res.Data, "me", "benefitGrants", "items"); !slices.Equal(viaCustomer, own) || len(own) != 2 {
			t.Errorf("me.customer.benefitGrants %v, me.benefitGrants %v, want the 2 grants of live benefits", viaCustomer, own)
		}
	})

	t.Run("a token without the relation's scope is refused the relation alone", func(t *testing.T) {
		tok := g.s.NewToken(t, g.org.ID, "customers:read")
		res := g.s.Do(t, tok, `query($id: UUID!) { customer(id: $id) { id licenseKeys { items { id } } } }`, vars{"id": g.ann.ID})
		requireFieldRefused(t, res, "licenseKeys", "insufficient_scope")
	})
}
