package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/storage"
)

// meterSorts whitelists the meter list's sorting criteria (upstream's MeterSortProperty).
var meterSorts = map[string]string{"name": "name", "created_at": "created_at"}

// minMeterNameLength is upstream's MeterCreate.name min_length.
const minMeterNameLength = 3

// meterFields is a meter's descriptive state, validated as a whole so a create and an
// update (the stored meter with the update's fields laid over it) obey the same rules.
type meterFields struct {
	Name             string
	Unit             string
	CustomLabel      *string
	CustomMultiplier *int
	Metadata         storage.JSONMap
}

// check validates the fields; a custom unit needs its label and multiplier, other units
// drop them so a meter never shows a label its unit does not use.
func (f *meterFields) check() error {
	if len([]rune(strings.TrimSpace(f.Name))) < minMeterNameLength {
		return Invalid("string_too_short", "String should have at least 3 characters", f.Name, "input", "name")
	}
	if f.Unit != string(model.MeterUnitCustom) {
		f.CustomLabel, f.CustomMultiplier = nil, nil
		return checkMetadata(f.Metadata, "input", "metadata")
	}
	if f.CustomLabel == nil || strings.TrimSpace(*f.CustomLabel) == "" {
		return Invalid("missing", "A custom unit needs a label.", nil, "input", "customLabel")
	}
	if f.CustomMultiplier == nil {
		return Invalid("missing", "A custom unit needs a multiplier.", nil, "input", "customMultiplier")
	}
	if *f.CustomMultiplier < 1 {
		return Invalid("greater_than", "Input should be greater than 0", *f.CustomMultiplier, "input", "customMultiplier")
	}
	return checkMetadata(f.Metadata, "input", "metadata")
}

// meterFilterJSON validates a filter input and returns it in upstream's stored shape. The
// input is first laid out as that JSON so storage's parser, which also reads stored filters,
// is the one judge of what a filter may be.
func meterFilterJSON(in *model.MeterFilterInput) (storage.RawJSON, error) {
	tree, err := filterTree(in.Conjunction, in.Clauses, []any{"input", "filter"})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return nil, err
	}
	f, err := storage.ParseMeterFilter(b)
	if err != nil {
		return nil, meterShapeError(err, "filter")
	}
	out, err := json.Marshal(f)
	return storage.RawJSON(out), err
}

// filterTree turns the clause inputs into upstream's JSON, refusing a clause that is both a
// comparison and a group, which GraphQL's lack of input unions cannot rule out.
func filterTree(conjunction model.MeterFilterConjunction, clauses []*model.MeterFilterClauseInput, at []any) (map[string]any, error) {
	items := make([]any, len(clauses))
	for i, c := range clauses {
		loc := append(append([]any{}, at...), "clauses", i)
		group := c.Conjunction != nil || c.Clauses != nil
		if group && (c.Property != nil || c.Operator != nil || c.Value != nil) {
			return nil, Invalid("value_error",
				"A clause is either a comparison (property, operator, value) or a group (conjunction, clauses), not both.", nil, loc...)
		}
		if group {
			if c.Conjunction == nil {
				return nil, Invalid("missing", "Field required", nil, append(loc, "conjunction")...)
			}
			sub, err := filterTree(*c.Conjunction, c.Clauses, loc)
			if err != nil {
				return nil, err
			}
			items[i] = sub
			continue
		}
		cmp := map[string]any{"property": deref(c.Property), "operator": ""}
		if c.Operator != nil {
			cmp["operator"] = string(*c.Operator)
		}
		if len(c.Value) > 0 {
			cmp["value"] = json.RawMessage(c.Value)
		}
		items[i] = cmp
	}
	return map[string]any{"conjunction": string(conjunction), "clauses": items}, nil
}

// meterAggregationJSON validates an aggregation input and returns it in upstream's shape.
func meterAggregationJSON(in *model.MeterAggregationInput) (storage.RawJSON, error) {
	a := storage.MeterAggregation{Func: string(in.Func), Property: deref(in.Property)}
	if err := a.Validate(); err != nil {
		return nil, meterShapeError(err, "aggregation")
	}
	b, err := json.Marshal(a)
	return storage.RawJSON(b), err
}

// meterShapeError places a filter or aggregation rule's failure under the input field.
func meterShapeError(err error, field string) error {
	var fe *storage.MeterFilterError
	if !errors.As(err, &fe) {
		return err
	}
	return Invalid("value_error", fe.Msg, nil, append([]any{"input", field}, fe.Path...)...)
}

// createMeter validates and stores a meter.
func (r *Resolver) createMeter(ctx context.Context, in model.MeterCreateInput) (*storage.Meter, error) {
	orgID, err := targetOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	f := meterFields{Name: in.Name, Unit: string(model.MeterUnitScalar), CustomLabel: in.CustomLabel,
		CustomMultiplier: in.CustomMultiplier, Metadata: in.Metadata}
	if in.Unit != nil {
		f.Unit = string(*in.Unit)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	filter, err := meterFilterJSON(in.Filter)
	if err != nil {
		return nil, err
	}
	aggregation, err := meterAggregationJSON(in.Aggregation)
	if err != nil {
		return nil, err
	}
	return storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.Meter, error) {
		return storage.InsertMeter(ctx, q, orgID, storage.MeterWrite{Name: f.Name, Unit: f.Unit,
			CustomLabel: f.CustomLabel, CustomMultiplier: f.CustomMultiplier, Filter: filter,
			Aggregation: aggregation, Metadata: f.Metadata})
	})
}

