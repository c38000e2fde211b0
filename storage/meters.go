package storage

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Meter turns usage events into billable quantities: a filter over events and an
// aggregation (count, sum, max, min, avg, unique over a metadata property). Filter and
// Aggregation hold upstream's JSON shapes (see MeterFilter and MeterAggregation).
type Meter struct {
	ID               uuid.UUID  `db:"id"`
	CreatedAt        time.Time  `db:"created_at"`
	ModifiedAt       *time.Time `db:"modified_at"`
	OrganizationID   uuid.UUID  `db:"organization_id"`
	Name             string     `db:"name"`
	Unit             string     `db:"unit"`
	CustomLabel      *string    `db:"custom_label"`
	CustomMultiplier *int       `db:"custom_multiplier"`
	Filter           RawJSON    `db:"filter"`
	Aggregation      RawJSON    `db:"aggregation"`
	ArchivedAt       *time.Time `db:"archived_at"`
	Metadata         JSONMap    `db:"metadata"`
}

const meterColumns = `id, created_at, modified_at, organization_id, name, unit, custom_label,
	custom_multiplier, filter, aggregation, archived_at, metadata`

// MeterWrite holds a meter's writable fields; filter and aggregation are validated by the
// caller (ParseMeterFilter, ParseMeterAggregation).
type MeterWrite struct {
	Name             string
	Unit             string
	CustomLabel      *string
	CustomMultiplier *int
	Filter           RawJSON
	Aggregation      RawJSON
	Metadata         JSONMap
}

// CreateMeter stores a scalar meter with no metadata; filter and aggregation are validated
// by the caller.
func CreateMeter(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, name string, filter, aggregation RawJSON) (*Meter, error) {
	return InsertMeter(ctx, q, orgID, MeterWrite{Name: name, Unit: "scalar", Filter: filter, Aggregation: aggregation})
}

// InsertMeter stores a meter of an organization.
func InsertMeter(ctx context.Context, q sqlx.ExtContext, orgID uuid.UUID, w MeterWrite) (*Meter, error) {
	if w.Unit == "" {
		w.Unit = "scalar"
	}
	var m Meter
	err := sqlx.GetContext(ctx, q, &m, `INSERT INTO meters (organization_id, name, unit, custom_label,
		custom_multiplier, filter, aggregation, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+meterColumns,
		orgID, w.Name, w.Unit, w.CustomLabel, w.CustomMultiplier, w.Filter, w.Aggregation, w.Metadata)
	return &m, mapErr(err)
}

// MeterUpdate is a change to a meter: each set field writes its column, the others keep what
// they hold.
type MeterUpdate struct {
	Name             Omittable[string]
	Unit             Omittable[string]
	CustomLabel      Omittable[*string]
	CustomMultiplier Omittable[*int]
	Filter           Omittable[RawJSON]
	Aggregation      Omittable[RawJSON]
	Metadata         Omittable[JSONMap]
}

func (u MeterUpdate) assignments() []assignment {
	return []assignment{u.Name.to("name"), u.Unit.to("unit"), u.CustomLabel.to("custom_label"),
		u.CustomMultiplier.to("custom_multiplier"), u.Filter.to("filter"), u.Aggregation.to("aggregation"),
		u.Metadata.to("metadata")}
}

// UpdateMeter writes the set fields of u to a meter of the given organizations.
func UpdateMeter(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, u MeterUpdate) (*Meter, error) {
	sets, args := setClause("modified_at = now()", u, []any{id, pq.Array(orgs)})
	var m Meter
	err := sqlx.GetContext(ctx, q, &m, `UPDATE meters SET `+sets+`
		WHERE id = $1 AND organization_id = ANY($2) RETURNING `+meterColumns, args...)
	return &m, mapErr(err)
}

// SetMeterArchived archives a meter (keeping the first archive time) or unarchives it.
func SetMeterArchived(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID, archived bool) (*Meter, error) {
	var m Meter
	err := sqlx.GetContext(ctx, q, &m, `UPDATE meters SET modified_at = now(),
		archived_at = CASE WHEN $3 THEN coalesce(archived_at, now()) END
		WHERE id = $1 AND organization_id = ANY($2) RETURNING `+meterColumns, id, pq.Array(orgs), archived)
	return &m, mapErr(err)
}

// MeterInUse tells whether a live metered price of a live product or a live meter_credit
// benefit of the meter's organization still points at the meter, which upstream forbids
// archiving. Only the meter's own organization counts: another's reference (which writes
// refuse) must never keep the owner from archiving.
func MeterInUse(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (prices, benefits bool, err error) {
	err = q.QueryRowxContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM product_prices pp JOIN products p ON p.id = pp.product_id
			WHERE pp.meter_id = $1 AND pp.organization_id = m.organization_id AND NOT pp.is_archived AND NOT p.is_archived),
		EXISTS (SELECT 1 FROM benefits b WHERE b.type = 'meter_credit' AND b.deleted_at IS NULL
			AND b.organization_id = m.organization_id AND b.properties ->> 'meter_id' = $1::text)
		FROM meters m WHERE m.id = $1`, id).Scan(&prices, &benefits)
	return prices, benefits, mapErr(err)
}

