package storage

// eventCostSQL is the cost of the event aliased e as numeric, NULL when it carries none: its
// _cost.amount in cents, a JSON number or a decimal string as /v1 accepts it. Ingestion
// through GraphQL stores the amount without checking its type, so anything else (a word, an
// exponent, more digits than a cost has) counts as no cost rather than failing every read of
// the meter. A number is bounded as meterValueBound bounds values, so the float8 a sum is
// read as stays finite. It holds no parameters, so it can be repeated freely.
const eventCostSQL = `(CASE jsonb_typeof(e.metadata -> '_cost' -> 'amount')
		WHEN 'number' THEN least(greatest((e.metadata -> '_cost' ->> 'amount')::numeric, -1e280), 1e280)
		WHEN 'string' THEN CASE WHEN (e.metadata -> '_cost' ->> 'amount') ~ '^[+-]?([0-9]{1,30}(\.[0-9]{0,30})?|\.[0-9]{1,30})$'
			THEN (e.metadata -> '_cost' ->> 'amount')::numeric END
	END)`
