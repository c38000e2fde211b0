package resolvers_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// benefitProductsWorld is a catalog where the benefit shared is attached to the products
// alpha, bravo and charlie (charlie archived), the benefit solo to bravo and delta, and the
// benefit unused to none. Another organization's product was then linked to shared by a row
// no use case writes, so only the organization filter keeps it out.
type benefitProductsWorld struct {
	s                            *resolverstest.Server
	org                          resolverstest.Org
	shared, solo, unused         benefit
	alpha, bravo, charlie, delta product
	foreign                      uuid.UUID
}

func newBenefitProductsWorld(t *testing.T) benefitProductsWorld {
	t.Helper()
	s := resolverstest.New(t)
	w := benefitProductsWorld{s: s, org: s.NewOrg(t, resolverstest.AllScopes)}
	w.shared = newBenefit(t, s, w.org.Token, "Shared perk")
	w.solo = newBenefit(t, s, w.org.Token, "Solo perk")
	w.unused = newBenefit(t, s, w.org.Token, "Unused perk")
	w.alpha = s.NewProduct(t, w.org.ID, "Alpha", w.shared.ID)
	w.bravo = s.NewProduct(t, w.org.ID, "Bravo", w.solo.ID, w.shared.ID)
	w.charlie = s.NewProduct(t, w.org.ID, "Charlie", w.shared.ID)
	w.delta = s.NewProduct(t, w.org.ID, "Delta", w.solo.ID)
	s.Query(t, w.org.Token, `mutation($id: UUID!) { archiveProduct(id: $id) { id } }`, vars{"id": w.charlie.ID}, nil)
	other := s.NewOrg(t, resolverstest.AllScopes)
	w.foreign = s.NewProduct(t, other.ID, "Foreign").ID
	s.Exec(t, `INSERT INTO product_benefits (product_id, benefit_id, organization_id) VALUES ($1, $2, $3)`,
		w.foreign, w.shared.ID, other.ID)
	return w
}

