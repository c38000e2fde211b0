package resolvers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"till/resolvers/resolverstest"
)

const (
	createCustomerDoc = `mutation($input: CustomerCreateInput!) { createCustomer(input: $input) { ` + customerFields + ` } }`
	updateCustomerDoc = `mutation($input: CustomerUpdateInput!) { updateCustomer(input: $input) { ` + customerFields + ` } }`
	deleteCustomerDoc = `mutation($id: UUID!) { deleteCustomer(id: $id) { ` + customerFields + ` } }`
	getCustomerDoc    = `query($id: UUID!) { customer(id: $id) { ` + customerFields + ` } }`
	getByExternalDoc  = `query($externalId: String!) { customerByExternalId(externalId: $externalId) { ` + customerFields + ` } }`
	listCustomersDoc  = `query($page: Int, $limit: Int, $sorting: [String!], $filter: CustomerFilter) {
		customers(page: $page, limit: $limit, sorting: $sorting, filter: $filter) {
			items { id email name externalId } pagination { totalCount maxPage } } }`
)

func TestCreateCustomer(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	other := s.NewOrg(t, resolverstest.AllScopes)

	t.Run("an individual customer with every field is stored and returned", func(t *testing.T) {
		got := createCustomer(t, s, org.Token, vars{
			"email": "ann@example.com", "name": "Ann", "externalId": "ext-ann", "billingName": "Ann Ltd",
			"billingAddress": vars{"line1": "1 Rue de Rivoli", "city": "Paris", "postalCode": "75001", "country": "FR"},
			"taxId":          "FR 61 954 506 077", "locale": "fr", "metadata": vars{"plan": "pro", "seats": 3, "vip": true},
		})
		want := customer{
			Email: ptr("ann@example.com"), Name: ptr("Ann"), ExternalID: ptr("ext-ann"), Type: "individual",
			BillingName: ptr("Ann Ltd"), BillingAddress: &address{Line1: ptr("1 Rue de Rivoli"), City: ptr("Paris"),
				PostalCode: ptr("75001"), Country: "FR"},
			TaxID: []string{"FR61954506077", "eu_vat"}, Locale: ptr("fr"),
			Metadata:       map[string]any{"plan": "pro", "seats": float64(3), "vip": true},
			OrganizationID: org.ID,
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(customer{}, "ID")); diff != "" {
			t.Errorf("created customer (-want +got):\n%s", diff)
		}
		if got.ID == uuid.Nil {
			t.Error("created customer has no id")
		}
	})

	t.Run("a team customer needs no email when it is given an owner", func(t *testing.T) {
		got := createCustomer(t, s, org.Token, vars{"type": "team", "name": "Acme", "owner": vars{"email": "boss@acme.example"}})
		if got.Type != "team" || got.Email != nil {
			t.Errorf("team customer = %+v", got)
		}
	})

	t.Run("the same email and external id may exist in another organization", func(t *testing.T) {
		createCustomer(t, s, org.Token, vars{"email": "shared@example.com", "externalId": "shared"})
		got := createCustomer(t, s, other.Token, vars{"email": "shared@example.com", "externalId": "shared"})
		if got.OrganizationID != other.ID {
			t.Errorf("organizationId = %s, want %s", got.OrganizationID, other.ID)
		}
	})

	createCustomer(t, s, org.Token, vars{"email": "taken@example.com", "externalId": "taken"})
	manyKeys := vars{}
	for i := range 51 {
		manyKeys[fmt.Sprintf("k%d", i)] = "v"
	}
	longKey := strings.Repeat("k", 41)
	longValue := strings.Repeat("v", 501)

	for _, tc := range []struct {
		name  string
		input vars
		want  fieldErr
	}{
		{"an individual customer without email is rejected", vars{"name": "No Email"},
			fieldErr{Type: "missing", Loc: []any{"input", "email"}, Msg: "Field required"}},
		{"an email that is no address is rejected", vars{"email": "not-an-email"},
			fieldErr{Type: "value_error", Loc: []any{"input", "email"},
				Msg: "value is not a valid email address: The email address is not valid.", Input: "not-an-email"}},
		{"an email with a display name is rejected", vars{"email": "Ann <ann@example.com>"},
			fieldErr{Type: "value_error", Loc: []any{"input", "email"},
				Msg: "value is not a valid email address: The email address is not valid.", Input: "Ann <ann@example.com>"}},
		{"an email whose domain has no dot is rejected", vars{"email": "ann@localhost"},
			fieldErr{Type: "value_error", Loc: []any{"input", "email"},
				Msg: "value is not a valid email address: The email address is not valid.", Input: "ann@localhost"}},
		{"a duplicate email in the organization is rejected whatever its case", vars{"email": "Taken@Example.com"},
			fieldErr{Type: "value_error", Loc: []any{"input", "email"},
				Msg: "A customer with this email address already exists.", Input: "Taken@Example.com"}},
		{"a duplicate external id in the organization is rejected", vars{"email": "fresh@example.com", "externalId": "taken"},
			fieldErr{Type: "value_error", Loc: []any{"input", "externalId"},
				Msg: "A customer with this external ID already exists.", Input: "taken"}},
		{"metadata with more than 50 keys is rejected", vars{"email": "m1@example.com", "metadata": manyKeys},
			fieldErr{Type: "too_long", Loc: []any{"input", "metadata"}, Msg: "Metadata can have at most 50 keys.",
				Input: map[string]any(manyKeys)}},
		{"a metadata key longer than 40 characters is rejected", vars{"email": "m2@example.com", "metadata": vars{longKey: "v"}},
			fieldErr{Type: "string_too_long", Loc: []any{"input", "metadata", longKey},
				Msg: "Metadata keys must be 1 to 40 characters long.", Input: longKey}},
		{"an empty metadata key is rejected", vars{"email": "m3@example.com", "metadata": vars{"": "v"}},
			fieldErr{Type: "string_too_long", Loc: []any{"input", "metadata", ""},
				Msg: "Metadata keys must be 1 to 40 characters long.", Input: ""}},
		{"a metadata string longer than 500 characters is rejected", vars{"email": "m4@example.com", "metadata": vars{"k": longValue}},
			fieldErr{Type: "string_too_long", Loc: []any{"input", "metadata", "k"},
				Msg: "String should have at most 500 characters", Input: longValue}},
		{"a billing country that is not an ISO code is rejected",
			vars{"email": "a1@example.com", "billingAddress": vars{"country": "France"}},
			fieldErr{Type: "literal_error", Loc: []any{"input", "billingAddress", "country"},
				Msg: "Input should be a valid ISO 3166-1 alpha-2 country code", Input: "France"}},
		{"a tax id without a billing address is rejected", vars{"email": "t1@example.com", "taxId": "FR61954506077"},
			fieldErr{Type: "value_error", Loc: []any{"input", "taxId"},
				Msg: "Country is required to validate tax ID.", Input: "FR61954506077"}},
		{"a tax id that does not fit the country is rejected",
			vars{"email": "t2@example.com", "taxId": "123", "billingAddress": vars{"country": "GB"}},
			fieldErr{Type: "invalid", Loc: []any{"input", "taxId"}, Msg: "Invalid tax ID.", Input: "123"}},
		{"an EU VAT number in another shape than the member state's is rejected",
			vars{"email": "t4@example.com", "taxId": "DE12345", "billingAddress": vars{"country": "DE"}},
			fieldErr{Type: "invalid", Loc: []any{"input", "taxId"}, Msg: "Invalid tax ID.", Input: "DE12345"}},
		{"letters where an EU VAT number has digits are rejected",
			vars{"email": "t5@example.com", "taxId": "nonsense", "billingAddress": vars{"country": "DE"}},
			fieldErr{Type: "invalid", Loc: []any{"input", "taxId"}, Msg: "Invalid tax ID.", Input: "nonsense"}},
		{"a tax id of a country without rules is rejected",
			vars{"email": "t3@example.com", "taxId": "123456", "billingAddress": vars{"country": "ZA"}},
			fieldErr{Type: "invalid", Loc: []any{"input", "taxId"}, Msg: "Invalid tax ID.", Input: "123456"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantInvalid(t, s.QueryError(t, org.Token, createCustomerDoc, vars{"input": tc.input}), tc.want)
		})
	}

	t.Run("a metadata value that is an object is a request validation error", func(t *testing.T) {
		got := s.QueryError(t, org.Token, createCustomerDoc, vars{"input": vars{"email": "obj@example.com", "metadata": vars{"a": vars{"b": 1}}}})
		wantError(t, got, "BAD_USER_INPUT", "RequestValidationError", fieldErr{Type: "value_error", Loc: []any{"input", "metadata"},
			Msg: `Metadata value of "a" must be a string, number or boolean`})
	})

	t.Run("tax ids are normalised and typed by country", func(t *testing.T) {
		for _, tc := range []struct {
			country, in string
			want        []string
		}{
			{"DE", "de 123456789", []string{"DE123456789", "eu_vat"}},
			{"DE", "123456789", []string{"DE123456789", "eu_vat"}},
			{"GR", "123456789", []string{"EL123456789", "eu_vat"}},
			{"GB", "GB123456789", []string{"GB123456789", "gb_vat"}},
			{"US", "12-3456789", []string{"123456789", "us_ein"}},
			{"CA", "123456789RT0001", []string{"123456789RT0001", "ca_gst_hst"}},
		} {
			got := createCustomer(t, s, org.Token, vars{"email": fmt.Sprintf("tax-%s@example.com", uuid.NewString()[:8]),
				"taxId": tc.in, "billingAddress": vars{"country": tc.country}})
			if diff := cmp.Diff(tc.want, got.TaxID); diff != "" {
				t.Errorf("taxId of %q in %s (-want +got):\n%s", tc.in, tc.country, diff)
			}
		}
	})

	t.Run("an organizationId other than the token's is rejected", func(t *testing.T) {
		got := s.QueryError(t, org.Token, createCustomerDoc, vars{"input": vars{"email": "x@example.com", "organizationId": other.ID}})
		wantInvalid(t, got, fieldErr{Type: "value_error", Loc: []any{"input", "organizationId"},
			Msg: "Organization not found.", Input: other.ID.String()})
	})
}

