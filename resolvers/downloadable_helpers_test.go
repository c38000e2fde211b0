package resolvers_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/internal/blob"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

// downloadWorld is the grant world with a local blob store and one HTTP server that serves
// both the download links (/downloads/) and the signed storage URLs they redirect to
// (/blob/), as `till serve` mounts them.
type downloadWorld struct {
	*grantWorld
	blobs *blob.Local
	srv   *httptest.Server
}

func newDownloadWorld(tb testing.TB) *downloadWorld {
	tb.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	l, err := blob.NewLocal(blob.LocalConfig{Dir: tb.TempDir(), BaseURL: srv.URL + "/blob/", Secret: secret})
	if err != nil {
		tb.Fatal(err)
	}
	w := &downloadWorld{grantWorld: newGrantWorld(tb, func(d *resolvers.Deps) { d.Blobs = l }), blobs: l, srv: srv}
	mux.Handle("/blob/", l.Handler())
	mux.Handle("/downloads/", w.s.Resolver.DownloadHandler())
	return w
}

// file stores content as an uploaded downloadable file of the organization.
func (w *downloadWorld) file(tb testing.TB, name, content string) uuid.UUID {
	tb.Helper()
	id := uuid.New()
	path := fmt.Sprintf("downloadable/%s/%s/%s", w.org.ID, id, name)
	if _, err := w.blobs.Put(context.Background(), path, strings.NewReader(content), int64(len(content)), "text/plain"); err != nil {
		tb.Fatal(err)
	}
	w.s.Exec(tb, `INSERT INTO files (id, organization_id, service, name, path, mime_type, size, version,
			checksum_sha256_hex, is_uploaded)
		VALUES ($1, $2, 'downloadable', $3, $4, 'text/plain', $5, 'v1', 'abc', true)`, id, w.org.ID, name, path, len(content))
	return id
}

// benefit creates a downloadables benefit of files, some of them archived.
func (w *downloadWorld) benefit(tb testing.TB, files []uuid.UUID, archived ...uuid.UUID) benefit {
	tb.Helper()
	return createBenefit(tb, w.s, w.org.Token, vars{"type": "downloadables", "description": "Downloads",
		"properties": downloadablesProps(files, archived)})
}

// setFiles replaces a downloadables benefit's files through updateBenefit.
func (w *downloadWorld) setFiles(tb testing.TB, benefitID uuid.UUID, files []uuid.UUID, archived ...uuid.UUID) {
	tb.Helper()
	var out struct{ UpdateBenefit struct{ ID uuid.UUID } }
	w.s.Query(tb, w.org.Token, `mutation($input: BenefitUpdateInput!) { updateBenefit(input: $input) { id } }`,
		vars{"input": vars{"id": benefitID, "properties": downloadablesProps(files, archived)}}, &out)
}

func downloadablesProps(files, archived []uuid.UUID) vars {
	a := vars{}
	for _, id := range archived {
		a[id.String()] = true
	}
	return vars{"files": files, "archived": a}
}

// purchase grants a product of the benefits to a new customer through a paid order.
func (w *downloadWorld) purchase(tb testing.TB, benefitIDs ...uuid.UUID) (customer, resolvers.GrantScope) {
	tb.Helper()
	c := w.s.NewCustomer(tb, w.org.ID, "")
	p := w.s.NewProduct(tb, w.org.ID, "Files "+uuid.NewString()[:6], benefitIDs...)
	orderID := w.s.NewPaidOrder(tb, w.org.ID, c.ID, p.ID, nil)
	scope := resolvers.GrantScope{CustomerID: c.ID, ProductID: p.ID, OrderID: &orderID}
	w.grant(tb, scope)
	return c, scope
}

type downloadable struct {
	ID        uuid.UUID `json:"id"`
	BenefitID uuid.UUID `json:"benefitId"`
	Benefit   struct {
		ID uuid.UUID `json:"id"`
	} `json:"benefit"`
	File struct {
		ID                uuid.UUID `json:"id"`
		Name              string    `json:"name"`
		MimeType          string    `json:"mimeType"`
		Size              int64     `json:"size"`
		SizeReadable      string    `json:"sizeReadable"`
		Version           *string   `json:"version"`
		ChecksumSha256Hex *string   `json:"checksumSha256Hex"`
		IsUploaded        bool      `json:"isUploaded"`
	} `json:"file"`
	DownloadURL      string  `json:"downloadUrl"`
	ExpiresAt        string  `json:"expiresAt"`
	Downloaded       int     `json:"downloaded"`
	LastDownloadedAt *string `json:"lastDownloadedAt"`
}

// downloadables lists a portal session's downloadables, of one benefit when benefitID is set.
func (w *downloadWorld) downloadables(tb testing.TB, token string, benefitID *uuid.UUID) []downloadable {
	tb.Helper()
	var out struct {
		Me struct {
			Downloadables struct {
				Items      []downloadable
				Pagination struct{ TotalCount int }
			}
		}
	}
	w.s.Query(tb, token, `query($b: UUID) { me { downloadables(benefitId: $b, limit: 100) {
		items { id benefitId benefit { id } file { id name mimeType size sizeReadable version checksumSha256Hex isUploaded }
			downloadUrl expiresAt downloaded lastDownloadedAt }
		pagination { totalCount } } } }`, vars{"b": benefitID}, &out)
	if n := len(out.Me.Downloadables.Items); out.Me.Downloadables.Pagination.TotalCount != n {
		tb.Errorf("totalCount = %d for %d items", out.Me.Downloadables.Pagination.TotalCount, n)
	}
	return out.Me.Downloadables.Items
}

// fileIDs returns the listed files' ids, sorted, for comparing with an expected set.
func fileIDs(ds []downloadable) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.File.ID.String()
	}
	sort.Strings(out)
	return out
}

// sortedIDs returns ids as sorted strings.
func sortedIDs(ids ...uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	sort.Strings(out)
	return out
}

// fetch follows a download link on the world's server (links name the portal's origin) and
// returns the final status and body; redirects to storage are followed.
func (w *downloadWorld) fetch(tb testing.TB, link string) (int, string) {
	tb.Helper()
	rest, ok := strings.CutPrefix(link, resolverstest.PortalURL)
	if !ok {
		tb.Fatalf("download link %q is not under the portal URL", link)
	}
	res, err := w.srv.Client().Get(w.srv.URL + rest)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	var body bytes.Buffer
	if _, err := io.Copy(&body, res.Body); err != nil {
		tb.Fatal(err)
	}
	return res.StatusCode, body.String()
}

// grantProperties reads a grant's properties straight from the database.
func (w *downloadWorld) grantProperties(tb testing.TB, benefitID, customerID uuid.UUID) string {
	tb.Helper()
	var props string
	w.s.Get(tb, &props, `SELECT properties::text FROM benefit_grants WHERE benefit_id = $1 AND customer_id = $2`,
		benefitID, customerID)
	return props
}

// filesJSON is the properties a grant of files has, as PostgreSQL prints jsonb.
func filesJSON(ids ...uuid.UUID) string {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = `"` + id.String() + `"`
	}
	return `{"files": [` + strings.Join(quoted, ", ") + `]}`
}