func TestBenefitProductsAreTheProductsItIsAttachedTo(t *testing.T) {
	t.Parallel()
	w := newBenefitProductsWorld(t)
	for _, c := range []struct {
		name  string
		query string
		v     vars
		want  []uuid.UUID
	}{
		{"a benefit's products, newest first, never another organization's",
			`query($id: UUID!) { benefit(id: $id) { products { items { id } } } }`, vars{"id": w.shared.ID},
			[]uuid.UUID{w.charlie.ID, w.bravo.ID, w.alpha.ID}},
		{"a benefit's products take the root list's sorting",
			`query($id: UUID!) { benefit(id: $id) { products(sorting: ["name"]) { items { id } } } }`, vars{"id": w.shared.ID},
			[]uuid.UUID{w.alpha.ID, w.bravo.ID, w.charlie.ID}},
		{"a benefit's products take the root list's filter",
			`query($id: UUID!) { benefit(id: $id) { products(filter: {isArchived: false}, sorting: ["-name"]) { items { id } } } }`,
			vars{"id": w.shared.ID}, []uuid.UUID{w.bravo.ID, w.alpha.ID}},
		{"a benefitId filter narrows to products that grant that benefit too",
			`query($id: UUID!, $b: [UUID!]) { benefit(id: $id) { products(filter: {benefitId: $b}) { items { id } } } }`,
			vars{"id": w.shared.ID, "b": []uuid.UUID{w.solo.ID}}, []uuid.UUID{w.bravo.ID}},
		{"a benefit attached to nothing has no products",
			`query($id: UUID!) { benefit(id: $id) { products { items { id } } } }`, vars{"id": w.unused.ID}, []uuid.UUID{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := w.s.Do(t, w.org.Token, c.query, c.v)
			if len(res.Errors) > 0 {
				t.Fatalf("%s", res.Body)
			}
			if diff := cmp.Diff(c.want, pageIDs(t, res.Data, "benefit", "products", "items")); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("each benefit of a page gets its own window and total", func(t *testing.T) {
		var out struct {
			Benefits struct {
				Items []struct {
					ID       uuid.UUID
					Products commerceWindow
				}
			}
		}
		w.s.Query(t, w.org.Token, `{ benefits(limit: 100) { items { id products(limit: 1, sorting: ["name"]) {
			items { id } pagination { totalCount } pageInfo { hasNextPage } } } } }`, nil, &out)
		want := map[uuid.UUID]struct {
			first uuid.UUID
			total int
		}{w.shared.ID: {w.alpha.ID, 3}, w.solo.ID: {w.bravo.ID, 2}, w.unused.ID: {uuid.Nil, 0}}
		if len(out.Benefits.Items) != len(want) {
			t.Fatalf("%d benefits, want %d", len(out.Benefits.Items), len(want))
		}
		for _, b := range out.Benefits.Items {
			got, exp := b.Products, want[b.ID]
			first := uuid.Nil
			if len(got.Items) > 0 {
				first = got.Items[0].ID
			}
			if first != exp.first || got.Pagination.TotalCount != exp.total || got.PageInfo.HasNextPage != (exp.total > 1) {
				t.Errorf("benefit %s: first %s of %d (more %t), want %s of %d", b.ID, first, got.Pagination.TotalCount,
					got.PageInfo.HasNextPage, exp.first, exp.total)
			}
		}
	})

	t.Run("offset pages, first/after and last/before walk the same products", func(t *testing.T) {
		const doc = `query($id: UUID!, $page: Int, $limit: Int, $first: Int, $after: String, $last: Int, $before: String) {
			benefit(id: $id) { products(sorting: ["name"], page: $page, limit: $limit, first: $first, after: $after,
				last: $last, before: $before) { items { id } pagination { totalCount }
				pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`
		window := func(v vars) commerceWindow {
			v["id"] = w.shared.ID
			var out struct {
				Benefit struct{ Products commerceWindow }
			}
			w.s.Query(t, w.org.Token, doc, v, &out)
			return out.Benefit.Products
		}
		var byOffset, forward, backward []uuid.UUID
		for page := 1; page <= 3; page++ {
			byOffset = append(byOffset, itemIDs(window(vars{"page": page, "limit": 1}).Items)...)
		}
		var after, before *string
		for range 5 {
			win := window(vars{"first": 1, "after": after})
			forward = append(forward, itemIDs(win.Items)...)
			if !win.PageInfo.HasNextPage {
				break
			}
			after = win.PageInfo.EndCursor
		}
		for range 5 {
			win := window(vars{"last": 2, "before": before})
			backward = append(itemIDs(win.Items), backward...)
			if !win.PageInfo.HasPreviousPage {
				break
			}
			before = win.PageInfo.StartCursor
		}
		want := []uuid.UUID{w.alpha.ID, w.bravo.ID, w.charlie.ID}
		if !slices.Equal(byOffset, want) || !slices.Equal(forward, want) || !slices.Equal(backward, want) {
			t.Errorf("offset %v, first/after %v, last/before %v, want %v", byOffset, forward, backward, want)
		}
	})

	t.Run("a token without a products scope is refused the relation alone", func(t *testing.T) {
		tok := w.s.NewToken(t, w.org.ID, "benefits:read")
		res := w.s.Do(t, tok, `query($id: UUID!) { benefit(id: $id) { id products { items { id } } } }`, vars{"id": w.shared.ID})
		requireRefused(t, res, "benefit.products")
		var out struct{ Benefit struct{ ID uuid.UUID } }
		mustUnmarshal(t, res.Data, &out)
		if out.Benefit.ID != w.shared.ID {
			t.Errorf("the benefit did not survive: %s", res.Data)
		}
	})
	t.Run("a products scope without benefits reads them", func(t *testing.T) {
		tok := w.s.NewToken(t, w.org.ID, "benefits:read products:read")
		res := w.s.Do(t, tok, `query($id: UUID!) { benefit(id: $id) { products { items { id } } } }`, vars{"id": w.solo.ID})
		if len(res.Errors) > 0 || len(pageIDs(t, res.Data, "benefit", "products", "items")) != 2 {
			t.Errorf("got %s", res.Body)
		}
	})
}

func TestPortalCannotFollowABenefitToItsProducts(t *testing.T) {
	t.Parallel()
	g := newBenefitGraph(t)
	res := g.s.Do(t, g.annToken, `{ me { benefitGrants { items { id benefit { id products { items { id } } } } } } }`, nil)
	requireFieldRefused(t, res, "products", "NotPermitted")
	if got := idsAt(t, res.Data, "me", "benefitGrants", "items", "benefit"); len(got) == 0 {
		t.Errorf("the benefits did not survive: %s", res.Body)
	}
}