// updateMeter lays the given fields over the stored meter and validates the result. Once
// the meter's usage has been billed its filter and aggregation are frozen, as upstream
// freezes them: invoices already sent must keep meaning what they meant.
func (r *Resolver) updateMeter(ctx context.Context, in model.MeterUpdateInput) (*storage.Meter, error) {
	var out *storage.Meter
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		cur, err := storage.GetMeter(ctx, tx, organizations(ctx), in.ID)
		if err != nil {
			return notFoundOr(err, "")
		}
		u, err := r.meterUpdate(ctx, tx, cur, in)
		if err != nil {
			return err
		}
		if out, err = storage.UpdateMeter(ctx, tx, organizations(ctx), cur.ID, u); err != nil {
			return err
		}
		if in.IsArchived != nil {
			out, err = setMeterArchived(ctx, tx, cur.ID, *in.IsArchived, "input", "isArchived")
		}
		return err
	})
	return out, err
}

// meterUpdate validates an update against the stored meter and returns the change to write.
func (r *Resolver) meterUpdate(ctx context.Context, tx *sqlx.Tx, cur *storage.Meter, in model.MeterUpdateInput) (storage.MeterUpdate, error) {
	f := meterFields{Name: cur.Name, Unit: cur.Unit, CustomLabel: cur.CustomLabel,
		CustomMultiplier: cur.CustomMultiplier, Metadata: cur.Metadata}
	if in.Name != nil {
		f.Name = *in.Name
	}
	if in.Unit != nil {
		f.Unit = string(*in.Unit)
	}
	overlay(&f.CustomLabel, in.CustomLabel.ValueOK)
	overlay(&f.CustomMultiplier, in.CustomMultiplier.ValueOK)
	if in.Metadata != nil {
		f.Metadata = in.Metadata
	}
	if err := f.check(); err != nil {
		return storage.MeterUpdate{}, err
	}
	u := storage.MeterUpdate{Name: storage.Set(f.Name), Unit: storage.Set(f.Unit), CustomLabel: storage.Set(f.CustomLabel),
		CustomMultiplier: storage.Set(f.CustomMultiplier), Metadata: storage.Set(f.Metadata)}
	if in.Filter == nil && in.Aggregation == nil {
		return u, nil
	}
	billed, err := storage.MeterBilled(ctx, tx, cur.ID)
	if err != nil {
		return storage.MeterUpdate{}, err
	}
	for _, c := range []struct {
		given bool
		field string
		dst   *storage.Omittable[storage.RawJSON]
		value func() (storage.RawJSON, error)
	}{
		{in.Filter != nil, "filter", &u.Filter, func() (storage.RawJSON, error) { return meterFilterJSON(in.Filter) }},
		{in.Aggregation != nil, "aggregation", &u.Aggregation, func() (storage.RawJSON, error) { return meterAggregationJSON(in.Aggregation) }},
	} {
		if !c.given {
			continue
		}
		if billed {
			return storage.MeterUpdate{}, Invalid("forbidden", "This field can't be updated because the meter is already aggregating events.",
				nil, "input", c.field)
		}
		v, err := c.value()
		if err != nil {
			return storage.MeterUpdate{}, err
		}
		*c.dst = storage.Set(v)
	}
	return u, nil
}

// archiveMeter archives a meter; archiving an archived meter keeps its first archive time.
func (r *Resolver) archiveMeter(ctx context.Context, id uuid.UUID) (*storage.Meter, error) {
	var out *storage.Meter
	err := storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		cur, err := storage.GetMeter(ctx, tx, organizations(ctx), id)
		if err != nil {
			return notFoundOr(err, "")
		}
		out, err = setMeterArchived(ctx, tx, cur.ID, true, "id")
		return err
	})
	return out, err
}

// setMeterArchived archives or unarchives a meter of the caller's organizations. A meter
// still used by a live metered price or a meter credit benefit stays live, as upstream
// refuses: those would keep billing or crediting usage nobody sees.
func setMeterArchived(ctx context.Context, tx *sqlx.Tx, id uuid.UUID, archived bool, loc ...any) (*storage.Meter, error) {
	if archived {
		prices, benefits, err := storage.MeterInUse(ctx, tx, id)
		if err != nil {
			return nil, notFoundOr(err, "")
		}
		if prices {
			return nil, Invalid("value_error", "Cannot archive meter that is still attached to active products", true, loc...)
		}
		if benefits {
			return nil, Invalid("value_error", "Cannot archive meter that is still referenced by active benefits", true, loc...)
		}
	}
	m, err := storage.SetMeterArchived(ctx, tx, organizations(ctx), id, archived)
	return m, notFoundOr(err, "")
}

// meter reads one meter of the caller's organizations.
func (r *Resolver) meter(ctx context.Context, id uuid.UUID) (*storage.Meter, error) {
	m, err := storage.GetMeter(ctx, r.db, organizations(ctx), id)
	return m, notFoundOr(err, "")
}

// metersPage lists meters, by name unless sorted otherwise, as upstream.
func (r *Resolver) metersPage(ctx context.Context, a listArgs, f *model.MeterListFilter) (*model.MeterPage, error) {
	var q storage.MeterListQuery
	if f != nil {
		q = storage.MeterListQuery{Query: f.Query, IsArchived: f.IsArchived, Metadata: metadataOf(f.Metadata)}
	}
	p, w, err := rootWindow(ctx, a, meterSorts, func(sorts []storage.Sort, w storage.Window) (storage.Paged[*storage.Meter], error) {
		return storage.ListMeters(ctx, r.db, organizations(ctx), q, sorts, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.MeterPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}
