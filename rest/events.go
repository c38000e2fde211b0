package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"till/internal/auth"
	"till/internal/scalar"
	"till/resolvers"
)

// eventShape names the persisted operation that renders the objects of an event family and
// the field of its data that holds the object.
type eventShape struct{ operation, field string }

// eventShapes maps an event type's prefix (before the dot) to the /v1 shape of its object.
var eventShapes = map[string]eventShape{
	"benefit_grant": {"WebhookBenefitGrant", "benefitGrant"},
	"checkout":      {"WebhookCheckout", "checkout"},
	"customer_seat": {"WebhookCustomerSeat", "seat"},
	"customer":      {"WebhookCustomer", "customer"},
	"member":        {"WebhookMember", "member"},
	"order":         {"GetOrder", "order"},
	"refund":        {"WebhookRefund", "refund"},
	"subscription":  {"WebhookSubscription", "subscription"},
}

// EventRenderer renders webhook payloads with the same persisted operations and executor as
// /v1, as the organization itself would read the object, so a payload's data is exactly the
// object's /v1 shape.
func EventRenderer(exec Executor, docs Documents) resolvers.EventRenderer {
	return resolvers.RenderPayloads(&eventRenderer{exec: exec, docs: docs, every: auth.NewScopeSet(auth.AllScopes()...)})
}

type eventRenderer struct {
	exec  Executor
	docs  Documents
	every auth.ScopeSet
}

// Families implements resolvers.PayloadRenderer: the families whose document exists.
func (x *eventRenderer) Families() []string {
	var out []string
	for family, shape := range eventShapes {
		if x.docs[shape.operation] != "" {
			out = append(out, family)
		}
	}
	sort.Strings(out)
	return out
}

// RenderPayload implements resolvers.PayloadRenderer.
func (x *eventRenderer) RenderPayload(ctx context.Context, e resolvers.EventRef) (string, error) {
	family, _, _ := strings.Cut(e.Type, ".")
	shape, ok := eventShapes[family]
	if !ok || x.docs[shape.operation] == "" {
		return "", fmt.Errorf("no payload shape for %s events", family)
	}
	ctx = auth.WithPrincipal(ctx, auth.Principal{Kind: auth.KindOrganization, OrganizationID: e.OrganizationID, Scopes: x.every})
	resp := x.exec.Execute(ctx, x.docs[shape.operation], shape.operation, map[string]any{"id": e.ObjectID.String()})
	if len(resp.Errors) > 0 {
		return "", fmt.Errorf("%s: %s", shape.operation, resp.Errors.Error())
	}
	data, err := dataField(resp.Data, shape.field)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	buf.WriteString(`{"type":`)
	typ, _ := json.Marshal(e.Type)
	buf.Write(typ)
	buf.WriteString(`,"timestamp":"` + scalar.FormatDateTime(e.CreatedAt) + `","data":`)
	buf.Write(data)
	buf.WriteString("}")
	return buf.String(), nil
}
