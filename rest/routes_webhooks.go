package rest

import (
	"net/http"

	"till/resolvers"
)

// webhookRoutes serve the organization's webhook endpoints: list, create and delete. Their
// paths have no trailing slash, unlike most upstream lists; the router answers the other
// spelling with a 307.
func webhookRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/webhooks/endpoints", Operation: "ListWebhookEndpoints", Field: "webhookEndpoints",
			Params: []Param{Page(), Limit(), Filter("organization_id", "organizationId", UUID4{})}},
		{Method: http.MethodPost, Path: "/v1/webhooks/endpoints", Operation: "CreateWebhookEndpoint",
			Field: "createWebhookEndpoint", Status: http.StatusCreated, Body: &Body{Var: "input", Schema: webhookEndpointCreate()}},
		{Method: http.MethodDelete, Path: "/v1/webhooks/endpoints/{id}", Operation: "DeleteWebhookEndpoint",
			Params: []Param{PathUUID4("id", "id")}, Status: http.StatusNoContent},
	}
}

// webhookEndpointCreate is WebhookEndpointCreate, with the deprecated secret the published
// schema leaves out but upstream still reads. The URL's scheme and host rules are the use
// case's (webhook.ValidateURL), so the server's mode decides them in one place; here it
// only has to parse.
func webhookEndpointCreate() Object {
	return Object{Name: "WebhookEndpointCreate", Fields: []Field{
		{Name: "url", Schema: URL{MaxLength: 2083}, Required: true},
		{Name: "name", Schema: Nullable{Schema: String{}}},
		{Name: "secret", Schema: Nullable{Schema: String{MinLength: 32}}},
		{Name: "format", Schema: Enum{Name: "WebhookFormat", Values: []string{"raw", "discord", "slack"}}, Required: true},
		{Name: "events", Schema: List{Items: Enum{Name: "WebhookEventType", Values: resolvers.WebhookEventTypes()}}, Required: true},
		{Name: "organization_id", Schema: Nullable{Schema: UUID4{}}},
	}}
}