func TestGetCustomer(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "customers:read customers:write")
	c := s.NewCustomer(t, org.ID, "ext-1")

	t.Run("by id returns the customer", func(t *testing.T) {
		var out struct{ Customer customer }
		s.Query(t, org.Token, getCustomerDoc, vars{"id": c.ID}, &out)
		if diff := cmp.Diff(c, out.Customer); diff != "" {
			t.Errorf("customer (-want +got):\n%s", diff)
		}
	})
	t.Run("by external id returns the customer", func(t *testing.T) {
		var out struct{ CustomerByExternalID customer }
		s.Query(t, org.Token, getByExternalDoc, vars{"externalId": "ext-1"}, &out)
		if diff := cmp.Diff(c, out.CustomerByExternalID); diff != "" {
			t.Errorf("customer (-want +got):\n%s", diff)
		}
	})
	t.Run("an unknown id is ResourceNotFound", func(t *testing.T) {
		wantError(t, s.QueryError(t, org.Token, getCustomerDoc, vars{"id": uuid.New()}), "NOT_FOUND", "ResourceNotFound")
	})
	t.Run("an unknown external id is ResourceNotFound", func(t *testing.T) {
		wantError(t, s.QueryError(t, org.Token, getByExternalDoc, vars{"externalId": "nope"}), "NOT_FOUND", "ResourceNotFound")
	})
	t.Run("a malformed id is a request validation error, not a server error", func(t *testing.T) {
		got := s.QueryError(t, org.Token, getCustomerDoc, vars{"id": "not-a-uuid"})
		wantError(t, got, "BAD_USER_INPUT", "RequestValidationError",
			fieldErr{Type: "value_error", Loc: []any{"id"}, Msg: "invalid UUID length: 10"})
	})
	t.Run("the customer's organization resolves", func(t *testing.T) {
		var out struct {
			Customer struct{ Organization struct{ ID, Slug string } }
		}
		s.Query(t, org.Token, `query($id: UUID!) { customer(id: $id) { organization { id slug } } }`, vars{"id": c.ID}, &out)
		if out.Customer.Organization.ID != org.ID.String() || out.Customer.Organization.Slug != org.Slug {
			t.Errorf("organization = %+v, want %s %s", out.Customer.Organization, org.ID, org.Slug)
		}
	})
}

