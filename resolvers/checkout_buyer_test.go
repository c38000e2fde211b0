package resolvers_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// ckVictim is a customer the seller made, with billing details and a saved card.
type ckVictim struct {
	customer
	method uuid.UUID
}

// ckNewVictim creates a customer with a name, billing details and a card saved by the seller.
func ckNewVictim(t *testing.T, s *resolverstest.Server, tok, externalID string) ckVictim {
	t.Helper()
	in := vars{"email": "alice-" + uuid.NewString()[:8] + "@example.com", "name": "Alice Liddell",
		"billingName": "Liddell Ltd", "taxId": "FR40303265045",
		"billingAddress": vars{"line1": "1 Rue de Rivoli", "postalCode": "75001", "city": "Paris", "country": "FR"}}
	if externalID != "" {
		in["externalId"] = externalID
	}
	c := createCustomer(t, s, tok, in)
	var saved struct{ SavePaymentMethod struct{ ID uuid.UUID } }
	s.Query(t, tok, `mutation($in: PaymentMethodSaveInput!) { savePaymentMethod(input: $in) { id } }`,
		vars{"in": vars{"customerId": c.ID, "token": "tok_visa"}}, &saved)
	return ckVictim{customer: c, method: saved.SavePaymentMethod.ID}
}

// ckStranger is what a buyer who is not the customer types into the checkout form.
func ckStranger(secret, email string) vars {
	return vars{"clientSecret": secret, "customerEmail": email, "customerName": "Mallory",
		"customerBillingName": "Mallory Inc", "customerTaxId": "DE123456788",
		"customerBillingAddress": vars{"line1": "9 Evil St", "postalCode": "10115", "city": "Berlin", "country": "DE"}}
}

