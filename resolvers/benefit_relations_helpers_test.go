package resolvers_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/uuid"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// benefitGraph is a download world whose purchases reach every relation of the benefit
// domain: ann bought a bundle (a license key, a file and a note) once, bob subscribes to
// it, and team bought it too and subscribes to a seat-based plan of the license key and the
// file with two seats, one claimed by ada and one pending. Another organization holds rows forged to point at ann,
// which no relation of ann's organization may show.
type benefitGraph struct {
	*downloadWorld
	lk, files, note    benefit
	ann, bob, team     customer
	annOrder           uuid.UUID
	bobSub, teamSub    uuid.UUID
	ada                uuid.UUID // ada's member id
	annToken, adaToken string
	other              resolverstest.Org
	forged             map[string]uuid.UUID // by table
	bobKey             string
	annLicenseKeyID    uuid.UUID
	annLicenseKeyGrant uuid.UUID
}

func newBenefitGraph(t *testing.T) *benefitGraph {
	t.Helper()
	w := newDownloadWorld(t)
	g := &benefitGraph{downloadWorld: w}
	g.lk = w.licenseBenefit(t, vars{"prefix": "app"})
	g.files = w.benefit(t, []uuid.UUID{w.file(t, "a.txt", "hello")})
	g.note = newBenefit(t, w.s, w.org.Token, "A note")
	bundle := w.s.NewProduct(t, w.org.ID, "Bundle", g.lk.ID, g.files.ID, g.note.ID)
	plan := w.s.NewProduct(t, w.org.ID, "Team plan", g.lk.ID, g.files.ID)
	g.ann = w.s.NewCustomer(t, w.org.ID, "ann")
	g.bob = w.s.NewCustomer(t, w.org.ID, "bob")
	g.team = w.s.NewCustomer(t, w.org.ID, "team")

	g.annOrder = w.s.NewPaidOrder(t, w.org.ID, g.ann.ID, bundle.ID, nil)
	w.grant(t, resolvers.GrantScope{CustomerID: g.ann.ID, ProductID: bundle.ID, OrderID: &g.annOrder})
	g.bobSub = w.s.NewSubscription(t, w.org.ID, g.bob.ID, bundle.ID, nil)
	w.grant(t, resolvers.GrantScope{CustomerID: g.bob.ID, ProductID: bundle.ID, SubscriptionID: &g.bobSub})
	teamOrder := w.s.NewPaidOrder(t, w.org.ID, g.team.ID, bundle.ID, nil)
	w.grant(t, resolvers.GrantScope{CustomerID: g.team.ID, ProductID: bundle.ID, OrderID: &teamOrder})
	g.teamSub = w.s.NewSubscription(t, w.org.ID, g.team.ID, plan.ID, ptr(2))
	w.grant(t, resolvers.GrantScope{CustomerID: g.team.ID, ProductID: plan.ID, SubscriptionID: &g.teamSub})
	_, invitation := w.assign(t, vars{"subscriptionId": g.teamSub, "email": "ada@example.com"})
	adaSeat, adaToken := w.claim(t, invitation)
	g.ada, g.adaToken = *adaSeat.MemberID, adaToken
	w.assign(t, vars{"subscriptionId": g.teamSub, "email": "bo@example.com"})
	g.annToken = w.s.NewCustomerSession(t, w.org.ID, g.ann.ID)
	w.s.Get(t, &g.bobKey, `SELECT key FROM license_keys WHERE customer_id = $1`, g.bob.ID)
	w.s.Get(t, &g.annLicenseKeyID, `SELECT id FROM license_keys WHERE customer_id = $1`, g.ann.ID)
	w.s.Get(t, &g.annLicenseKeyGrant, `SELECT id FROM benefit_grants WHERE properties->>'license_key_id' = $1::text`, g.annLicenseKeyID)
	g.forge(t)
	return g
}

