package resolvers

import (
	"encoding/json"
	"fmt"

	"till/graph/model"
	"till/storage"
)

// A meter stores its filter and aggregation as upstream's JSON (so filters written for the
// upstream API round-trip byte for byte); GraphQL reads them as typed trees, built here from
// the stored JSON on each read. Nothing is validated on the way out: what was stored passed
// the rules when it was written.

// meterFilterOf decodes a stored filter into its GraphQL group.
func meterFilterOf(raw storage.RawJSON) (*model.MeterFilterGroup, error) {
	var f storage.MeterFilter
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("stored meter filter: %w", err)
	}
	return meterFilterGroup(&f)
}

func meterFilterGroup(f *storage.MeterFilter) (*model.MeterFilterGroup, error) {
	g := &model.MeterFilterGroup{Conjunction: model.MeterFilterConjunction(f.Conjunction),
		Clauses: make([]model.MeterFilterCondition, len(f.Clauses))}
	for i, c := range f.Clauses {
		if c.Group != nil {
			sub, err := meterFilterGroup(c.Group)
			if err != nil {
				return nil, err
			}
			g.Clauses[i] = sub
			continue
		}
		value, err := json.Marshal(c.Value)
		if err != nil {
			return nil, fmt.Errorf("stored meter filter value: %w", err)
		}
		g.Clauses[i] = &model.MeterFilterComparison{Property: c.Property,
			Operator: model.MeterFilterOperator(c.Operator), Value: value}
	}
	return g, nil
}

// meterAggregatorOf decodes a stored aggregation into the union member of its function.
func meterAggregatorOf(raw storage.RawJSON) (model.MeterAggregator, error) {
	var a storage.MeterAggregation
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("stored meter aggregation: %w", err)
	}
	fn := model.MeterAggregationFunction(a.Func)
	switch a.Func {
	case storage.AggregationCount:
		return &model.MeterCountAggregation{Func: fn}, nil
	case storage.AggregationUnique:
		return &model.MeterUniqueAggregation{Func: fn, Property: a.Property}, nil
	default:
		return &model.MeterPropertyAggregation{Func: fn, Property: a.Property}, nil
	}
}
