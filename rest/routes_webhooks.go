package rest

import (
	"net/http"

	"till/resolvers"
	"till/rest/fastapi"
)

// webhookRoutes serve the organization's webhook endpoints: list, create and delete. Their
// paths have no trailing slash, unlike most upstream lists; the router answers the other
// spelling with a 307.
func webhookRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/webhooks/endpoints", Operation: "ListWebhookEndpoints", Field: "webhookEndpoints",
			Params: []fastapi.Param{Page(), Limit(), Filter("organization_id", "organizationId", fastapi.UUID4{})}},
		{Method: http.MethodPost, Path: "/v1/webhooks/endpoints", Operation: "CreateWebhookEndpoint",
			Field: "createWebhookEndpoint", Status: http.StatusCreated, Body: &fastapi.Body{Var: "input", Schema: webhookEndpointCreate()}},
		{Method: http.MethodDelete, Path: "/v1/webhooks/endpoints/{id}", Operation: "DeleteWebhookEndpoint",
			Params: []fastapi.Param{PathUUID4("id", "id")}, Status: http.StatusNoContent},
	}
}

// webhookEndpointCreate is WebhookEndpointCreate, with the deprecated secret the published
// schema leaves out but upstream still reads. The URL's scheme and host rules are the use
// case's (webhook.ValidateURL), so the server's mode decides them in one place; here it
// only has to parse.
func webhookEndpointCreate() fastapi.Object {
	return fastapi.Object{Name: "WebhookEndpointCreate", Fields: []fastapi.Field{
		{Name: "url", Schema: fastapi.URL{MaxLength: 2083}, Required: true},
		{Name: "name", Schema: fastapi.Nullable{Schema: fastapi.String{}}},
		{Name: "secret", Schema: fastapi.Nullable{Schema: fastapi.String{MinLength: 32}}},
		{Name: "format", Schema: fastapi.Enum{Name: "WebhookFormat", Values: []string{"raw", "discord", "slack"}}, Required: true},
		{Name: "events", Schema: fastapi.List{Items: fastapi.Enum{Name: "WebhookEventType", Values: resolvers.WebhookEventTypes()}}, Required: true},
		{Name: "organization_id", Schema: fastapi.Nullable{Schema: fastapi.UUID4{}}},
	}}
}
