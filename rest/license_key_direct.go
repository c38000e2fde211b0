package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/graph/model"
	"till/internal/scalar"
	"till/resolvers"
)

// The validate routes are license validation's hottest path: every application launch calls
// them. They run the validation use case directly and render its result here, which costs
// a fraction of executing their persisted operation. The operation stays the definition of
// the shape: it still authorizes the route, and a test renders the same validations both
// ways and requires identical bytes.

// validateDirect serves a validate route (public: the customer portal's, open to any key).
func validateDirect(r *resolvers.Resolver, present func(context.Context, error) *gqlerror.Error, public bool) DirectFunc {
	return func(ctx context.Context, vars map[string]any) (json.RawMessage, *gqlerror.Error) {
		in, _ := vars["input"].(map[string]any)
		v, err := r.ValidateLicenseKeyForV1(ctx, validateInput(in), public)
		if err != nil {
			return nil, present(ctx, err)
		}
		if v.Error != nil {
			return nil, present(ctx, &resolvers.Error{Code: v.Error.Code, Detail: v.Error.Detail})
		}
		var buf bytes.Buffer
		writeValidatedLicenseKey(&buf, v)
		return buf.Bytes(), nil
	}
}

// validateInput reads the validated LicenseKeyValidate body (GraphQL names, canonical
// values) into the use case's input.
func validateInput(in map[string]any) model.LicenseKeyValidateInput {
	id := func(name string) *uuid.UUID {
		s, _ := in[name].(string)
		u, err := uuid.Parse(s)
		if err != nil {
			return nil
		}
		return &u
	}
	out := model.LicenseKeyValidateInput{ActivationID: id("activationId"), BenefitID: id("benefitId"),
		CustomerID: id("customerId")}
	out.Key, _ = in["key"].(string)
	if org := id("organizationId"); org != nil {
		out.OrganizationID = *org
	}
	if n, isInt := in["incrementUsage"].(int64); isInt {
		inc := int(n)
		out.IncrementUsage = &inc
	}
	if c, isMap := in["conditions"].(map[string]any); isMap {
		out.Conditions = c
	}
	return out
}

// writeValidatedLicenseKey writes ValidatedLicenseKey exactly as LicenseKeyShape followed by
// the activation renders it, with the GraphQL scalars' own marshalers.
func writeValidatedLicenseKey(w *bytes.Buffer, v resolvers.LicenseKeyValidationV1) {
	k, a := v.LicenseKey, v.Activation
	o := jsonObject{w: w}
	o.field("id", graphql.MarshalUUID(k.ID))
	o.field("created_at", scalar.MarshalDateTime(k.CreatedAt))
	o.field("modified_at", dateTime(k.ModifiedAt))
	o.field("organization_id", graphql.MarshalUUID(k.OrganizationID))
	o.field("customer_id", graphql.MarshalUUID(k.CustomerID))
	o.key("customer")
	writeCustomer(w, v)
	o.field("benefit_id", graphql.MarshalUUID(k.BenefitID))
	o.field("key", graphql.MarshalString(k.Key))
	o.field("display_key", graphql.MarshalString(k.DisplayKey))
	o.field("status", graphql.MarshalString(string(k.Status)))
	o.field("limit_activations", integer(k.LimitActivations))
	o.field("usage", graphql.MarshalInt(k.Usage))
	o.field("limit_usage", integer(k.LimitUsage))
	o.field("validations", graphql.MarshalInt(k.Validations))
	o.field("last_validated_at", dateTime(k.LastValidatedAt))
	o.field("expires_at", dateTime(k.ExpiresAt))
	o.key("activation")
	if a == nil {
		w.WriteString("null")
	} else {
		ao := jsonObject{w: w}
		ao.field("id", graphql.MarshalUUID(a.ID))
		ao.field("license_key_id", graphql.MarshalUUID(a.LicenseKeyID))
		ao.field("label", graphql.MarshalString(a.Label))
		ao.field("meta", scalar.MarshalMetadata(a.Meta))
		ao.field("created_at", scalar.MarshalDateTime(a.CreatedAt))
		ao.field("modified_at", dateTime(a.ModifiedAt))
		ao.close()
	}
	o.close()
}

// writeCustomer writes the validated key's customer as CustomerShape.
func writeCustomer(w *bytes.Buffer, v resolvers.LicenseKeyValidationV1) {
	c := v.Customer
	o := jsonObject{w: w}
	o.field("id", graphql.MarshalUUID(c.ID))
	o.field("created_at", scalar.MarshalDateTime(c.CreatedAt))
	o.field("modified_at", dateTime(c.ModifiedAt))
	o.field("metadata", scalar.MarshalMetadata(c.Metadata))
	o.field("external_id", text(c.ExternalID))
	o.field("email", text(c.Email))
	o.field("email_verified", graphql.MarshalBoolean(c.EmailVerified))
	o.field("type", graphql.MarshalString(string(c.Type)))
	o.field("name", text(c.Name))
	o.field("billing_name", text(c.BillingName))
	o.key("billing_address")
	if a := c.BillingAddress; a == nil {
		w.WriteString("null")
	} else {
		ao := jsonObject{w: w}
		ao.field("line1", text(a.Line1))
		ao.field("line2", text(a.Line2))
		ao.field("postal_code", text(a.PostalCode))
		ao.field("city", text(a.City))
		ao.field("state", text(a.State))
		ao.field("country", graphql.MarshalString(a.Country))
		ao.close()
	}
	o.key("tax_id")
	if t := c.TaxID(); t == nil {
		w.WriteString("null")
	} else {
		w.WriteByte('[')
		graphql.MarshalString(t[0]).MarshalGQL(w)
		w.WriteByte(',')
		graphql.MarshalString(t[1]).MarshalGQL(w)
		w.WriteByte(']')
	}
	o.field("locale", text(c.Locale))
	o.field("organization_id", graphql.MarshalUUID(c.OrganizationID))
	o.field("default_payment_method_id", optionalUUID(c.DefaultPaymentMethodID))
	o.field("deleted_at", dateTime(c.DeletedAt))
	o.field("first_user_event_at", dateTime(c.FirstUserEventAt))
	o.field("avatar_url", text(c.AvatarURL))
	o.close()
}

// jsonObject writes one JSON object's members in order.
type jsonObject struct {
	w      *bytes.Buffer
	opened bool
}

func (o *jsonObject) key(name string) {
	if o.opened {
		o.w.WriteByte(',')
	} else {
		o.w.WriteByte('{')
		o.opened = true
	}
	o.w.WriteByte('"')
	o.w.WriteString(name) // member names are fixed ASCII identifiers
	o.w.WriteString(`":`)
}

func (o *jsonObject) field(name string, v graphql.Marshaler) {
	o.key(name)
	v.MarshalGQL(o.w)
}

func (o *jsonObject) close() {
	if !o.opened {
		o.w.WriteByte('{')
	}
	o.w.WriteByte('}')
}

func dateTime(t *time.Time) graphql.Marshaler {
	if t == nil {
		return graphql.Null
	}
	return scalar.MarshalDateTime(*t)
}

func integer(n *int) graphql.Marshaler {
	if n == nil {
		return graphql.Null
	}
	return graphql.MarshalInt(*n)
}

func text(s *string) graphql.Marshaler {
	if s == nil {
		return graphql.Null
	}
	return graphql.MarshalString(*s)
}

func optionalUUID(id *uuid.UUID) graphql.Marshaler {
	if id == nil {
		return graphql.Null
	}
	return graphql.MarshalUUID(*id)
}
