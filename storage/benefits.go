package storage

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Benefit is something granted to customers who buy a product: license keys, downloads,
// Discord roles, … Its type-specific settings live in Properties, spelled as the contract's
// Benefit*Properties schemas.
type Benefit struct {
	ID             uuid.UUID         `db:"id"`
	CreatedAt      time.Time         `db:"created_at"`
	ModifiedAt     *time.Time        `db:"modified_at"`
	DeletedAt      *time.Time        `db:"deleted_at"`
	OrganizationID uuid.UUID         `db:"organization_id"`
	Type           BenefitType       `db:"type"`
	Description    string            `db:"description"`
	Visibility     BenefitVisibility `db:"visibility"`
	Selectable     bool              `db:"selectable"`
	Deletable      bool              `db:"deletable"`
	Properties     RawJSON           `db:"properties"`
	Metadata       JSONMap           `db:"metadata"`
}

// IsDeleted reports a soft-deleted benefit.
func (b *Benefit) IsDeleted() bool { return b.DeletedAt != nil }

// VisibilityConfigurable is true for every type a seller may hide from the portal.
func (b *Benefit) VisibilityConfigurable() bool { return b.Type != BenefitTypeMeterCredit }

const benefitColumns = `id, created_at, modified_at, deleted_at, organization_id, type, description,
	visibility, selectable, deletable, properties, metadata`

const benefitColumnsB = `b.id, b.created_at, b.modified_at, b.deleted_at, b.organization_id, b.type,
	b.description, b.visibility, b.selectable, b.deletable, b.properties, b.metadata`

// BenefitWrite holds a benefit's writable fields.
type BenefitWrite struct {
	Type        BenefitType
	Description string
	Visibility  BenefitVisibility
	Properties  RawJSON
	Metadata    JSONMap
}

// CreateBenefit inserts a benefit. The objects its properties name must be the
// organization's (see benefit_refs.go); otherwise it inserts nothing and returns a
// *RefError.
func CreateBenefit(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, w BenefitWrite) (*Benefit, error) {
	var b Benefit
	err := sqlx.GetContext(ctx, q, &b, benefitRefsCTE("$2::text", "$5::jsonb", "$1")+`
		INSERT INTO benefits (organization_id, type, description, visibility, properties, metadata)
		SELECT $1, $2, $3, $4, $5, $6 WHERE `+benefitRefsOK("$1")+` RETURNING `+benefitColumns,
		orgID, w.Type, w.Description, w.Visibility, w.Properties, w.Metadata)
	if err = mapErr(err); errors.Is(err, ErrNotFound) {
		return nil, missingBenefitRef(ctx, q, orgID, w.Type, w.Properties)
	}
	return &b, err
}

// BenefitUpdate is a change to a benefit: each set field writes its column, the others keep
// what they hold.
type BenefitUpdate struct {
	Description Omittable[string]
	Visibility  Omittable[BenefitVisibility]
	Properties  Omittable[RawJSON]
	Metadata    Omittable[JSONMap]
}

func (u BenefitUpdate) assignments() []assignment {
	return []assignment{u.Description.to("description"), u.Visibility.to("visibility"),
		u.Properties.to("properties"), u.Metadata.to("metadata")}
}

// UpdateBenefit writes the set fields of u to a live benefit of the given organizations.
// When u replaces the properties, the objects they name must be the benefit's
// organization's (see benefit_refs.go); otherwise nothing is written and the error is a
// *RefError.
func UpdateBenefit(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, u BenefitUpdate) (*Benefit, error) {
	props, _ := u.Properties.Get()
	sets, args := setClause("modified_at = now()", u, []any{id, pq.Array(orgs), props})
	const (
		typ = "(SELECT type FROM benefits WHERE id = $1)"
		org = "(SELECT organization_id FROM benefits WHERE id = $1)"
	)
	var b Benefit
	err := sqlx.GetContext(ctx, q, &b, benefitRefsCTE(typ, "$3::jsonb", org)+`
		UPDATE benefits SET `+sets+`
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL
			AND `+benefitRefsOK("benefits.organization_id")+` RETURNING `+benefitColumns, args...)
	if err = mapErr(err); !errors.Is(err, ErrNotFound) {
		return &b, err
	}
	cur, err := GetBenefit(ctx, q, orgs, id)
	if err != nil {
		return nil, err
	}
	return nil, missingBenefitRef(ctx, q, cur.OrganizationID, cur.Type, props)
}

// DeleteBenefit soft-deletes a deletable benefit and detaches it from products.
func DeleteBenefit(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Benefit, error) {
	var b Benefit
	err := sqlx.GetContext(ctx, q, &b, `UPDATE benefits SET deleted_at = now(), modified_at = now()
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL RETURNING `+benefitColumns,
		id, pq.Array(orgs))
	if err != nil {
		return nil, mapErr(err)
	}
	_, err = q.ExecContext(ctx, `DELETE FROM product_benefits WHERE benefit_id = $1`, id)
	return &b, mapErr(err)
}

// GetBenefit reads a live benefit of the given organizations.
func GetBenefit(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Benefit, error) {
	var b Benefit
	err := sqlx.GetContext(ctx, q, &b, `SELECT `+benefitColumns+` FROM benefits
		WHERE id = $1 AND organization_id = ANY($2) AND deleted_at IS NULL`, id, pq.Array(orgs))
	return &b, mapErr(err)
}

// CountBenefits counts how many of ids are live benefits of the organization.
func CountBenefits(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, ids []uuid.UUID) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM benefits
		WHERE id = ANY($1) AND organization_id = $2 AND deleted_at IS NULL`, pq.Array(ids), orgID)
	return n, mapErr(err)
}

// BenefitListFilter narrows a benefit list.
type BenefitListFilter struct {
	Types    []BenefitType
	Query    *string
	Metadata map[string][]string
}

// BenefitSortColumns maps the sort properties of benefit lists to SQL over benefitList's
// alias b.
var BenefitSortColumns = map[string]string{
	"created_at":  "b.created_at",
	"description": "b.description",
	"type":        "b.type",
}

// ListBenefits returns one window of live benefits, newest first unless sorted otherwise,
// with the total count.
func ListBenefits(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f BenefitListFilter, sorts []Sort, w Window) (Paged[*Benefit], error) {
	return listWindow[*Benefit](ctx, q, benefitList(orgs, f, sorts), w)
}

// benefitList is the benefit list query.
func benefitList(orgs []uuid.UUID, f BenefitListFilter, sorts []Sort) listSQL {
	w := orgFilters("b.organization_id", orgs, "b.deleted_at IS NULL")
	anyOf(w, "b.type", f.Types)
	w.contains("b.description ILIKE $%d", f.Query)
	w.metadata("b.metadata", f.Metadata)
	return listSQL{Columns: benefitColumnsB, From: "benefits b", ID: "b.id", Where: w.where, Args: w.args,
		Sorts: sorts, Default: []Sort{{Column: "b.created_at", Desc: true}}}
}

// BenefitsByIDs loads benefits for a dataloader, one per key in key order, nil where missing.
// Deleted benefits are included: their grants still name them.
func BenefitsByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*Benefit, error) {
	var rows []*Benefit
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+benefitColumns+` FROM benefits
		WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(r *Benefit) uuid.UUID { return r.ID }), nil
}