func TestConfirmCheckoutBuyerBinding(t *testing.T) {
	t.Parallel()
	s, proc := ckServer(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	tok := org.Token
	ebook := ckProduct(t, s, tok, "Ebook", "", ckFixed(2000))
	monthly := ckProduct(t, s, tok, "Monthly", "month", ckFixed(900))
	open := func(t *testing.T, in vars) ckCheckout {
		t.Helper()
		if in == nil {
			in = vars{}
		}
		in["products"] = []uuid.UUID{ebook.ID}
		return ckNewCheckout(t, s, tok, in)
	}

	for _, tc := range []struct {
		name  string
		email func(string) string
	}{
		{"with the customer's exact email", func(e string) string { return e }},
		{"with the customer's email in other case", strings.ToUpper},
	} {
		t.Run("an anonymous buyer cannot pay with the saved card of the customer whose email they give, "+tc.name, func(t *testing.T) {
			a := ckNewVictim(t, s, tok, "")
			c := open(t, nil)
			before, charges := s.Row(t, "customers", a.ID), proc.charges.Load()
			in := ckStranger(c.ClientSecret, tc.email(*a.Email))
			in["paymentMethodId"] = a.method
			e := s.QueryError(t, "", ckConfirm, vars{"in": in})
			wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "paymentMethodId"},
				Msg: "Payment method does not exist.", Input: a.method.String()})
			if after := s.Row(t, "customers", a.ID); after != before {
				t.Errorf("the customer changed:\nbefore %s\nafter  %s", before, after)
			}
			if n := proc.charges.Load() - charges; n != 0 {
				t.Errorf("%d charges, want none", n)
			}
			if n := ckCount(t, s, `SELECT count(*) FROM payments WHERE customer_id = $1`, a.ID); n != 0 {
				t.Errorf("%d payments recorded for the customer, want none", n)
			}
			if rows := ckPurchaseRows(t, s, org.ID, c.ID); rows.Orders != 0 || rows.Subscriptions != 0 {
				t.Errorf("rows = %+v, want no order or subscription", rows)
			}
			if got := ckGet(t, s, tok, c.ID); got.Status != "open" || got.CustomerEmail != nil || got.CustomerID != nil {
				t.Errorf("checkout status %s email %v customer %v, want open and untouched", got.Status, got.CustomerEmail, got.CustomerID)
			}
		})
	}

	t.Run("a stranger's own card under a customer's email buys for that customer without touching its details", func(t *testing.T) {
		a := ckNewVictim(t, s, tok, "")
		s.Exec(t, `UPDATE payment_methods SET deleted_at = now() WHERE id = $1`, a.method)
		s.Exec(t, `UPDATE customers SET default_payment_method_id = NULL WHERE id = $1`, a.ID)
		c := ckNewCheckout(t, s, tok, vars{"products": []uuid.UUID{monthly.ID}})
		before := s.Row(t, "customers", a.ID)
		in := ckStranger(c.ClientSecret, *a.Email)
		in["paymentToken"] = "tok_mastercard"
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, "", ckConfirm, vars{"in": in}, &out)
		if got := out.ConfirmCheckout; got.Status != "succeeded" || got.CustomerID == nil || *got.CustomerID != a.ID {
			t.Fatalf("status %s customer %v, want succeeded for the matched customer %s", got.Status, got.CustomerID, a.ID)
		}
		if after := s.Row(t, "customers", a.ID); after != before {
			t.Errorf("the customer changed:\nbefore %s\nafter  %s", before, after)
		}
		var order struct {
			BillingName string `db:"billing_name"`
			City        string `db:"city"`
		}
		s.Get(t, &order, `SELECT billing_name, billing_address->>'city' AS city FROM orders WHERE checkout_id = $1`, c.ID)
		if order.BillingName != "Mallory Inc" || order.City != "Berlin" {
			t.Errorf("order billing = %+v, want the buyer's details on the order", order)
		}
		var subMethod uuid.UUID
		s.Get(t, &subMethod, `SELECT payment_method_id FROM subscriptions WHERE checkout_id = $1`, c.ID)
		var last4 string
		s.Get(t, &last4, `SELECT last4 FROM payment_methods WHERE id = $1`, subMethod)
		if last4 != "4444" {
			t.Errorf("subscription pays with card ending %s, want the buyer's own card", last4)
		}
	})

	t.Run("a seller-bound customer's saved card pays; an existing name stays and billing details are updated", func(t *testing.T) {
		a := ckNewVictim(t, s, tok, "")
		c := open(t, vars{"customerId": a.ID})
		in := ckStranger(c.ClientSecret, "ignored@example.com")
		in["paymentMethodId"] = a.method
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, "", ckConfirm, vars{"in": in}, &out)
		if got := out.ConfirmCheckout; got.Status != "succeeded" || *got.CustomerID != a.ID {
			t.Fatalf("status %s customer %v", got.Status, got.CustomerID)
		}
		var got customer
		s.Query(t, tok, `query($id: UUID!) { customer(id: $id) { `+customerFields+` } }`, vars{"id": a.ID},
			&struct{ Customer *customer }{&got})
		if *got.Name != "Alice Liddell" || *got.BillingName != "Mallory Inc" || got.BillingAddress.Country != "DE" ||
			len(got.TaxID) == 0 || got.TaxID[0] != "DE123456788" || *got.Email != *a.Email {
			t.Errorf("customer = name %v billing %v %+v tax %v email %v; want the name kept and the billing details updated",
				*got.Name, *got.BillingName, got.BillingAddress, got.TaxID, *got.Email)
		}
	})

	t.Run("a customer made later with the checkout's external id is bound by the seller and its card pays", func(t *testing.T) {
		ext := "late-" + uuid.NewString()[:8]
		c := open(t, vars{"externalCustomerId": ext})
		a := ckNewVictim(t, s, tok, ext)
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, "", ckConfirm, vars{"in": vars{"clientSecret": c.ClientSecret,
			"customerEmail": "late@example.com", "paymentMethodId": a.method}}, &out)
		if got := out.ConfirmCheckout; got.Status != "succeeded" || *got.CustomerID != a.ID {
			t.Errorf("status %s customer %v, want succeeded for %s", got.Status, got.CustomerID, a.ID)
		}
	})

	t.Run("an unmatched external id does not bind the customer matched by email", func(t *testing.T) {
		a := ckNewVictim(t, s, tok, "")
		c := open(t, vars{"externalCustomerId": "nobody-" + uuid.NewString()[:8]})
		in := ckStranger(c.ClientSecret, *a.Email)
		in["paymentMethodId"] = a.method
		e := s.QueryError(t, "", ckConfirm, vars{"in": in})
		wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "paymentMethodId"},
			Msg: "Payment method does not exist.", Input: a.method.String()})
	})

	t.Run("the matched customer's own session may pay with its saved card; another customer's session may not", func(t *testing.T) {
		a := ckNewVictim(t, s, tok, "")
		other := s.NewCustomer(t, org.ID, "")
		c := open(t, nil)
		in := vars{"clientSecret": c.ClientSecret, "customerEmail": *a.Email, "paymentMethodId": a.method}
		e := s.QueryError(t, s.NewCustomerSession(t, org.ID, other.ID), ckConfirm, vars{"in": in})
		wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "paymentMethodId"},
			Msg: "Payment method does not exist.", Input: a.method.String()})
		var out struct{ ConfirmCheckout ckCheckout }
		s.Query(t, s.NewCustomerSession(t, org.ID, a.ID), ckConfirm, vars{"in": in}, &out)
		if got := out.ConfirmCheckout; got.Status != "succeeded" || *got.CustomerID != a.ID {
			t.Errorf("status %s customer %v, want succeeded for %s", got.Status, got.CustomerID, a.ID)
		}
	})

	t.Run("a session of another organization's customer does not bind", func(t *testing.T) {
		a := ckNewVictim(t, s, tok, "")
		otherOrg := s.NewOrg(t, resolverstest.AllScopes)
		outsider := createCustomer(t, s, otherOrg.Token, vars{"email": *a.Email})
		c := open(t, nil)
		in := vars{"clientSecret": c.ClientSecret, "customerEmail": *a.Email, "paymentMethodId": a.method}
		e := s.QueryError(t, s.NewCustomerSession(t, otherOrg.ID, outsider.ID), ckConfirm, vars{"in": in})
		wantInvalid(t, e, fieldErr{Type: "value_error", Loc: []any{"input", "paymentMethodId"},
			Msg: "Payment method does not exist.", Input: a.method.String()})
	})
}

