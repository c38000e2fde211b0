package resolvers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/graph/model"
	"till/internal/auth"
	"till/internal/webhook"
	"till/storage"
)

// minWebhookSecretLength is the deprecated secret field's min_length upstream.
const minWebhookSecretLength = 32

// webhookRequireHTTPS tells which endpoint URL rules are in force (webhook.ValidateURL):
// upstream's, https to public hosts only, unless the operator lets deliveries reach private
// addresses (TILL_WEBHOOK_ALLOW_PRIVATE). Receivers on the operator's own network are then
// valid endpoints, and such receivers commonly speak plain http, so both rules relax
// together: an endpoint is never accepted that its deliveries could not reach.
func (r *Resolver) webhookRequireHTTPS() bool {
	return r.webhooks == nil || r.webhooks.Sender == nil || !r.webhooks.Sender.AllowPrivate
}

// createWebhookEndpoint validates and stores an endpoint, with a generated secret unless
// the deprecated secret field gives one. The fields are checked before the organization,
// as upstream validates the body before its service resolves the organization.
func (r *Resolver) createWebhookEndpoint(ctx context.Context, in model.WebhookEndpointCreateInput) (*storage.WebhookEndpoint, error) {
	url, err := r.webhookURL(in.URL)
	if err != nil {
		return nil, err
	}
	secret := webhook.NewSecret()
	if in.Secret != nil {
		if n := utf8.RuneCountInString(*in.Secret); n < minWebhookSecretLength {
			return nil, &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: "string_too_short",
				Loc: []any{"input", "secret"}, Msg: "String should have at least 32 characters", Input: *in.Secret,
				Ctx: map[string]any{"min_length": minWebhookSecretLength}}}}
		}
		secret = *in.Secret
	}
	if err := checkWebhookEvents(in.Events); err != nil {
		return nil, err
	}
	orgID, err := creationOrganization(ctx, in.OrganizationID)
	if err != nil {
		return nil, err
	}
	return storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.WebhookEndpoint, error) {
		return storage.CreateWebhookEndpoint(ctx, q, orgID, storage.WebhookEndpointWrite{URL: url, Name: in.Name,
			Format: string(in.Format), Secret: secret, Events: in.Events})
	})
}

// creationOrganization is the organization a webhook endpoint or file is created in. An organization
// token acts in its own and must not name one, as upstream refuses; user tokens follow
// targetOrganization.
func creationOrganization(ctx context.Context, requested *uuid.UUID) (uuid.UUID, error) {
	if auth.FromContext(ctx).Kind == auth.KindOrganization && requested != nil {
		return uuid.Nil, Invalid("organization_token", "Setting organization_id is disallowed when using an organization token.",
			requested.String(), "input", "organizationId")
	}
	return targetOrganization(ctx, requested)
}

// webhookURL validates an endpoint URL under the server's rules and reports a refusal as
// upstream's body validation item at the url field.
func (r *Resolver) webhookURL(raw string) (string, error) {
	url, err := webhook.ValidateURL(raw, r.webhookRequireHTTPS())
	var ue *webhook.URLError
	if errors.As(err, &ue) {
		return "", &Error{Code: CodeRequestValidation, Errors: []FieldError{{Type: ue.Type, Loc: []any{"input", "url"},
			Msg: ue.Msg, Input: raw, Ctx: ue.Ctx}}}
	}
	return url, err
}

// WebhookEventTypes lists the event types an endpoint may subscribe to, in upstream's
// order: /v1 names them in its 422 before the use case sees the request.
func WebhookEventTypes() []string { return storage.WebhookEventTypes() }

// checkWebhookEvents refuses values that are not WebhookEventType wire values, one item
// per bad entry, worded as pydantic's enum error.
func checkWebhookEvents(events []string) error {
	known := storage.WebhookEventTypes()
	var items []FieldError
	for i, e := range events {
		if !slices.Contains(known, e) {
			items = append(items, FieldError{Type: "enum", Loc: []any{"input", "events", i},
				Msg: "Input should be " + quotedChoices(known), Input: e,
				Ctx: map[string]any{"expected": quotedChoices(known)}})
		}
	}
	if items != nil {
		return &Error{Code: CodeRequestValidation, Errors: items}
	}
	return nil
}

