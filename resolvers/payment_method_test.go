package resolvers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
)

const (
	paymentMethodsDoc = `query($id: UUID, $ext: String, $page: Int, $limit: Int) {
		paymentMethods(customerId: $id, externalCustomerId: $ext, page: $page, limit: $limit) {
			items { id customerId processor type isDefault methodMetadata { brand last4 expMonth expYear wallet } }
			pagination { totalCount maxPage } } }`
	portalUpdateDoc = `mutation($input: PortalCustomerUpdateInput!) { portalUpdateCustomer(input: $input) { ` + customerFields + ` } }`
	mePaymentsDoc   = `{ me { paymentMethods { items { id isDefault } pagination { totalCount maxPage } } } }`
)

type paymentMethodPage struct {
	Items []struct {
		ID             uuid.UUID
		CustomerID     uuid.UUID
		Processor      string
		Type           string
		IsDefault      bool
		MethodMetadata *struct {
			Brand, Last4      string
			ExpMonth, ExpYear int
			Wallet            *string
		}
	}
	Pagination struct{ TotalCount, MaxPage int }
}

func (p paymentMethodPage) ids() []uuid.UUID {
	out := []uuid.UUID{}
	for _, it := range p.Items {
		out = append(out, it.ID)
	}
	return out
}

func (p paymentMethodPage) defaults() []uuid.UUID {
	out := []uuid.UUID{}
	for _, it := range p.Items {
		if it.IsDefault {
			out = append(out, it.ID)
		}
	}
	return out
}

func TestPaymentMethods(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "customers:read customer_sessions:write")
	c := s.NewCustomer(t, org.ID, "ext-pm")
	oldest := s.AddCard(t, org.ID, c.ID, "1111", 3*time.Minute)
	middle := s.AddCard(t, org.ID, c.ID, "2222", 2*time.Minute)
	paypal, err := storage.CreatePaymentMethod(context.Background(), s.DB, org.ID, c.ID,
		storage.PaymentMethodWrite{Processor: "stripe", ProcessorID: "pm_paypal", Type: "paypal"})
	if err != nil {
		t.Fatal(err)
	}
	deleted := s.AddCard(t, org.ID, c.ID, "9999", time.Second)
	s.Exec(t, `UPDATE payment_methods SET deleted_at = now() WHERE id = $1`, deleted)
	s.Exec(t, `UPDATE customers SET default_payment_method_id = $2 WHERE id = $1`, c.ID, middle)
	newestFirst := []uuid.UUID{paypal.ID, middle, oldest}

	list := func(t *testing.T, token string, v vars) paymentMethodPage {
		t.Helper()
		var out struct{ PaymentMethods paymentMethodPage }
		s.Query(t, token, paymentMethodsDoc, v, &out)
		return out.PaymentMethods
	}

	for name, v := range map[string]vars{
		"by customer id":          {"id": c.ID},
		"by external customer id": {"ext": "ext-pm"},
	} {
		t.Run("listing "+name+" is newest first with the default flagged and deleted ones left out", func(t *testing.T) {
			got := list(t, org.Token, v)
			if diff := cmp.Diff(newestFirst, got.ids()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]uuid.UUID{middle}, got.defaults()); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
			if got.Pagination.TotalCount != 3 || got.Pagination.MaxPage != 1 {
				t.Errorf("pagination = %+v", got.Pagination)
			}
		})
	}

	t.Run("cards carry their details and other methods none", func(t *testing.T) {
		got := list(t, org.Token, vars{"id": c.ID})
		if got.Items[0].Type != "paypal" || got.Items[0].MethodMetadata != nil {
			t.Errorf("paypal method = %+v", got.Items[0])
		}
		card := got.Items[1]
		if card.Type != "card" || card.Processor != "stripe" || card.CustomerID != c.ID || card.MethodMetadata == nil ||
			card.MethodMetadata.Brand != "visa" || card.MethodMetadata.Last4 != "2222" ||
			card.MethodMetadata.ExpMonth != 12 || card.MethodMetadata.ExpYear != 2030 {
			t.Errorf("card = %+v %+v", card, card.MethodMetadata)
		}
	})

	t.Run("pages split the list", func(t *testing.T) {
		first, second := list(t, org.Token, vars{"id": c.ID, "limit": 2}), list(t, org.Token, vars{"id": c.ID, "limit": 2, "page": 2})
		if diff := cmp.Diff(newestFirst, append(first.ids(), second.ids()...)); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
		if first.Pagination.TotalCount != 3 || first.Pagination.MaxPage != 2 {
			t.Errorf("pagination = %+v", first.Pagination)
		}
	})

	t.Run("a customer without methods has an empty list and no pages", func(t *testing.T) {
		bare := s.NewCustomer(t, org.ID, "")
		got := list(t, org.Token, vars{"id": bare.ID})
		if len(got.Items) != 0 || got.Pagination.TotalCount != 0 || got.Pagination.MaxPage != 0 {
			t.Errorf("list = %+v", got)
		}
	})

	t.Run("the customer's paymentMethods field agrees with the list", func(t *testing.T) {
		var out struct {
			Customer struct{ PaymentMethods []struct{ ID uuid.UUID } }
		}
		s.Query(t, org.Token, `query($id: UUID!) { customer(id: $id) { paymentMethods { id } } }`, vars{"id": c.ID}, &out)
		got := []uuid.UUID{}
		for _, pm := range out.Customer.PaymentMethods {
			got = append(got, pm.ID)
		}
		if diff := cmp.Diff(newestFirst, got); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
	})

	t.Run("naming no customer is rejected", func(t *testing.T) {
		wantInvalid(t, s.QueryError(t, org.Token, paymentMethodsDoc, nil),
			fieldErr{Type: "missing", Loc: []any{"input", "customerId"}, Msg: "Field required"})
	})
	t.Run("an unknown customer is ResourceNotFound", func(t *testing.T) {
		wantError(t, s.QueryError(t, org.Token, paymentMethodsDoc, vars{"id": uuid.New()}), "NOT_FOUND", "ResourceNotFound")
		wantError(t, s.QueryError(t, org.Token, paymentMethodsDoc, vars{"ext": "nobody"}), "NOT_FOUND", "ResourceNotFound")
	})
	t.Run("page 0 is rejected", func(t *testing.T) {
		wantError(t, s.QueryError(t, org.Token, paymentMethodsDoc, vars{"id": c.ID, "page": 0}), "BAD_USER_INPUT", "RequestValidationError",
			fieldErr{Type: "greater_than", Loc: []any{"query", "page"}, Msg: "Input should be greater than 0", Input: float64(0)})
	})

	t.Run("the portal lists the session customer's methods newest first", func(t *testing.T) {
		session := s.NewCustomerSession(t, org.ID, c.ID)
		var out struct {
			Me struct{ PaymentMethods paymentMethodPage }
		}
		s.Query(t, session, mePaymentsDoc, nil, &out)
		if diff := cmp.Diff(newestFirst, out.Me.PaymentMethods.ids()); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]uuid.UUID{middle}, out.Me.PaymentMethods.defaults()); diff != "" {
			t.Errorf("defaults (-want +got):\n%s", diff)
		}
	})
}

