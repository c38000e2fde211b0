package resolvers_test

import (
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

const ckSaveMethod = `mutation($in: PaymentMethodSaveInput!) { savePaymentMethod(input: $in) {
	id customerId processor type isDefault methodMetadata { brand last4 expMonth expYear wallet } } }`

type ckMethod struct {
	ID             uuid.UUID `json:"id"`
	CustomerID     uuid.UUID `json:"customerId"`
	Processor      string    `json:"processor"`
	Type           string    `json:"type"`
	IsDefault      bool      `json:"isDefault"`
	MethodMetadata *struct {
		Brand    string  `json:"brand"`
		Last4    string  `json:"last4"`
		ExpMonth int     `json:"expMonth"`
		ExpYear  int     `json:"expYear"`
		Wallet   *string `json:"wallet"`
	} `json:"methodMetadata"`
}

func TestSavePaymentMethods(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	save := func(t *testing.T, token string, in vars) ckMethod {
		t.Helper()
		var out struct{ SavePaymentMethod ckMethod }
		s.Query(t, token, ckSaveMethod, vars{"in": in}, &out)
		return out.SavePaymentMethod
	}
	defaultOf := func(t *testing.T, id uuid.UUID) *uuid.UUID {
		t.Helper()
		var d *uuid.UUID
		s.Get(t, &d, `SELECT default_payment_method_id FROM customers WHERE id = $1`, id)
		return d
	}

	t.Run("the first method becomes the default and later ones only on request", func(t *testing.T) {
		c := s.NewCustomer(t, org.ID, "")
		first := save(t, org.Token, vars{"customerId": c.ID, "token": "tok_visa"})
		if !first.IsDefault || first.Type != "card" || first.Processor != "stripe" || first.MethodMetadata.Last4 != "4242" {
			t.Fatalf("first = %+v", first)
		}
		second := save(t, org.Token, vars{"customerId": c.ID, "token": "tok_mastercard"})
		if second.IsDefault || *defaultOf(t, c.ID) != first.ID {
			t.Errorf("second is default %v; default %v, want the first", second.IsDefault, defaultOf(t, c.ID))
		}
		third := save(t, org.Token, vars{"customerId": c.ID, "token": "tok_visa_applepay", "setDefault": true})
		if !third.IsDefault || *third.MethodMetadata.Wallet != "apple_pay" || *defaultOf(t, c.ID) != third.ID {
			t.Errorf("third = %+v, default %v", third, defaultOf(t, c.ID))
		}
	})

	t.Run("an unknown token is bad input and stores nothing", func(t *testing.T) {
		c := s.NewCustomer(t, org.ID, "")
		e := s.QueryError(t, org.Token, ckSaveMethod, vars{"in": vars{"customerId": c.ID, "token": "tok_bogus"}})
		wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "token"}, Msg: "Payment token is invalid.", Input: "tok_bogus"})
		if n := ckCount(t, s, `SELECT count(*) FROM payment_methods WHERE customer_id = $1`, c.ID); n != 0 {
			t.Errorf("%d methods stored", n)
		}
	})

	t.Run("deleting the default clears it; another organization sees nothing", func(t *testing.T) {
		c := s.NewCustomer(t, org.ID, "")
		m := save(t, org.Token, vars{"customerId": c.ID, "token": "tok_visa"})
		other := s.NewOrg(t, resolverstest.AllScopes)
		e := s.QueryError(t, other.Token, `mutation($id: UUID!) { deletePaymentMethod(id: $id) { id } }`, vars{"id": m.ID})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
		e = s.QueryError(t, other.Token, ckSaveMethod, vars{"in": vars{"customerId": c.ID, "token": "tok_visa"}})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
		var out struct{ DeletePaymentMethod ckMethod }
		s.Query(t, org.Token, `mutation($id: UUID!) { deletePaymentMethod(id: $id) { id isDefault } }`, vars{"id": m.ID}, &out)
		if out.DeletePaymentMethod.IsDefault || defaultOf(t, c.ID) != nil {
			t.Errorf("after delete: isDefault %v, default %v", out.DeletePaymentMethod.IsDefault, defaultOf(t, c.ID))
		}
		e = s.QueryError(t, org.Token, `mutation($id: UUID!) { deletePaymentMethod(id: $id) { id } }`, vars{"id": m.ID})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
		if n := ckCount(t, s, `SELECT count(*) FROM domain_events WHERE object_id = $1 AND type = 'customer.updated'`, c.ID); n != 2 {
			t.Errorf("%d customer.updated events, want 2 (default set, default cleared)", n)
		}
	})

	t.Run("a customer saves and deletes its own methods in the portal", func(t *testing.T) {
		c := s.NewCustomer(t, org.ID, "")
		session := s.NewCustomerSession(t, org.ID, c.ID)
		var out struct{ PortalSavePaymentMethod ckMethod }
		s.Query(t, session, `mutation { portalSavePaymentMethod(input: {token: "tok_mastercard"}) { id customerId isDefault } }`, nil, &out)
		if out.PortalSavePaymentMethod.CustomerID != c.ID || !out.PortalSavePaymentMethod.IsDefault {
			t.Fatalf("portal save = %+v", out.PortalSavePaymentMethod)
		}
		stranger := s.NewCustomer(t, org.ID, "")
		theirs := save(t, org.Token, vars{"customerId": stranger.ID, "token": "tok_visa"})
		e := s.QueryError(t, session, `mutation($id: UUID!) { portalDeletePaymentMethod(id: $id) { id } }`, vars{"id": theirs.ID})
		wantError(t, e, "NOT_FOUND", "ResourceNotFound")
		s.Query(t, session, `mutation($id: UUID!) { portalDeletePaymentMethod(id: $id) { id } }`,
			vars{"id": out.PortalSavePaymentMethod.ID}, nil)
		if defaultOf(t, c.ID) != nil {
			t.Errorf("default not cleared")
		}
		e = s.QueryError(t, org.Token, `mutation { portalSavePaymentMethod(input: {token: "tok_visa"}) { id } }`, nil)
		wantError(t, e, "FORBIDDEN", "Unauthorized")
	})
}