func TestUpdateCustomer(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)

	full := func(t *testing.T) customer {
		t.Helper()
		return createCustomer(t, s, org.Token, vars{
			"email": fmt.Sprintf("u-%s@example.com", uuid.NewString()[:8]), "name": "Ursula",
			"externalId": "ext-" + uuid.NewString()[:8], "billingName": "U Ltd", "locale": "en",
			"billingAddress": vars{"line1": "Street 1", "country": "DE"}, "taxId": "DE123456789",
			"metadata": vars{"a": "1"},
		})
	}
	update := func(t *testing.T, input vars) customer {
		t.Helper()
		var out struct{ UpdateCustomer customer }
		s.Query(t, org.Token, updateCustomerDoc, vars{"input": input}, &out)
		return out.UpdateCustomer
	}

	t.Run("absent fields are left alone", func(t *testing.T) {
		c := full(t)
		got := update(t, vars{"id": c.ID})
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("customer changed by an empty update (-before +after):\n%s", diff)
		}
	})

	t.Run("an update that changes nothing leaves modified_at alone", func(t *testing.T) {
		c := full(t)
		var before, after *time.Time
		s.Get(t, &before, `SELECT modified_at FROM customers WHERE id = $1`, c.ID)
		update(t, vars{"id": c.ID})
		s.Get(t, &after, `SELECT modified_at FROM customers WHERE id = $1`, c.ID)
		if before != nil || after != nil {
			t.Errorf("modified_at went from %v to %v on an empty update", before, after)
		}
	})

	t.Run("null fields are cleared", func(t *testing.T) {
		c := full(t)
		got := update(t, vars{"id": c.ID, "name": nil, "billingName": nil, "locale": nil, "taxId": nil})
		want := c
		want.Name, want.BillingName, want.Locale, want.TaxID = nil, nil, nil, nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("customer (-want +got):\n%s", diff)
		}
	})

	t.Run("given fields are replaced", func(t *testing.T) {
		c := full(t)
		got := update(t, vars{"id": c.ID, "name": "New", "metadata": vars{"b": "2"}, "locale": "de"})
		want := c
		want.Name, want.Locale, want.Metadata = ptr("New"), ptr("de"), map[string]any{"b": "2"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("customer (-want +got):\n%s", diff)
		}
	})

	t.Run("a changed email is stored and marked unverified", func(t *testing.T) {
		c := full(t)
		got := update(t, vars{"id": c.ID, "email": "changed-" + *c.Email})
		if *got.Email != "changed-"+*c.Email || got.EmailVerified {
			t.Errorf("email = %v verified %v", *got.Email, got.EmailVerified)
		}
	})

	t.Run("a null email is rejected", func(t *testing.T) {
		c := full(t)
		wantInvalid(t, s.QueryError(t, org.Token, updateCustomerDoc, vars{"input": vars{"id": c.ID, "email": nil}}),
			fieldErr{Type: "value_error", Loc: []any{"input", "email"}, Msg: "Email cannot be removed."})
	})

	t.Run("an email of another customer is rejected with the attempted value", func(t *testing.T) {
		a, b := full(t), full(t)
		got := s.QueryError(t, org.Token, updateCustomerDoc, vars{"input": vars{"id": b.ID, "email": *a.Email}})
		wantInvalid(t, got, fieldErr{Type: "value_error", Loc: []any{"input", "email"},
			Msg: "A customer with this email address already exists.", Input: *a.Email})
	})

	t.Run("an external id of another customer is rejected with the attempted value", func(t *testing.T) {
		a := full(t)
		b := createCustomer(t, s, org.Token, vars{"email": fmt.Sprintf("x-%s@example.com", uuid.NewString()[:8])})
		got := s.QueryError(t, org.Token, updateCustomerDoc, vars{"input": vars{"id": b.ID, "externalId": *a.ExternalID}})
		wantInvalid(t, got, fieldErr{Type: "value_error", Loc: []any{"input", "externalId"},
			Msg: "A customer with this external ID already exists.", Input: *a.ExternalID})
	})

	t.Run("an external id once set cannot be changed or removed", func(t *testing.T) {
		c := full(t)
		for _, v := range []any{nil, "other-" + *c.ExternalID} {
			wantInvalid(t, s.QueryError(t, org.Token, updateCustomerDoc, vars{"input": vars{"id": c.ID, "externalId": v}}),
				fieldErr{Type: "value_error", Loc: []any{"input", "externalId"},
					Msg: "Customer external ID cannot be updated once set.", Input: v})
		}
		same := update(t, vars{"id": c.ID, "externalId": *c.ExternalID})
		if *same.ExternalID != *c.ExternalID {
			t.Errorf("external id = %q, want unchanged %q", *same.ExternalID, *c.ExternalID)
		}
	})

	t.Run("too many metadata keys are rejected", func(t *testing.T) {
		c := full(t)
		m := vars{}
		for i := range 51 {
			m[fmt.Sprint(i)] = i
		}
		got := s.QueryError(t, org.Token, updateCustomerDoc, vars{"input": vars{"id": c.ID, "metadata": m}})
		if (got.Extensions.Code != "BAD_USER_INPUT" || got.Extensions.Reason != "PolarRequestValidationError") || len(got.Extensions.Fields) != 1 ||
			got.Extensions.Fields[0].Type != "too_long" {
			t.Errorf("error = %+v", got)
		}
	})

	t.Run("a new billing country re-validates the stored tax id", func(t *testing.T) {
		c := full(t)
		got := s.QueryError(t, org.Token, updateCustomerDoc, vars{"input": vars{"id": c.ID, "billingAddress": vars{"country": "US"}}})
		wantInvalid(t, got, fieldErr{Type: "invalid", Loc: []any{"input", "taxId"}, Msg: "Invalid tax ID.", Input: "DE123456789"})
	})

	t.Run("a new billing country and a matching tax id are accepted together", func(t *testing.T) {
		c := full(t)
		got := update(t, vars{"id": c.ID, "billingAddress": vars{"country": "FR"}, "taxId": "FR61954506077"})
		if diff := cmp.Diff([]string{"FR61954506077", "eu_vat"}, got.TaxID); diff != "" {
			t.Errorf("taxId (-want +got):\n%s", diff)
		}
		if got.BillingAddress == nil || got.BillingAddress.Country != "FR" || got.BillingAddress.Line1 != nil {
			t.Errorf("billingAddress = %+v, want only country FR", got.BillingAddress)
		}
	})

	t.Run("clearing the billing address and tax id together is accepted", func(t *testing.T) {
		c := full(t)
		got := update(t, vars{"id": c.ID, "billingAddress": nil, "taxId": nil})
		if got.BillingAddress != nil || got.TaxID != nil {
			t.Errorf("billingAddress = %+v, taxId = %v; want both null", got.BillingAddress, got.TaxID)
		}
	})

	t.Run("clearing only the billing address leaves a tax id it cannot validate", func(t *testing.T) {
		c := full(t)
		got := s.QueryError(t, org.Token, updateCustomerDoc, vars{"input": vars{"id": c.ID, "billingAddress": nil}})
		wantInvalid(t, got, fieldErr{Type: "value_error", Loc: []any{"input", "taxId"},
			Msg: "Country is required to validate tax ID.", Input: "DE123456789"})
	})

	t.Run("an unknown customer is ResourceNotFound", func(t *testing.T) {
		wantError(t, s.QueryError(t, org.Token, updateCustomerDoc, vars{"input": vars{"id": uuid.New(), "name": "x"}}),
			"NOT_FOUND", "ResourceNotFound")
	})
}

