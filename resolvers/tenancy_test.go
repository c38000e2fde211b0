package resolvers_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

// TestTenancy checks that an organization token never reaches another organization's rows:
// every get, update and delete of a foreign object is ResourceNotFound (never NotPermitted,
// which would confirm the object exists), references to foreign objects are validation errors,
// and lists never show foreign rows.
func TestTenancy(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	mine := s.NewOrg(t, resolverstest.AllScopes)
	theirs := s.NewOrg(t, resolverstest.AllScopes)

	myCustomer := s.NewCustomer(t, mine.ID, "shared-ext")
	myBenefit := newBenefit(t, s, mine.Token, "My benefit")
	myProduct := s.NewProduct(t, mine.ID, "My product", myBenefit.ID)

	theirCustomer := createCustomer(t, s, theirs.Token, vars{"email": "their@example.com", "externalId": "their-ext",
		"name": "Theirs", "metadata": vars{"k": "v"}})
	createCustomer(t, s, theirs.Token, vars{"email": "their-shared@example.com", "externalId": "shared-ext"})
	theirPM := s.AddCard(t, theirs.ID, theirCustomer.ID, "4242", time.Minute)
	theirBenefit := newBenefit(t, s, theirs.Token, "Their benefit")
	theirProduct := s.NewProduct(t, theirs.ID, "Their product", theirBenefit.ID)

	for _, tc := range []struct {
		name string
		doc  string
		vars vars
	}{
		{"getting their customer", getCustomerDoc, vars{"id": theirCustomer.ID}},
		{"getting their customer by external id", getByExternalDoc, vars{"externalId": "their-ext"}},
		{"updating their customer", updateCustomerDoc, vars{"input": vars{"id": theirCustomer.ID, "name": "Mine now"}}},
		{"deleting their customer", deleteCustomerDoc, vars{"id": theirCustomer.ID}},
		{"listing their customer's payment methods", `query($id: UUID!) { paymentMethods(customerId: $id) { items { id } } }`,
			vars{"id": theirCustomer.ID}},
		{"listing their customer's payment methods by external id",
			`query($ext: String!) { paymentMethods(externalCustomerId: $ext) { items { id } } }`, vars{"ext": "their-ext"}},
		{"getting their product", `query($id: UUID!) { product(id: $id) { id } }`, vars{"id": theirProduct.ID}},
		{"updating their product", `mutation($id: UUID!) { updateProduct(input: {id: $id, name: "Mine now"}) { id } }`,
			vars{"id": theirProduct.ID}},
		{"replacing their product's prices", `mutation($id: UUID!) { updateProduct(input: {id: $id, prices: [{amountType: free}]}) { id } }`,
			vars{"id": theirProduct.ID}},
		{"archiving their product", `mutation($id: UUID!) { archiveProduct(id: $id) { id } }`, vars{"id": theirProduct.ID}},
		{"setting their product's benefits", `mutation($id: UUID!) { updateProductBenefits(input: {id: $id, benefitIds: []}) { id } }`,
			vars{"id": theirProduct.ID}},
		{"getting their benefit", `query($id: UUID!) { benefit(id: $id) { id } }`, vars{"id": theirBenefit.ID}},
		{"updating their benefit", `mutation($id: UUID!) { updateBenefit(input: {id: $id, description: "Mine now"}) { id } }`,
			vars{"id": theirBenefit.ID}},
		{"deleting their benefit", `mutation($id: UUID!) { deleteBenefit(id: $id) { id } }`, vars{"id": theirBenefit.ID}},
		{"reading their organization", `query($id: UUID!) { organization(id: $id) { id } }`, vars{"id": theirs.ID}},
	} {
		t.Run(tc.name+" is ResourceNotFound", func(t *testing.T) {
			wantError(t, s.QueryError(t, mine.Token, tc.doc, tc.vars), "NOT_FOUND", "ResourceNotFound")
		})
	}

	for _, tc := range []struct {
		name string
		doc  string
		vars vars
		want fieldErr
	}{
		{"opening a session for their customer",
			`mutation($id: UUID!) { createCustomerSession(input: {customerId: $id}) { token } }`, vars{"id": theirCustomer.ID},
			fieldErr{Type: "value_error", Loc: []any{"input", "customerId"}, Msg: "Customer does not exist.", Input: theirCustomer.ID.String()}},
		{"opening a session for their customer by external id",
			`mutation { createCustomerSession(input: {externalCustomerId: "their-ext"}) { token } }`, nil,
			fieldErr{Type: "value_error", Loc: []any{"input", "externalCustomerId"}, Msg: "Customer does not exist.", Input: "their-ext"}},
		{"attaching their benefit to my product",
			`mutation($id: UUID!, $b: [UUID!]!) { updateProductBenefits(input: {id: $id, benefitIds: $b}) { id } }`,
			vars{"id": myProduct.ID, "b": []uuid.UUID{myBenefit.ID, theirBenefit.ID}},
			fieldErr{Type: "value_error", Loc: []any{"input", "benefitIds"}, Msg: "Benefit does not exist."}},
		{"creating a product with their benefit",
			`mutation($b: [UUID!]!) { createProduct(input: {name: "Sneaky", prices: [{amountType: free}], benefitIds: $b}) { id } }`,
			vars{"b": []uuid.UUID{theirBenefit.ID}},
			fieldErr{Type: "value_error", Loc: []any{"input", "benefitIds"}, Msg: "Benefit does not exist."}},
		{"creating a customer in their organization",
			`mutation($org: UUID!) { createCustomer(input: {email: "x@example.com", organizationId: $org}) { id } }`,
			vars{"org": theirs.ID},
			fieldErr{Type: "value_error", Loc: []any{"input", "organizationId"}, Msg: "Organization not found.", Input: theirs.ID.String()}},
	} {
		t.Run(tc.name+" is a validation error", func(t *testing.T) {
			wantInvalid(t, s.QueryError(t, mine.Token, tc.doc, tc.vars), tc.want)
		})
	}

	t.Run("a portal session cannot make their payment method its default", func(t *testing.T) {
		session := s.NewCustomerSession(t, mine.ID, myCustomer.ID)
		got := s.QueryError(t, session, `mutation($pm: UUID!) { portalUpdateCustomer(input: {defaultPaymentMethodId: $pm}) { id } }`,
			vars{"pm": theirPM})
		wantInvalid(t, got, fieldErr{Type: "invalid", Loc: []any{"input", "defaultPaymentMethodId"},
			Msg: "Payment method not found.", Input: theirPM.String()})
	})

	t.Run("a shared external id resolves to my own customer", func(t *testing.T) {
		var out struct{ CustomerByExternalID customer }
		s.Query(t, mine.Token, getByExternalDoc, vars{"externalId": "shared-ext"}, &out)
		if out.CustomerByExternalID.ID != myCustomer.ID {
			t.Errorf("customerByExternalId = %s, want %s", out.CustomerByExternalID.ID, myCustomer.ID)
		}
	})

	for _, tc := range []struct {
		name string
		doc  string
		vars vars
		want []string
	}{
		{"the customer list", `{ customers(limit: 100) { items { id } } }`, nil, []string{myCustomer.ID.String()}},
		{"the customer list filtered by their email", `{ customers(filter: {email: "their@example.com"}) { items { id } } }`, nil, []string{}},
		{"the customer list filtered by their external id", `{ customers(filter: {externalId: "their-ext"}) { items { id } } }`, nil, []string{}},
		{"the customer list searched by their name", `{ customers(filter: {query: "Theirs"}) { items { id } } }`, nil, []string{}},
		{"the customer list filtered by their metadata", `{ customers(filter: {metadata: [{key: "k", values: ["v"]}]}) { items { id } } }`, nil, []string{}},
		{"the product list", `{ products(limit: 100) { items { id } } }`, nil, []string{myProduct.ID.String()}},
		{"the product list filtered by their benefit", `query($b: [UUID!]) { products(filter: {benefitId: $b}) { items { id } } }`,
			vars{"b": []uuid.UUID{theirBenefit.ID}}, []string{}},
		{"the product list searched by their name", `{ products(filter: {query: "Their"}) { items { id } } }`, nil, []string{}},
		{"the benefit list", `{ benefits(limit: 100) { items { id } } }`, nil, []string{myBenefit.ID.String()}},
		{"the benefit list searched by their description", `{ benefits(filter: {query: "Their"}) { items { id } } }`, nil, []string{}},
	} {
		t.Run(tc.name+" shows only my rows", func(t *testing.T) {
			res := s.Do(t, mine.Token, tc.doc, tc.vars)
			if len(res.Errors) > 0 {
				t.Fatalf("errors: %s", res.Body)
			}
			var data map[string]struct {
				Items []struct{ ID string }
			}
			if err := jsonUnmarshal(res.Data, &data); err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, page := range data {
				for _, it := range page.Items {
					got = append(got, it.ID)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("their rows are untouched by my attempts", func(t *testing.T) {
		var c struct{ Customer customer }
		s.Query(t, theirs.Token, getCustomerDoc, vars{"id": theirCustomer.ID}, &c)
		if diff := cmp.Diff(theirCustomer, c.Customer); diff != "" {
			t.Errorf("their customer changed (-before +after):\n%s", diff)
		}
		var p struct{ Product product }
		s.Query(t, theirs.Token, `query($id: UUID!) { product(id: $id) { `+productFields+` } }`, vars{"id": theirProduct.ID}, &p)
		if diff := cmp.Diff(theirProduct, p.Product); diff != "" {
			t.Errorf("their product changed (-before +after):\n%s", diff)
		}
		var b struct{ Benefit benefit }
		s.Query(t, theirs.Token, `query($id: UUID!) { benefit(id: $id) { `+benefitFields+` } }`, vars{"id": theirBenefit.ID}, &b)
		if diff := cmp.Diff(theirBenefit, b.Benefit); diff != "" {
			t.Errorf("their benefit changed (-before +after):\n%s", diff)
		}
	})
}
