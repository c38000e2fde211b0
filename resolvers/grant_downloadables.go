package resolvers

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// Downloadables benefits (upstream's BenefitDownloadablesService): a grant gives its holder
// (the customer, or the member holding a seat) one downloadables row per active file of the
// benefit, a revoke takes them back, and editing the benefit's files updates the holders of
// granted grants at once. Archiving a file keeps it for those who have it while new holders
// do not get it; removing a file from the list takes it from everyone.

// downloadablesProperties mirrors BenefitDownloadablesProperties; archived is keyed by file id.
type downloadablesProperties struct {
	Files    []uuid.UUID     `json:"files"`
	Archived map[string]bool `json:"archived"`
}

// downloadablesOf decodes a downloadables benefit's properties; they were validated when the
// benefit was stored, so a decoding failure leaves no files rather than failing a grant.
func downloadablesOf(b *storage.Benefit) downloadablesProperties {
	var p downloadablesProperties
	_ = json.Unmarshal(b.Properties, &p)
	return p
}

// active lists the files new holders receive: the benefit's files that are not archived, in
// the benefit's order.
func (p downloadablesProperties) active() []uuid.UUID {
	out := make([]uuid.UUID, 0, len(p.Files))
	for _, id := range p.Files {
		if !p.Archived[id.String()] {
			out = append(out, id)
		}
	}
	return out
}

// grantDownloadables grants the grant's holder the benefit's active files that exist in the
// organization and returns the grant's properties, BenefitGrantDownloadablesProperties
// {"files": [granted file ids]}. Files the holder had are granted again with their counts.
func (r *Resolver) grantDownloadables(ctx context.Context, tx *sqlx.Tx, g *storage.BenefitGrant, b *storage.Benefit, now time.Time) (storage.RawJSON, error) {
	granted, err := storage.GrantDownloadables(ctx, tx, storage.DownloadableHolder{OrganizationID: g.OrganizationID,
		BenefitID: b.ID, CustomerID: g.CustomerID, MemberID: g.MemberID}, downloadablesOf(b).active(), now)
	if err != nil {
		return nil, err
	}
	files := make([]string, len(granted))
	for i, id := range granted {
		files[i] = id.String()
	}
	return json.Marshal(map[string][]string{"files": files})
}

// refreshDownloadables applies an updated downloadables benefit's files to the holders of its
// granted grants, in the transaction of the update, and announces each grant whose files
// changed with benefit_grant.updated. Other benefit types are left alone.
func (r *Resolver) refreshDownloadables(ctx context.Context, tx *sqlx.Tx, b *storage.Benefit) error {
	if b.Type != storage.BenefitTypeDownloadables {
		return nil
	}
	now, err := r.clockFor(ctx, tx, b.OrganizationID)
	if err != nil {
		return err
	}
	p := downloadablesOf(b)
	changed, err := storage.RefreshBenefitDownloadables(ctx, tx, b.OrganizationID, b.ID, p.Files, p.active(), now)
	if err != nil {
		return err
	}
	for _, id := range changed {
		if err := r.emit(ctx, tx, b.OrganizationID, "benefit_grant.updated", id); err != nil {
			return err
		}
	}
	return nil
}
