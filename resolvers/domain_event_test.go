package resolvers_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/resolvers/resolverstest"
)

func TestCustomerChangesAreRecordedAsEvents(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	org := s.NewOrg(t, resolverstest.AllScopes)
	other := s.NewOrg(t, resolverstest.AllScopes)
	c := createCustomer(t, s, org.Token, vars{"email": "events@example.com"})
	createCustomer(t, s, other.Token, vars{"email": "events@example.com"})
	s.Query(t, org.Token, `mutation($id: UUID!) { updateCustomer(input: {id: $id, name: "Renamed"}) { id } }`, vars{"id": c.ID}, nil)
	s.Query(t, org.Token, `mutation($id: UUID!) { updateCustomer(input: {id: $id}) { id } }`, vars{"id": c.ID}, nil)
	session := s.NewCustomerSession(t, org.ID, c.ID)
	s.Query(t, session, `mutation { portalUpdateCustomer(input: {billingName: "Events Ltd"}) { id } }`, nil, nil)

	var out struct {
		DomainEvents struct {
			Items []struct {
				Type     string
				ObjectID string
				Payload  any
			}
			Pagination struct{ TotalCount int }
		}
	}
	s.Query(t, org.Token, `{ domainEvents(limit: 100) { items { type objectId payload } pagination { totalCount } } }`, nil, &out)
	var types []string
	for _, e := range out.DomainEvents.Items {
		if strings.HasPrefix(e.Type, "member.") { // the owner made with the customer
			continue
		}
		if e.ObjectID != c.ID.String() {
			t.Errorf("event %s is about %s, not the customer", e.Type, e.ObjectID)
		}
		types = append(types, e.Type)
	}
	want := []string{"customer.updated", "customer.updated", "customer.created"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("events newest first (-want +got); an update that changed nothing records none:\n%s", diff)
	}

	var filtered struct {
		DomainEvents struct{ Pagination struct{ TotalCount int } }
	}
	s.Query(t, org.Token, `{ domainEvents(type: ["customer.created"]) { pagination { totalCount } } }`, nil, &filtered)
	if filtered.DomainEvents.Pagination.TotalCount != 1 {
		t.Errorf("type filter total = %d, want 1 (other organizations' events never show)", filtered.DomainEvents.Pagination.TotalCount)
	}
}