// forge stores, in another organization, a grant, a license key, an order with a seat, a
// member and a downloadable that all name ann as their customer: rows no write of Till
// makes, so only the organization filter of each list keeps them out.
func (g *benefitGraph) forge(t *testing.T) {
	t.Helper()
	g.other = g.s.NewOrg(t, resolverstest.AllScopes)
	b := newBenefit(t, g.s, g.other.Token, "Forged")
	f := map[string]uuid.UUID{}
	var fileID, orderID uuid.UUID
	g.s.Get(t, &orderID, `INSERT INTO orders (organization_id, customer_id, status, billing_reason, currency,
			subtotal_amount, net_amount, total_amount, seats)
		VALUES ($1, $2, 'paid', 'purchase', 'usd', 0, 0, 0, 1) RETURNING id`, g.other.ID, g.ann.ID)
	var id uuid.UUID
	g.s.Get(t, &id, `INSERT INTO benefit_grants (organization_id, benefit_id, customer_id, order_id, granted_at)
		VALUES ($1, $2, $3, $4, now()) RETURNING id`, g.other.ID, b.ID, g.ann.ID, orderID)
	f["benefit_grants"] = id
	g.s.Get(t, &id, `INSERT INTO license_keys (organization_id, benefit_id, customer_id, key)
		VALUES ($1, $2, $3, 'FORGED') RETURNING id`, g.other.ID, b.ID, g.ann.ID)
	f["license_keys"] = id
	g.s.Get(t, &id, `INSERT INTO customer_seats (organization_id, order_id, customer_id, email)
		VALUES ($1, $2, $3, 'forged@example.com') RETURNING id`, g.other.ID, orderID, g.ann.ID)
	f["customer_seats"] = id
	g.s.Get(t, &id, `INSERT INTO members (organization_id, customer_id, email)
		VALUES ($1, $2, 'forged@example.com') RETURNING id`, g.other.ID, g.ann.ID)
	f["members"] = id
	g.s.Get(t, &fileID, `INSERT INTO files (organization_id, service, name, path, mime_type, size, is_uploaded)
		VALUES ($1, 'downloadable', 'forged.txt', 'forged/' || gen_random_uuid(), 'text/plain', 1, true) RETURNING id`, g.other.ID)
	g.s.Get(t, &id, `INSERT INTO downloadables (organization_id, benefit_id, file_id, customer_id)
		VALUES ($1, $2, $3, $4) RETURNING id`, g.other.ID, b.ID, fileID, g.ann.ID)
	f["downloadables"] = id
	g.forged = f
}

// sqlIDs is the oracle of a relation: the ids a query selects straight from the tables,
// sorted as idsAt returns them.
func (g *benefitGraph) sqlIDs(t *testing.T, query string, args ...any) []string {
	t.Helper()
	var ids []uuid.UUID
	if err := g.s.DB.Select(&ids, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return sortedIDs(ids...)
}

// idsAt walks data along path (object keys; a list on the way is a page's items, whose
// every element is walked on) and returns the ids of the objects at its end, sorted.
func idsAt(t *testing.T, data json.RawMessage, path ...string) []string {
	t.Helper()
	var root any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	nodes := []any{root}
	for _, key := range path {
		var next []any
		for _, n := range nodes {
			switch v := n.(type) {
			case map[string]any:
				next = append(next, v[key])
			case []any:
				for _, e := range v {
					next = append(next, e.(map[string]any)[key])
				}
			}
		}
		nodes = next
	}
	out := []string{}
	for _, n := range nodes {
		items, _ := n.([]any)
		if m, ok := n.(map[string]any); ok {
			items = []any{m}
		}
		for _, it := range items {
			if id, ok := it.(map[string]any)["id"].(string); ok {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// reason is the upstream name of a GraphQL error: extensions.reason where the presenter
// sets it beside the code, else the code itself.
func reason(e resolverstest.Error) string {
	if e.Extensions.Reason != "" {
		return e.Extensions.Reason
	}
	return e.Extensions.Code
}

// requireRefused fails unless res carries an error with reason want at a path ending in
// field, and data that survived the refusal.
func requireFieldRefused(t *testing.T, res *resolverstest.Response, field, want string) {
	t.Helper()
	for _, e := range res.Errors {
		if len(e.Path) > 0 && e.Path[len(e.Path)-1] == field && reason(e) == want {
			if string(res.Data) == "null" || len(res.Data) == 0 {
				t.Fatalf("the refusal of %s took the whole response: %s", field, res.Body)
			}
			return
		}
	}
	t.Fatalf("want %s refused with %s, got %s", field, want, res.Body)
}