func TestConfirmCheckoutRefusesBeforeTheProcessor(t *testing.T) {
	t.Parallel()
	s, proc := ckServer(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	ebook := ckProduct(t, s, org.Token, "Ebook", "", ckFixed(2000))
	done := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{ebook.ID}, "customerEmail": "done@example.com"})
	s.Query(t, "", ckConfirm, vars{"in": vars{"clientSecret": done.ClientSecret, "paymentToken": "tok_visa"}}, nil)
	expired := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{ebook.ID}, "customerEmail": "late@example.com"})
	s.Exec(t, `UPDATE checkouts SET expires_at = now() - interval '1 minute' WHERE id = $1`, expired.ID)
	for _, tc := range []struct {
		name, secret, code, reason string
	}{
		{"an unknown client secret", "till_c_unknown", "NOT_FOUND", "ResourceNotFound"},
		{"a checkout already paid", done.ClientSecret, "CONFLICT", "NotOpenCheckout"},
		{"an expired checkout", expired.ClientSecret, "CONFLICT", "ExpiredCheckoutError"},
	} {
		t.Run(tc.name+" is refused without saving the payment token at the processor", func(t *testing.T) {
			saves := proc.saves.Load()
			e := s.QueryError(t, "", ckConfirm, vars{"in": vars{"clientSecret": tc.secret, "paymentToken": "tok_visa"}})
			wantError(t, e, tc.code, tc.reason)
			if n := proc.saves.Load() - saves; n != 0 {
				t.Errorf("%d payment tokens saved at the processor, want none", n)
			}
		})
	}
}