func TestDeleteCustomer(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	c := s.NewCustomer(t, org.ID, "ext-del")

	var out struct{ DeleteCustomer customer }
	s.Query(t, org.Token, deleteCustomerDoc, vars{"id": c.ID}, &out)
	t.Run("the deleted customer is returned with deletedAt set", func(t *testing.T) {
		if out.DeleteCustomer.ID != c.ID || out.DeleteCustomer.DeletedAt == nil {
			t.Errorf("deleted = %+v", out.DeleteCustomer)
		}
	})
	t.Run("the row is kept (soft delete)", func(t *testing.T) {
		var n int
		if err := s.DB.Get(&n, `SELECT count(*) FROM customers WHERE id = $1 AND deleted_at IS NOT NULL`, c.ID); err != nil || n != 1 {
			t.Errorf("soft-deleted rows = %d, %v", n, err)
		}
	})
	for name, tc := range map[string]struct {
		doc  string
		vars vars
	}{
		"get by id is then ResourceNotFound":          {getCustomerDoc, vars{"id": c.ID}},
		"get by external id is then ResourceNotFound": {getByExternalDoc, vars{"externalId": "ext-del"}},
		"update is then ResourceNotFound":             {updateCustomerDoc, vars{"input": vars{"id": c.ID, "name": "x"}}},
		"a second delete is ResourceNotFound":         {deleteCustomerDoc, vars{"id": c.ID}},
		"its payment methods are ResourceNotFound": {`query($id: UUID!) { paymentMethods(customerId: $id) { items { id } } }`,
			vars{"id": c.ID}},
	} {
		t.Run(name, func(t *testing.T) {
			wantError(t, s.QueryError(t, org.Token, tc.doc, tc.vars), "NOT_FOUND", "ResourceNotFound")
		})
	}
	t.Run("the list no longer shows it", func(t *testing.T) {
		var list customerList
		s.Query(t, org.Token, listCustomersDoc, nil, &list)
		if list.Customers.Pagination.TotalCount != 0 {
			t.Errorf("list = %+v", list.Customers)
		}
	})
	t.Run("its email and external id can be reused", func(t *testing.T) {
		again := createCustomer(t, s, org.Token, vars{"email": *c.Email, "externalId": "ext-del"})
		if again.ID == c.ID {
			t.Error("the deleted customer came back")
		}
	})
}

