package resolvers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"till/resolvers/resolverstest"
	"till/storage"
	"till/storage/storagetest"
)

// TestLicenseValidationCostsOneStatement pins the hot path's cost: a successful validation,
// with its customer and activation rendered, is one statement once the key's customer is
// cached; only a failed one reads the key a second time to say why, and only a customer
// this process has not seen, or has changed, is read again. Counted at the driver, so a
// regression to SELECT-then-UPDATE or a loader query for the customer shows. Preparing the
// validation, once per connection, is not counted. Not parallel, like the other statement
// counts.
func TestLicenseValidationCostsOneStatement(t *testing.T) {
	db, counter := resolverstest.OpenCountingDB(t, storagetest.DSN(t))
	s := resolverstest.NewWithDB(t, db)
	org := s.NewOrg(t, resolverstest.AllScopes)
	c := s.NewCustomer(t, org.ID, "")
	var benefitID uuid.UUID
	s.Get(t, &benefitID, `INSERT INTO benefits (organization_id, type, description, properties)
		VALUES ($1, 'license_keys', 'Key', '{}') RETURNING id`, org.ID)
	limit := 3
	k, err := storage.IssueLicenseKey(context.Background(), db, org.ID, benefitID, c.ID, nil, "COST-KEY",
		storage.LicenseKeyTerms{LimitActivations: &limit}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w := &keyWorld{grantWorld: &grantWorld{s: s, org: org}, key: licenseKey{ID: k.ID, Key: k.Key}}
	activation, gqlErr := w.activate(t, vars{"label": "m"})
	if gqlErr != nil {
		t.Fatal(gqlErr)
	}
	rename := func(name string) func() {
		return func() {
			s.Query(t, org.Token, updateCustomerDoc, vars{"input": vars{"id": c.ID, "name": name}}, nil)
		}
	}
	for _, tc := range []struct {
		name     string
		before   func()
		token    string
		in       vars
		valid    bool
		want     int64
		wantName string
	}{
		{"first validation reads the customer", nil, "", vars{}, true, 2, ""},
		{"public, valid, with the activation", nil, "", vars{"activationId": activation, "incrementUsage": 1}, true, 1, ""},
		{"public, failed", nil, "", vars{"benefitId": uuid.New()}, false, 2, ""},
		{"organization token, valid (token looked up once)", nil, org.Token, vars{}, true, 2, ""},
		{"a changed customer is read again", rename("Ada"), "", vars{}, true, 2, "Ada"},
		{"and then cached again", nil, "", vars{}, true, 1, "Ada"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			counter.Reset()
			got := w.validate(t, tc.token, tc.in)
			snap := counter.Snapshot()
			if n := snap.Statements() - snap.Prepares; got.Valid != tc.valid || n != tc.want {
				t.Errorf("valid %v with %d statements (%s), want %v with %d", got.Valid, n, counter.Snapshot(), tc.valid, tc.want)
			}
			if tc.wantName != "" && (got.LicenseKey == nil || got.LicenseKey.Customer.Name == nil || *got.LicenseKey.Customer.Name != tc.wantName) {
				t.Errorf("customer = %+v, want the name %q", got.LicenseKey, tc.wantName)
			}
		})
	}
}
