package resolvers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// fuzzOperations are representative operations whose variables reach the database: a
// filter with metadata, a lookup by a client's string, a creation with metadata, event
// ingestion with JSON metadata and public license-key validation.
var fuzzOperations = []string{
	`query($filter: CustomerFilter, $sorting: [String!]) { customers(filter: $filter, sorting: $sorting, limit: 5) { items { id } } }`,
	`query($id: String!) { customerByExternalId(externalId: $id) { id } }`,
	`mutation($input: CustomerCreateInput!) { createCustomer(input: $input) { id metadata } }`,
	`mutation($input: UsageEventsIngestInput!) { ingestEvents(input: $input) { inserted duplicates } }`,
	`mutation($input: LicenseKeyValidateInput!) { portalValidateLicenseKey(input: $input) { code valid } }`,
	`query($filter: OrderFilter) { orders(filter: $filter, limit: 5) { items { id } } }`,
}

// FuzzGraphQLVariables posts the operations above to the real /graphql handler, over one
// database for the whole target, with untrusted variables as each kind of caller: no input
// may end in a server error, at the HTTP level or as an INTERNAL error of a field.
func FuzzGraphQLVariables(f *testing.F) {
	s := resolverstest.New(f)
	org := s.NewOrg(f, resolverstest.AllScopes)
	c := s.NewCustomer(f, org.ID, "fuzz-1")
	tokens := []string{"", org.Token, s.NewCustomerSession(f, org.ID, c.ID)}
	schema := resolvers.New(resolvers.Deps{}).Schema().Schema()
	for _, op := range fuzzOperations {
		if _, errs := gqlparser.LoadQuery(schema, op); errs != nil {
			f.Fatalf("operation %s: %v", op, errs)
		}
	}
	seeds := []string{
		`{"filter":{"email":"a\u0000","metadata":[{"key":"k\u0000","values":["v"]}]},"sorting":["-created_at"]}`,
		`{"id":"a\u0000b"}`, `{"id":"\ud800"}`,
		`{"input":{"email":"x@example.com","name":"n","metadata":{"k":1e400,"j":"\u0000"}}}`,
		`{"input":{"events":[{"name":"a","externalCustomerId":"x","metadata":{"k":1e400,"n":{"a":[-1e400]}}}]}}`,
		`{"input":{"events":[{"name":"a","externalCustomerId":"x","metadata":{"k\u0000":1}}]}}`,
		`{"input":{"key":"k\u0000","organizationId":"` + org.ID.String() + `","conditions":{"a":1e400}}}`,
		`{"filter":{"externalCustomerId":["\u0000"],"metadata":[{"key":"k","values":["\u0000"]}]}}`,
		`{"filter":5}`, `null`, `{"input":{"events":[]}}`,
	}
	for i, seed := range seeds {
		f.Add(uint8(i), uint8(i), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, op, who uint8, variables []byte) {
		query, _ := json.Marshal(fuzzOperations[int(op)%len(fuzzOperations)])
		body := append(append(append([]byte(`{"query":`), query...), `,"variables":`...), variables...)
		body = append(body, '}')
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token := tokens[int(who)%len(tokens)]; token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode >= http.StatusInternalServerError || strings.Contains(string(out), `"code":"INTERNAL"`) {
			t.Fatalf("HTTP %d for variables %s: %s", res.StatusCode, variables, out)
		}
	})
}