// quotedChoices lists values as pydantic does: 'a', 'b' or 'c'.
func quotedChoices(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = "'" + v + "'"
	}
	if len(quoted) < 2 {
		return strings.Join(quoted, "")
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// updateWebhookEndpoint changes the given fields of an endpoint of the caller's
// organizations; the URL obeys the same rules as at creation.
func (r *Resolver) updateWebhookEndpoint(ctx context.Context, in model.WebhookEndpointUpdateInput) (*storage.WebhookEndpoint, error) {
	var u storage.WebhookEndpointUpdate
	if in.URL != nil {
		url, err := r.webhookURL(*in.URL)
		if err != nil {
			return nil, err
		}
		u.URL = storage.Set(url)
	}
	if name, set := in.Name.ValueOK(); set {
		u.Name = storage.Set(name)
	}
	if in.Format != nil {
		u.Format = storage.Set(string(*in.Format))
	}
	if in.Events != nil {
		if err := checkWebhookEvents(in.Events); err != nil {
			return nil, err
		}
		u.Events = storage.Set(in.Events)
	}
	if in.Enabled != nil {
		u.Enabled = storage.Set(*in.Enabled)
		if *in.Enabled { // turned back on: it starts with a clean record
			u.ConsecutiveFailures, u.DisabledAt, u.DisabledReason = storage.Set(0), storage.Set[*time.Time](nil), storage.Set[*string](nil)
		}
	}
	e, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.WebhookEndpoint, error) {
		return storage.UpdateWebhookEndpoint(ctx, q, organizations(ctx), in.ID, u)
	})
	return e, notFoundOr(err, "")
}

// rotateWebhookEndpointSecret gives an endpoint a fresh secret.
func (r *Resolver) rotateWebhookEndpointSecret(ctx context.Context, id uuid.UUID) (*storage.WebhookEndpoint, error) {
	e, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.WebhookEndpoint, error) {
		return storage.RotateWebhookEndpointSecret(ctx, q, organizations(ctx), id, webhook.NewSecret())
	})
	return e, notFoundOr(err, "")
}

// deleteWebhookEndpoint soft-deletes an endpoint; another organization's, or one already
// deleted, is not found.
func (r *Resolver) deleteWebhookEndpoint(ctx context.Context, id uuid.UUID) (*storage.WebhookEndpoint, error) {
	e, err := storage.Audited(ctx, r.db, func(q sqlx.ExtContext) (*storage.WebhookEndpoint, error) {
		return storage.DeleteWebhookEndpoint(ctx, q, organizations(ctx), id)
	})
	return e, notFoundOr(err, "")
}

// webhookEndpoint reads a live endpoint of the caller's organizations.
func (r *Resolver) webhookEndpoint(ctx context.Context, id uuid.UUID) (*storage.WebhookEndpoint, error) {
	e, err := storage.GetWebhookEndpoint(ctx, r.db, organizations(ctx), id)
	return e, notFoundOr(err, "")
}

// webhookEndpointsPage lists the caller's live endpoints, newest first, narrowed to
// orgIDs when given (GET /v1/webhooks/endpoints).
func (r *Resolver) webhookEndpointsPage(ctx context.Context, orgIDs []uuid.UUID, a listArgs) (*model.WebhookEndpointPage, error) {
	p, w, err := rootWindow(ctx, a, nil, func(_ []storage.Sort, w storage.Window) (storage.Paged[*storage.WebhookEndpoint], error) {
		return storage.ListWebhookEndpoints(ctx, r.db, organizations(ctx), orgIDs, w)
	})
	if err != nil {
		return nil, err
	}
	return &model.WebhookEndpointPage{Items: p.Items, Pagination: paginationOf(p.Total, w), PageInfo: pageInfo(p, w)}, nil
}