func TestPortalUpdateCustomer(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)

	// fresh returns a customer with a German address and tax id, and a session for it.
	fresh := func(t *testing.T) (customer, string) {
		t.Helper()
		c := createCustomer(t, s, org.Token, vars{"email": "p-" + uuid.NewString()[:8] + "@example.com",
			"billingName": "Old Name", "billingAddress": vars{"line1": "Str. 1", "country": "DE"}, "taxId": "DE123456789"})
		return c, s.NewCustomerSession(t, org.ID, c.ID)
	}
	update := func(t *testing.T, session string, input vars) customer {
		t.Helper()
		var out struct{ PortalUpdateCustomer customer }
		s.Query(t, session, portalUpdateDoc, vars{"input": input}, &out)
		return out.PortalUpdateCustomer
	}

	t.Run("absent fields are left alone", func(t *testing.T) {
		c, session := fresh(t)
		if diff := cmp.Diff(c, update(t, session, vars{})); diff != "" {
			t.Errorf("customer changed by an empty update (-before +after):\n%s", diff)
		}
	})

	for name, v := range map[string]any{"an empty billing name": "", "a null billing name": nil} {
		t.Run(name+" is ignored", func(t *testing.T) {
			c, session := fresh(t)
			if got := update(t, session, vars{"billingName": v}); got.BillingName == nil || *got.BillingName != "Old Name" {
				t.Errorf("billingName = %v, want unchanged", got.BillingName)
			}
			_ = c
		})
	}

	t.Run("a billing name is set", func(t *testing.T) {
		_, session := fresh(t)
		if got := update(t, session, vars{"billingName": "New Name"}); *got.BillingName != "New Name" {
			t.Errorf("billingName = %v", *got.BillingName)
		}
	})

	t.Run("a new address with a matching tax id is accepted", func(t *testing.T) {
		_, session := fresh(t)
		got := update(t, session, vars{"billingAddress": vars{"country": "FR", "city": "Lyon"}, "taxId": "FR61954506077"})
		if got.BillingAddress.Country != "FR" || *got.BillingAddress.City != "Lyon" ||
			!cmp.Equal(got.TaxID, []string{"FR61954506077", "eu_vat"}) {
			t.Errorf("address %+v, taxId %v", got.BillingAddress, got.TaxID)
		}
	})

	for name, v := range map[string]any{"a null tax id": nil, "an empty tax id": ""} {
		t.Run(name+" clears it", func(t *testing.T) {
			_, session := fresh(t)
			if got := update(t, session, vars{"taxId": v}); got.TaxID != nil {
				t.Errorf("taxId = %v, want null", got.TaxID)
			}
		})
	}

	t.Run("a default payment method of the customer is set", func(t *testing.T) {
		c, session := fresh(t)
		a := s.AddCard(t, org.ID, c.ID, "1111", 2*time.Minute)
		b := s.AddCard(t, org.ID, c.ID, "2222", time.Minute)
		got := update(t, session, vars{"defaultPaymentMethodId": a})
		if got.DefaultPaymentMethodID == nil || *got.DefaultPaymentMethodID != a {
			t.Errorf("defaultPaymentMethodId = %v, want %s", got.DefaultPaymentMethodID, a)
		}
		var out struct {
			Me struct{ PaymentMethods paymentMethodPage }
		}
		s.Query(t, session, mePaymentsDoc, nil, &out)
		if diff := cmp.Diff([]uuid.UUID{a}, out.Me.PaymentMethods.defaults()); diff != "" {
			t.Errorf("portal defaults (-want +got):\n%s", diff)
		}
		var list struct{ PaymentMethods paymentMethodPage }
		s.Query(t, org.Token, paymentMethodsDoc, vars{"id": c.ID}, &list)
		if diff := cmp.Diff([]uuid.UUID{b, a}, list.PaymentMethods.ids()); diff != "" {
			t.Errorf("organization list (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]uuid.UUID{a}, list.PaymentMethods.defaults()); diff != "" {
			t.Errorf("organization defaults (-want +got):\n%s", diff)
		}
	})

	otherCustomer := s.NewCustomer(t, org.ID, "")
	othersMethod := s.AddCard(t, org.ID, otherCustomer.ID, "4444", time.Minute)
	unknown := uuid.New()
	for _, tc := range []struct {
		name  string
		input vars
		want  fieldErr
	}{
		{"a null billing address is rejected", vars{"billingAddress": nil},
			fieldErr{Type: "missing", Loc: []any{"input", "billingAddress"}, Msg: "Customer billing address cannot be reset to null once set."}},
		{"a billing address with an invalid country is rejected", vars{"billingAddress": vars{"country": "Germany"}},
			fieldErr{Type: "literal_error", Loc: []any{"input", "billingAddress", "country"},
				Msg: "Input should be a valid ISO 3166-1 alpha-2 country code", Input: "Germany"}},
		{"an invalid tax id is rejected", vars{"taxId": "nonsense"},
			fieldErr{Type: "invalid", Loc: []any{"input", "taxId"}, Msg: "Invalid tax ID.", Input: "nonsense"}},
		{"a new country re-validates the stored tax id", vars{"billingAddress": vars{"country": "GB"}},
			fieldErr{Type: "invalid", Loc: []any{"input", "taxId"}, Msg: "Invalid tax ID.", Input: "DE123456789"}},
		{"a null default payment method is rejected", vars{"defaultPaymentMethodId": nil},
			fieldErr{Type: "value_error", Loc: []any{"input", "defaultPaymentMethodId"}, Msg: "Default payment method cannot be reset to null."}},
		{"another customer's payment method is rejected", vars{"defaultPaymentMethodId": othersMethod},
			fieldErr{Type: "invalid", Loc: []any{"input", "defaultPaymentMethodId"}, Msg: "Payment method not found.", Input: othersMethod.String()}},
		{"an unknown payment method is rejected", vars{"defaultPaymentMethodId": unknown},
			fieldErr{Type: "invalid", Loc: []any{"input", "defaultPaymentMethodId"}, Msg: "Payment method not found.", Input: unknown.String()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, session := fresh(t)
			input := tc.input
			input["billingName"] = "Not Saved"
			wantInvalid(t, s.QueryError(t, session, portalUpdateDoc, vars{"input": input}), tc.want)
			var after struct{ Customer customer }
			s.Query(t, org.Token, getCustomerDoc, vars{"id": c.ID}, &after)
			if diff := cmp.Diff(c, after.Customer); diff != "" {
				t.Errorf("customer changed by a rejected update (-before +after):\n%s", diff)
			}
		})
	}

	t.Run("a customer without an address gets the null-address error too", func(t *testing.T) {
		c := s.NewCustomer(t, org.ID, "")
		session := s.NewCustomerSession(t, org.ID, c.ID)
		wantInvalid(t, s.QueryError(t, session, portalUpdateDoc, vars{"input": vars{"billingAddress": nil}}),
			fieldErr{Type: "missing", Loc: []any{"input", "billingAddress"}, Msg: "Customer billing address cannot be reset to null once set."})
	})

	t.Run("a tax id without any billing address is rejected", func(t *testing.T) {
		c := s.NewCustomer(t, org.ID, "")
		session := s.NewCustomerSession(t, org.ID, c.ID)
		wantInvalid(t, s.QueryError(t, session, portalUpdateDoc, vars{"input": vars{"taxId": "DE123456789"}}),
			fieldErr{Type: "value_error", Loc: []any{"input", "taxId"}, Msg: "Country is required to validate tax ID.", Input: "DE123456789"})
	})
}
