package rest

import (
	"net/http"
)

// eventRoutes serve usage events: ingestion, the volume path of usage-based billing.
func eventRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/v1/events/ingest", Operation: "IngestEvents", Field: "ingestEvents",
			Body: &Body{Var: "input", Schema: eventsIngest()}},
	}
}

// eventsIngest is EventsIngest: a list of events, each one of two models told apart by the
// field naming the customer.
func eventsIngest() Object {
	return Object{Name: "EventsIngest", Fields: []Field{
		{Name: "events", Schema: List{Items: Union{Members: []Schema{
			eventCreate("EventCreateCustomer",
				Field{Name: "customer_id", Schema: UUID4{}, Required: true},
				Field{Name: "member_id", Schema: Nullable{Schema: UUID4{}}}),
			eventCreate("EventCreateExternalCustomer",
				Field{Name: "external_customer_id", Schema: String{}, Required: true},
				Field{Name: "external_member_id", Schema: Nullable{Schema: String{}}}),
		}}}, Required: true},
	}}
}

// eventCreate is the fields both event models share, then the model's own.
func eventCreate(name string, own ...Field) Object {
	return Object{Name: name, Fields: append([]Field{
		{Name: "timestamp", Schema: DateTime{Aware: true, Past: true}},
		{Name: "name", Schema: String{MaxLength: 128}, Required: true},
		{Name: "organization_id", Schema: Nullable{Schema: UUID4{}}},
		{Name: "external_id", Schema: Nullable{Schema: String{}}},
		{Name: "parent_id", Schema: Nullable{Schema: String{}}},
		{Name: "metadata", Schema: eventMetadata()},
	}, own...)}
}

// eventMetadata is EventMetadataInput: values of 1–500 characters, integers, numbers or
// booleans, with no limit on keys (unlike other metadata), and the structured _cost and
// _llm keys. Metadata is stored as sent, so the structured keys' fields keep their wire
// names instead of becoming GraphQL names.
func eventMetadata() Map {
	return Map{
		Values: Union{Members: []Schema{String{MinLength: 1, MaxLength: 500}, Int{}, Float{}, Bool{}}},
		Known: []Field{
			{Name: "_cost", Schema: Object{Name: "CostMetadata", Fields: []Field{
				{Name: "amount", Schema: Decimal{MaxDigits: 17, DecimalPlaces: 12}, Required: true},
				{Name: "currency", Schema: Pattern{Literal: "usd"}, Required: true},
			}}},
			{Name: "_llm", Schema: Object{Name: "LLMMetadata", Fields: []Field{
				{Name: "vendor", Schema: String{}, Required: true},
				{Name: "model", Schema: String{}, Required: true},
				{Name: "prompt", Schema: Nullable{Schema: String{}}},
				{Name: "response", Schema: Nullable{Schema: String{}}},
				{Name: "input_tokens", Var: "input_tokens", Schema: Int{}, Required: true},
				{Name: "cached_input_tokens", Var: "cached_input_tokens", Schema: Int{}},
				{Name: "output_tokens", Var: "output_tokens", Schema: Int{}, Required: true},
				{Name: "total_tokens", Var: "total_tokens", Schema: Int{}, Required: true},
			}}},
		},
	}
}
