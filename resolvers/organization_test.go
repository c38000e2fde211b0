package resolvers_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/internal/auth"
	"till/resolvers"
	"till/resolvers/resolverstest"
)

func TestOrganization(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "organizations:read")
	const doc = `query($id: UUID) { organization(id: $id) { id slug defaultPresentmentCurrency processorMode
		allowCustomerUpdates featureSettings { memberModelEnabled checkoutLocalizationEnabled }
		customerPortalSettings { usage { show } subscription { updateSeats updatePlan } customer { allowEmailChange } } } }`
	type organization struct {
		ID, Slug, DefaultPresentmentCurrency, ProcessorMode string
		AllowCustomerUpdates                                bool
		FeatureSettings, CustomerPortalSettings             map[string]any
	}

	for name, v := range map[string]vars{"without an id": nil, "with its own id": {"id": org.ID}} {
		t.Run("an organization token reads its organization "+name, func(t *testing.T) {
			var out struct{ Organization organization }
			s.Query(t, org.Token, doc, v, &out)
			want := organization{ID: org.ID.String(), Slug: org.Slug, DefaultPresentmentCurrency: "usd", ProcessorMode: "test",
				AllowCustomerUpdates: true,
				FeatureSettings:      map[string]any{"memberModelEnabled": false, "checkoutLocalizationEnabled": false},
				CustomerPortalSettings: map[string]any{"usage": map[string]any{"show": true},
					"subscription": map[string]any{"updateSeats": true, "updatePlan": true},
					"customer":     map[string]any{"allowEmailChange": true}}}
			if diff := cmp.Diff(want, out.Organization); diff != "" {
				t.Errorf("organization (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a token without organization scopes is insufficient_scope", func(t *testing.T) {
		tok := s.NewToken(t, org.ID, "customers:read")
		wantError(t, s.QueryError(t, tok, doc, nil), "FORBIDDEN", "insufficient_scope")
	})
}

// TestExecutor checks the in-process executor the /v1 layer runs its persisted operations
// through: same directives, loaders and error presenter as /graphql.
func TestExecutor(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	c := s.NewCustomer(t, org.ID, "ext-exec")
	scopes, err := auth.ParseScopes("customers:read")
	if err != nil {
		t.Fatal(err)
	}
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{Kind: auth.KindOrganization, OrganizationID: org.ID, Scopes: scopes})
	x := s.Resolver.Executor()

	t.Run("a nested query resolves its relations through the loaders", func(t *testing.T) {
		res := x.Execute(ctx, `query($id: UUID!) { customer(id: $id) { id paymentMethods { id } organization { id } } }`, "",
			map[string]any{"id": c.ID.String()})
		if len(res.Errors) > 0 {
			t.Fatalf("errors: %v", res.Errors)
		}
		var out struct {
			Customer struct {
				ID             string
				PaymentMethods []struct{ ID string }
				Organization   struct{ ID string }
			}
		}
		mustUnmarshal(t, res.Data, &out)
		if out.Customer.ID != c.ID.String() || out.Customer.Organization.ID != org.ID.String() || out.Customer.PaymentMethods == nil {
			t.Errorf("customer = %+v", out.Customer)
		}
	})
	t.Run("errors carry the same extensions", func(t *testing.T) {
		res := x.Execute(ctx, `mutation { createCustomer(input: {email: "x@example.com"}) { id } }`, "", nil)
		if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != resolvers.GraphQLForbidden ||
			res.Errors[0].Extensions["reason"] != "insufficient_scope" {
			t.Errorf("errors = %+v", res.Errors)
		}
	})
	t.Run("an anonymous context is UNAUTHENTICATED", func(t *testing.T) {
		res := x.Execute(context.Background(), `{ customers { items { id } } }`, "", nil)
		if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != resolvers.GraphQLUnauthenticated ||
			res.Errors[0].Extensions["reason"] != "Unauthorized" {
			t.Errorf("errors = %+v", res.Errors)
		}
	})
}
