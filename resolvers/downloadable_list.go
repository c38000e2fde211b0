package resolvers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/storage"
)

// downloadableSorts whitelists the sorting of downloadable lists; newest first by default,
// as upstream's portal lists them.
var downloadableSorts = storage.DownloadableSortColumns

// downloadLinks signs the links of the downloadables one request lists: they all expire at
// the same moment.
type downloadLinks struct {
	r       *Resolver
	key     []byte
	expires time.Time
}

// downloadLinksNow starts the links of a request, valid for downloadLinkTTL from now.
func (r *Resolver) downloadLinksNow() (downloadLinks, error) {
	key, err := r.downloadKey()
	return downloadLinks{r: r, key: key, expires: r.Now().Add(downloadLinkTTL).UTC().Truncate(time.Second)}, err
}

// page turns a window of downloadable rows into the listed downloadables, each with its link.
func (l downloadLinks) page(p storage.Paged[*storage.DownloadableGrant]) storage.Paged[*model.Downloadable] {
	out := storage.Paged[*model.Downloadable]{Items: make([]*model.Downloadable, len(p.Items)), Cursors: p.Cursors,
		Total: p.Total, More: p.More}
	for i, d := range p.Items {
		out.Items[i] = &model.Downloadable{ID: d.ID, BenefitID: d.BenefitID, File: &d.File,
			DownloadURL: l.r.publicLink(DownloadsPath + downloadToken(l.key, d.ID, l.expires)), ExpiresAt: l.expires,
			Downloaded: d.Downloaded, LastDownloadedAt: d.LastDownloadedAt}
	}
	return out
}

// portalDownloadables lists the session's downloadables with fresh links.
func (r *Resolver) portalDownloadables(ctx context.Context, a listArgs, benefitID *uuid.UUID) (*model.DownloadablePage, error) {
	w, sorts, err := a.windowAndSorts(downloadableSorts)
	if err != nil {
		return nil, err
	}
	links, err := r.downloadLinksNow()
	if err != nil {
		return nil, err
	}
	s := auth.FromContext(ctx)
	f := storage.DownloadableListFilter{CustomerID: &s.CustomerID, MemberID: sessionMember(s)}
	if benefitID != nil {
		f.BenefitIDs = []uuid.UUID{*benefitID}
	}
	rows, err := storage.ListDownloadables(ctx, r.db, organizations(ctx), f, sorts, w)
	if err != nil {
		return nil, cursorErr(err, a)
	}
	p := links.page(rows)
	record(ctx, p.Items)
	return downloadablePageOf(p, w), nil
}

// customerDownloadables is Customer.downloadables: a window of each customer's available
// downloadables of the level, in one statement, with fresh links. A member session sees
// its own.
func (r *Resolver) customerDownloadables(ctx context.Context, c *storage.Customer, a listArgs, benefitID *uuid.UUID) (*model.DownloadablePage, error) {
	links, err := r.downloadLinksNow()
	if err != nil {
		return nil, err
	}
	var f storage.DownloadableListFilter
	if benefitID != nil {
		f.BenefitIDs = []uuid.UUID{*benefitID}
	}
	if _, member := portalHolder(ctx); member != nil {
		f.MemberID = member
	}
	p, w, err := relatedWindow(ctx, r.db, "Customer.downloadables", c, func(c *storage.Customer) uuid.UUID { return c.ID }, a,
		downloadableSorts, f, func(ctx context.Context, q sqlx.ExtContext, orgs, parents []uuid.UUID, f storage.DownloadableListFilter,
			sorts []storage.Sort, w storage.Window) ([]storage.Paged[*model.Downloadable], error) {
			rows, err := storage.DownloadableWindowsByCustomers(ctx, q, orgs, parents, f, sorts, w)
			out := make([]storage.Paged[*model.Downloadable], len(rows))
			for i, p := range rows {
				out[i] = links.page(p)
			}
			return out, err
		})
	if err != nil {
		return nil, err
	}
	return downloadablePageOf(p, w), nil
}

// downloadablePageOf is the GraphQL page of a window of downloadables.
func downloadablePageOf(p storage.Paged[*model.Downloadable], w storage.Window) *model.DownloadablePage {
	return &model.DownloadablePage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}
}
