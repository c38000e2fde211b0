package rest

import (
	"net/http"

	"till/rest/fastapi"
)

// eventRoutes serve usage events: ingestion, the volume path of usage-based billing.
func eventRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/v1/events/ingest", Operation: "IngestEvents", Field: "ingestEvents",
			Body: &fastapi.Body{Var: "input", Schema: eventsIngest()}},
	}
}

// eventsIngest is EventsIngest: a list of events, each one of two models told apart by the
// field naming the customer.
func eventsIngest() fastapi.Object {
	return fastapi.Object{Name: "EventsIngest", Fields: []fastapi.Field{
		{Name: "events", Schema: fastapi.List{Items: fastapi.Union{Members: []fastapi.Schema{
			eventCreate("EventCreateCustomer",
				fastapi.Field{Name: "customer_id", Schema: fastapi.UUID4{}, Required: true},
				fastapi.Field{Name: "member_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}}),
			eventCreate("EventCreateExternalCustomer",
				fastapi.Field{Name: "external_customer_id", Schema: fastapi.String{}, Required: true},
				fastapi.Field{Name: "external_member_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}}),
		}}}, Required: true},
	}}
}

// eventCreate is the fields both event models share, then the model's own.
func eventCreate(name string, own ...fastapi.Field) fastapi.Object {
	return fastapi.Object{Name: name, Fields: append([]fastapi.Field{
		{Name: "timestamp", Schema: fastapi.DateTime{Aware: true, Past: true}},
		{Name: "name", Schema: fastapi.String{MaxLength: 128}, Required: true},
		{Name: "organization_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
		{Name: "external_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "parent_id", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "metadata", Schema: eventMetadata()},
	}, own...)}
}

// eventMetadata is EventMetadataInput: values of 1–500 characters, integers, numbers or
// booleans, with no limit on keys (unlike other metadata), and the structured _cost and
// _llm keys. Metadata is stored as sent, so the structured keys' fields keep their wire
// names instead of becoming GraphQL names.
func eventMetadata() fastapi.Map {
	return fastapi.Map{
		Values: fastapi.Union{Members: []fastapi.Schema{fastapi.String{MinLength: 1, MaxLength: 500}, fastapi.Int{}, fastapi.Float{}, fastapi.Bool{}}},
		Known: []fastapi.Field{
			{Name: "_cost", Schema: fastapi.Object{Name: "CostMetadata", Fields: []fastapi.Field{
				{Name: "amount", Schema: fastapi.Decimal{MaxDigits: 17, DecimalPlaces: 12}, Required: true},
				{Name: "currency", Schema: fastapi.Pattern{Literal: "usd"}, Required: true},
			}}},
			{Name: "_llm", Schema: fastapi.Object{Name: "LLMMetadata", Fields: []fastapi.Field{
				{Name: "vendor", Schema: fastapi.String{}, Required: true},
				{Name: "model", Schema: fastapi.String{}, Required: true},
				{Name: "prompt", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
				{Name: "response", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
				{Name: "input_tokens", Var: "input_tokens", Schema: fastapi.Int{}, Required: true},
				{Name: "cached_input_tokens", Var: "cached_input_tokens", Schema: fastapi.Int{}},
				{Name: "output_tokens", Var: "output_tokens", Schema: fastapi.Int{}, Required: true},
				{Name: "total_tokens", Var: "total_tokens", Schema: fastapi.Int{}, Required: true},
			}}},
		},
	}
}