// GetMeter reads a meter of the given organizations.
func GetMeter(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, id uuid.UUID) (*Meter, error) {
	var m Meter
	err := sqlx.GetContext(ctx, q, &m, `SELECT `+meterColumns+` FROM meters
		WHERE id = $1 AND organization_id = ANY($2)`, id, pq.Array(orgs))
	return &m, mapErr(err)
}

// GetMetersOf reads meters of the given organizations, one per id in order; ErrNotFound
// when any id is not a meter of theirs, so another organization's meter reads as missing.
func GetMetersOf(ctx context.Context, q sqlx.ExtContext, orgs, ids []uuid.UUID) ([]*Meter, error) {
	var rows []*Meter
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+meterColumns+` FROM meters
		WHERE id = ANY($1) AND organization_id = ANY($2)`, pq.Array(ids), pq.Array(orgs)); err != nil {
		return nil, mapErr(err)
	}
	out := inKeyOrder(ids, rows, func(r *Meter) uuid.UUID { return r.ID })
	for _, m := range out {
		if m == nil {
			return nil, ErrNotFound
		}
	}
	return out, nil
}

// MetersByIDs loads meters for a dataloader, one per key in key order, nil where missing.
func MetersByIDs(ctx context.Context, q sqlx.ExtContext, ids []uuid.UUID) ([]*Meter, error) {
	var rows []*Meter
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT `+meterColumns+` FROM meters
		WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return nil, mapErr(err)
	}
	return inKeyOrder(ids, rows, func(r *Meter) uuid.UUID { return r.ID }), nil
}

// MeterListQuery narrows a meter list as upstream's list endpoint does.
type MeterListQuery struct {
	Query      *string
	IsArchived *bool
	Metadata   map[string][]string
}

// ListMeters returns one window of the meters of the given organizations, with the total
// count; the default order is by name, as upstream's.
func ListMeters(ctx context.Context, q sqlx.ExtContext, orgs []uuid.UUID, f MeterListQuery, sorts []Sort, w Window) (Paged[*Meter], error) {
	c := orgFilters("organization_id", orgs)
	c.contains("name ILIKE $%d", f.Query)
	if f.IsArchived != nil {
		if *f.IsArchived {
			c.where = append(c.where, "archived_at IS NOT NULL")
		} else {
			c.where = append(c.where, "archived_at IS NULL")
		}
	}
	c.metadata("metadata", f.Metadata)
	return listWindow[*Meter](ctx, q, listSQL{Columns: meterColumns, From: "meters", ID: "id", Where: c.where,
		Args: c.args, Sorts: sorts, Default: []Sort{{Column: "name"}}}, w)
}

// MeterBilled tells whether the meter's usage has been billed: a billing entry exists for a
// price it meters. From then on its filter and aggregation must keep their meaning.
func MeterBilled(ctx context.Context, q sqlx.ExtContext, id uuid.UUID) (bool, error) {
	var billed bool
	err := sqlx.GetContext(ctx, q, &billed, `SELECT EXISTS (SELECT 1 FROM billing_entries be
		JOIN product_prices pp ON pp.id = be.product_price_id WHERE pp.meter_id = $1)`, id)
	return billed, mapErr(err)
}