func TestCheckoutSellerFieldsStayWithTheSeller(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	ebook := ckProduct(t, s, org.Token, "Ebook", "", ckFixed(0))
	cust := s.NewCustomer(t, org.ID, "crm-42")
	c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{ebook.ID}, "externalCustomerId": "crm-42",
		"metadata": vars{"margin": "thin"}, "customerMetadata": vars{"segment": "whale"}})
	const fields = `id metadata customerMetadata externalCustomerId`
	type view struct {
		ID                 uuid.UUID      `json:"id"`
		Metadata           map[string]any `json:"metadata"`
		CustomerMetadata   map[string]any `json:"customerMetadata"`
		ExternalCustomerID *string        `json:"externalCustomerId"`
	}
	hidden := func(v view) bool {
		return v.ID == c.ID && len(v.Metadata) == 0 && len(v.CustomerMetadata) == 0 && v.ExternalCustomerID == nil
	}
	bySecret := `query($s: String!) { checkoutByClientSecret(clientSecret: $s) { ` + fields + ` } }`
	otherOrg := s.NewOrg(t, resolverstest.AllScopes)

	for _, tc := range []struct{ name, token string }{
		{"an anonymous buyer", ""},
		{"the customer's own portal session", s.NewCustomerSession(t, org.ID, cust.ID)},
		{"another organization's token", otherOrg.Token},
	} {
		t.Run(tc.name+" reading by client secret sees none of the seller's metadata or ids", func(t *testing.T) {
			var out struct{ CheckoutByClientSecret view }
			s.Query(t, tc.token, bySecret, vars{"s": c.ClientSecret}, &out)
			if !hidden(out.CheckoutByClientSecret) {
				t.Errorf("read %+v, want the seller's fields empty", out.CheckoutByClientSecret)
			}
		})
	}

	t.Run("the seller reads them by id and by client secret", func(t *testing.T) {
		var byID struct{ Checkout view }
		s.Query(t, org.Token, `query($id: UUID!) { checkout(id: $id) { `+fields+` } }`, vars{"id": c.ID}, &byID)
		var bySec struct{ CheckoutByClientSecret view }
		s.Query(t, org.Token, bySecret, vars{"s": c.ClientSecret}, &bySec)
		for _, v := range []view{byID.Checkout, bySec.CheckoutByClientSecret} {
			if v.Metadata["margin"] != "thin" || v.CustomerMetadata["segment"] != "whale" || v.ExternalCustomerID == nil || *v.ExternalCustomerID != "crm-42" {
				t.Errorf("seller read %+v, want the metadata and external id", v)
			}
		}
	})

	t.Run("the buyer's confirmation answer hides them too", func(t *testing.T) {
		var out struct{ ConfirmCheckout view }
		s.Query(t, "", `mutation($in: CheckoutConfirmInput!) { confirmCheckout(input: $in) { `+fields+` } }`,
			vars{"in": vars{"clientSecret": c.ClientSecret}}, &out)
		if !hidden(out.ConfirmCheckout) {
			t.Errorf("confirmation %+v, want the seller's fields empty", out.ConfirmCheckout)
		}
	})
}

// A checkout's benefits are public to anyone holding its client secret, so they are
// BenefitPublic: what each benefit is, never its properties (a custom benefit's note is for
// its grantees only, a license key's settings for the seller).
func TestCheckoutBenefitsAreThePublicView(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	secret := createBenefit(t, s, org.Token, vars{"type": "custom", "description": "Members' room",
		"properties": vars{"note": "invite: https://chat.example/secret"}})
	p := s.NewProduct(t, org.ID, "Course", secret.ID)
	c := ckNewCheckout(t, s, org.Token, vars{"products": []uuid.UUID{p.ID}})

	var out struct {
		CheckoutByClientSecret struct {
			Products []struct {
				Benefits []struct {
					ID          uuid.UUID
					Type        string
					Description string
				}
			}
		}
	}
	s.Query(t, "", `query($s: String!) { checkoutByClientSecret(clientSecret: $s) {
		products { benefits { id type description } } } }`, vars{"s": c.ClientSecret}, &out)
	got := out.CheckoutByClientSecret.Products
	if len(got) != 1 || len(got[0].Benefits) != 1 || got[0].Benefits[0].ID != secret.ID ||
		got[0].Benefits[0].Description != "Members' room" {
		t.Fatalf("benefits %+v, want the course's one benefit", got)
	}
	for _, field := range []string{"properties", "custom { note }", "licenseKeys { prefix }", "metadata"} {
		e := s.QueryError(t, "", `query($s: String!) { checkoutByClientSecret(clientSecret: $s) {
			products { benefits { `+field+` } } } }`, vars{"s": c.ClientSecret})
		if e.Extensions.Code != "BAD_USER_INPUT" || !strings.Contains(e.Message, "BenefitPublic") {
			t.Errorf("selecting %s: %+v, want a validation error naming BenefitPublic", field, e)
		}
	}
}