type customerList struct {
	Customers struct {
		Items []struct {
			ID         uuid.UUID
			Email      *string
			Name       *string
			ExternalID *string
		}
		Pagination struct{ TotalCount, MaxPage int }
	}
}

func (l customerList) emails() []string {
	out := []string{}
	for _, c := range l.Customers.Items {
		out = append(out, *c.Email)
	}
	return out
}

func TestListCustomers(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, "customers:read customers:write")

	t.Run("an empty list has no pages", func(t *testing.T) {
		var list customerList
		s.Query(t, org.Token, listCustomersDoc, nil, &list)
		if len(list.Customers.Items) != 0 || list.Customers.Pagination != (struct{ TotalCount, MaxPage int }{0, 0}) {
			t.Errorf("empty list = %+v", list.Customers)
		}
	})

	// Created oldest first: a, b, c, d, e (created_at is forced apart below).
	seed := []vars{
		{"email": "a@example.com", "name": "Zoe", "externalId": "x-a", "metadata": vars{"tier": "gold", "n": 1}},
		{"email": "b@example.com", "name": "Yann", "externalId": "x-b", "metadata": vars{"tier": "silver"}},
		{"email": "c@example.com", "name": "Xavier", "metadata": vars{"tier": "gold", "beta": true}},
		{"email": "d@example.com", "name": "100% Wanda"},
		{"email": "e@example.com", "name": "Vic_tor"},
	}
	for i, in := range seed {
		c := createCustomer(t, s, org.Token, in)
		s.Exec(t, `UPDATE customers SET created_at = now() - make_interval(mins => $2) WHERE id = $1`, c.ID, 10-i)
	}

	for _, tc := range []struct {
		name  string
		vars  vars
		want  []string
		total int
		max   int
	}{
		{"the default order is newest first", nil, []string{"e@example.com", "d@example.com", "c@example.com", "b@example.com", "a@example.com"}, 5, 1},
		{"sorting by created_at ascending", vars{"sorting": []string{"created_at"}}, []string{"a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com"}, 5, 1},
		{"sorting by name ascending", vars{"sorting": []string{"name"}}, []string{"d@example.com", "e@example.com", "c@example.com", "b@example.com", "a@example.com"}, 5, 1},
		{"sorting by email descending", vars{"sorting": []string{"-email"}}, []string{"e@example.com", "d@example.com", "c@example.com", "b@example.com", "a@example.com"}, 5, 1},
		{"a page of two", vars{"limit": 2, "page": 2}, []string{"c@example.com", "b@example.com"}, 5, 3},
		{"a page past the end is empty", vars{"limit": 2, "page": 4}, []string{}, 5, 3},
		{"filtering by email ignores case", vars{"filter": vars{"email": "B@EXAMPLE.COM"}}, []string{"b@example.com"}, 1, 1},
		{"filtering by external id", vars{"filter": vars{"externalId": "x-a"}}, []string{"a@example.com"}, 1, 1},
		{"the query matches names", vars{"filter": vars{"query": "xav"}}, []string{"c@example.com"}, 1, 1},
		{"the query matches external ids", vars{"filter": vars{"query": "x-b"}}, []string{"b@example.com"}, 1, 1},
		{"the query treats % literally", vars{"filter": vars{"query": "%"}}, []string{"d@example.com"}, 1, 1},
		{"the query treats _ literally", vars{"filter": vars{"query": "_"}}, []string{"e@example.com"}, 1, 1},
		{"a metadata filter matches values", vars{"filter": vars{"metadata": []vars{{"key": "tier", "values": []string{"gold"}}}}},
			[]string{"c@example.com", "a@example.com"}, 2, 1},
		{"metadata values of one key are OR-ed", vars{"filter": vars{"metadata": []vars{{"key": "tier", "values": []string{"gold", "silver"}}}}},
			[]string{"c@example.com", "b@example.com", "a@example.com"}, 3, 1},
		{"metadata keys are AND-ed", vars{"filter": vars{"metadata": []vars{
			{"key": "tier", "values": []string{"gold"}}, {"key": "beta", "values": []string{"true"}}}}},
			[]string{"c@example.com"}, 1, 1},
		{"metadata numbers compare as text", vars{"filter": vars{"metadata": []vars{{"key": "n", "values": []string{"1"}}}}},
			[]string{"a@example.com"}, 1, 1},
		{"filters combine", vars{"filter": vars{"query": "example", "metadata": []vars{{"key": "tier", "values": []string{"silver"}}}}},
			[]string{"b@example.com"}, 1, 1},
		{"no match is an empty page", vars{"filter": vars{"email": "nobody@example.com"}}, []string{}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var list customerList
			s.Query(t, org.Token, listCustomersDoc, tc.vars, &list)
			if diff := cmp.Diff(tc.want, list.emails()); diff != "" {
				t.Errorf("emails (-want +got):\n%s", diff)
			}
			if p := list.Customers.Pagination; p.TotalCount != tc.total || p.MaxPage != tc.max {
				t.Errorf("pagination = %+v, want totalCount %d maxPage %d", p, tc.total, tc.max)
			}
		})
	}

	t.Run("a limit of 100 returns 100 rows, and a larger one is refused (/v1 clamps it)", func(t *testing.T) {
		big := s.NewOrg(t, "customers:read")
		s.Exec(t, `INSERT INTO customers (organization_id, email)
			SELECT $1, 'bulk' || i || '@example.com' FROM generate_series(1, 105) AS i`, big.ID)
		var list customerList
		s.Query(t, big.Token, listCustomersDoc, vars{"limit": 100}, &list)
		if n, p := len(list.Customers.Items), list.Customers.Pagination; n != 100 || p.TotalCount != 105 || p.MaxPage != 2 {
			t.Errorf("got %d items, pagination %+v; want 100 items of 105 on 2 pages", n, p)
		}
		s.Query(t, big.Token, listCustomersDoc, vars{"limit": 100, "page": 2}, &list)
		if n := len(list.Customers.Items); n != 5 {
			t.Errorf("page 2 has %d items, want 5", n)
		}
		e := s.QueryError(t, big.Token, listCustomersDoc, vars{"limit": 1000})
		if (e.Extensions.Code != "BAD_USER_INPUT" || e.Extensions.Reason != "RequestValidationError") || len(e.Extensions.Fields) != 1 || e.Extensions.Fields[0].Type != "less_than_equal" {
			t.Errorf("limit 1000: %+v, want a less_than_equal validation error", e)
		}
	})

	for _, tc := range []struct {
		name string
		vars vars
		want fieldErr
	}{
		{"an unknown sorting criterion is rejected", vars{"sorting": []string{"-password"}},
			fieldErr{Type: "enum", Loc: []any{"query", "sorting"}, Msg: "Invalid sorting criterion.", Input: "-password"}},
		{"page 0 is rejected", vars{"page": 0},
			fieldErr{Type: "greater_than", Loc: []any{"query", "page"}, Msg: "Input should be greater than 0", Input: float64(0)}},
		{"a negative page is rejected", vars{"page": -1},
			fieldErr{Type: "greater_than", Loc: []any{"query", "page"}, Msg: "Input should be greater than 0", Input: float64(-1)}},
		{"limit 0 is rejected", vars{"limit": 0},
			fieldErr{Type: "greater_than", Loc: []any{"query", "limit"}, Msg: "Input should be greater than 0", Input: float64(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, s.QueryError(t, org.Token, listCustomersDoc, tc.vars), "BAD_USER_INPUT", "RequestValidationError", tc.want)
		})
	}
}
