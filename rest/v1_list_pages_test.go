package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/rest"
	"till/rest/fastapi"
)

// TestV1ListsPageThroughEqualSortKeysOnce walks /v1 lists whose 101 rows share three
// created_at values: every page of 25 holds rows no other page holds, so the walk sees each
// row once, and a limit above 100 is clamped to 100 (contract §1.7), never refused.
func TestV1ListsPageThroughEqualSortKeysOnce(t *testing.T) {
	t.Parallel()
	s := newV1(t)
	o := s.NewOrg(t, "customers:read files:read webhooks:read customer_sessions:write")
	c := s.NewCustomer(t, o.ID, "ext-ties")
	session := s.NewCustomerSession(t, o.ID, c.ID)
	const rows = 101
	// tied is the created_at of the i-th seeded row: three values, so ties fill every page.
	const tied = `timestamptz '2026-01-01' + (i % 3) * interval '1 day'`
	seed := func(query string, args ...any) []uuid.UUID {
		t.Helper()
		var ids []uuid.UUID
		if err := s.DB.SelectContext(context.Background(), &ids, query, args...); err != nil {
			t.Fatalf("seeding: %v", err)
		}
		return ids
	}
	methods := seed(`INSERT INTO payment_methods (organization_id, customer_id, processor_id, type, brand, last4,
		exp_month, exp_year, created_at)
		SELECT $1, $2, 'pm_tie_' || i, 'card', 'visa', '4242', 1, 2031, `+tied+` FROM generate_series(1, $3) i
		RETURNING id`, o.ID, c.ID, rows)
	files := seed(`INSERT INTO files (organization_id, service, name, path, mime_type, size, is_uploaded, created_at)
		SELECT $1, 'downloadable', 'f' || i || '.zip', 'tie/' || i, 'application/zip', 10, true, `+tied+`
		FROM generate_series(1, $2) i RETURNING id`, o.ID, rows)
	endpoints := seed(`INSERT INTO webhook_endpoints (organization_id, url, secret, created_at)
		SELECT $1, 'https://example.com/hook/' || i, 'polar_whs_' || i, `+tied+` FROM generate_series(1, $2) i
		RETURNING id`, o.ID, rows)

	for _, tc := range []struct {
		name, path, token string
		want              []uuid.UUID
	}{
		{"a customer's payment methods", "/v1/customers/" + c.ID.String() + "/payment-methods", o.Token, methods},
		{"the portal's payment methods", "/v1/customer-portal/customers/me/payment-methods", session, methods},
		{"files", "/v1/files/", o.Token, files},
		{"webhook endpoints", "/v1/webhooks/endpoints", o.Token, endpoints},
	} {
		t.Run(tc.name+" show each row once across pages", func(t *testing.T) {
			seen := map[uuid.UUID]int{}
			for page := 1; page <= 5; page++ {
				p := listPage(t, s, tc.path, tc.token, fmt.Sprintf("?page=%d&limit=25", page))
				if p.Pagination.TotalCount != rows || p.Pagination.MaxPage != 5 {
					t.Fatalf("page %d: pagination %+v, want %d rows on 5 pages", page, p.Pagination, rows)
				}
				for _, id := range p.ids() {
					seen[id]++
				}
			}
			for _, id := range tc.want {
				if seen[id] != 1 {
					t.Errorf("row %s seen %d times", id, seen[id])
				}
			}
			if len(seen) != rows {
				t.Errorf("%d distinct rows seen, want %d", len(seen), rows)
			}
		})
		t.Run(tc.name+" clamp a limit above 100", func(t *testing.T) {
			p := listPage(t, s, tc.path, tc.token, "?limit=1000")
			if len(p.Items) != 100 || p.Pagination.MaxPage != 2 {
				t.Errorf("limit=1000: %d items, max_page %d; want 100 and 2", len(p.Items), p.Pagination.MaxPage)
			}
		})
	}
}

// idPage is the part of a /v1 list page the walk reads.
type idPage struct {
	Items      []struct{ ID uuid.UUID }
	Pagination struct {
		TotalCount int `json:"total_count"`
		MaxPage    int `json:"max_page"`
	}
}

func (p idPage) ids() []uuid.UUID {
	out := make([]uuid.UUID, len(p.Items))
	for i, it := range p.Items {
		out[i] = it.ID
	}
	return out
}

// checkListed checks that a list answered 200 with the items ids, in order, of total.
func checkListed(t *testing.T, rec *httptest.ResponseRecorder, ids []uuid.UUID, total int) {
	t.Helper()
	want{status: 200}.check(t, rec)
	var page idPage
	decodeJSON(t, rec.Body.Bytes(), &page)
	if diff := cmp.Diff(ids, page.ids()); diff != "" || page.Pagination.TotalCount != total {
		t.Errorf("ids (-want +got):\n%s\ntotal %d, want %d", diff, page.Pagination.TotalCount, total)
	}
}

// listPage reads one page of a /v1 list, failing on anything but a 200.
func listPage(t *testing.T, s *v1, path, token, query string) idPage {
	t.Helper()
	rec := s.do(t, call{target: path + query, token: token})
	want{status: http.StatusOK}.check(t, rec)
	var p idPage
	decodeJSON(t, rec.Body.Bytes(), &p)
	return p
}

// TestEveryV1ListClampsItsLimit reads the route table: every route that takes page takes
// limit too, and clamps it to 100 as upstream's API_PAGINATION_MAX_LIMIT does (contract
// §1.7), so no /v1 list refuses a large limit and none returns more than 100 rows.
func TestEveryV1ListClampsItsLimit(t *testing.T) {
	t.Parallel()
	lists := 0
	for _, r := range rest.Routes() {
		var page, limit *fastapi.Param
		for i, p := range r.Params {
			switch p.Name {
			case "page":
				page = &r.Params[i]
			case "limit":
				limit = &r.Params[i]
			}
		}
		if page == nil && limit == nil {
			continue
		}
		lists++
		if page == nil || limit == nil || limit.Clamp != 100 || limit.In != fastapi.InQuery {
			t.Errorf("%s %s: page %v, limit %+v; want both, limit clamped to 100", r.Method, r.Path, page != nil, limit)
		}
	}
	if lists < 10 {
		t.Errorf("%d list routes found, fewer than the route table serves", lists)
	}
}
