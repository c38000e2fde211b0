package resolvers_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"till/resolvers"
	"till/resolvers/resolverstest"
)

// introspectionQuery is GraphiQL's schema query, the largest document a well-behaved client
// sends without being asked to: the document limits must let it through.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    description queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description isRepeatable locations args(includeDeprecated: true) { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description specifiedByURL
  fields(includeDeprecated: true) {
    name description args(includeDeprecated: true) { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason
  }
  inputFields(includeDeprecated: true) { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue {
  name description type { ...TypeRef } defaultValue isDeprecated deprecationReason
}
fragment TypeRef on __Type {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType {
    kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }
}`

// repeat is a selection set of n copies of field; %d in field is the copy's index.
func repeat(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		b.WriteString(" ")
		if strings.Contains(field, "%d") {
			fmt.Fprintf(&b, field, i)
		} else {
			b.WriteString(field)
		}
	}
	b.WriteString(" }")
	return b.String()
}

// fragmentBomb spreads each of n fragments twice in the one before it: 2^n fields expanded
// from a document of a few hundred bytes.
func fragmentBomb(n int) string {
	var b strings.Builder
	b.WriteString("{ ...F0 }")
	for i := range n {
		fmt.Fprintf(&b, " fragment F%d on Query { ...F%d a%d: __typename ...F%d }", i, i+1, i, i+1)
	}
	fmt.Fprintf(&b, " fragment F%d on Query { __typename }", n)
	return b.String()
}

func TestDocumentLimitsRefuseBeforeValidation(t *testing.T) {
	t.Parallel()
	s := resolverstest.New(t)
	cases := []struct {
		name   string
		query  string
		refuse bool
	}{
		{"a trivial query runs", "{ __typename }", false},
		{"GraphiQL's introspection query runs", introspectionQuery, false},
		{"a thousand distinct aliases run", repeat(1000, "a%d: __typename"), false},
		{"a field repeated 45 times runs", repeat(45, "__typename"), false},
		{"5,900 __typename (65 KB) pass the token limit no more", repeat(5900, "__typename"), true},
		{"4,000 __typename, within the token limit, select too many fields", repeat(4000, "__typename"), true},
		{"1,001 distinct aliases select too many fields", repeat(1001, "a%d: __typename"), true},
		{"a field repeated 46 times makes too many pairs to compare", repeat(46, "__typename"), true},
		{"same-named fields count with their selections merged",
			repeat(10, "customers { items { id id id id id } }"), true},
		{"fragments count where they are spread", fragmentBomb(20), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := s.Do(t, "", c.query, nil)
			refused := len(res.Errors) == 1 && res.Errors[0].Extensions.Code == "COST_LIMIT_EXCEEDED"
			if refused != c.refuse {
				t.Fatalf("refused %v, want %v: HTTP %d %.300s", refused, c.refuse, res.Status, res.Body)
			}
			if !c.refuse && len(res.Errors) > 0 {
				t.Fatalf("errors: %.300s", res.Body)
			}
		})
	}

	t.Run("a document over the size cap is refused unparsed, however it arrives", func(t *testing.T) {
		for _, query := range []string{repeat(8850, "__typename"), "{" + strings.Repeat(" ", 749<<10) + "__typename }"} {
			res, err := http.Get(s.URL + "?query=" + url.QueryEscape(query))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusRequestURITooLong || !strings.Contains(string(body), "RequestURITooLong") {
				t.Fatalf("GET of %d bytes: %d %.200s", len(query), res.StatusCode, body)
			}
		}
	})
}

func TestDocumentLimitMeasuresTheDocumentWhateverTheTransport(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		query string
		code  string
	}{
		{"a document over the size cap", "{" + strings.Repeat(" ", 64<<10) + "__typename }", "COST_LIMIT_EXCEEDED"},
		{"a document with too many tokens", "{ a(" + strings.Repeat("b: 1 ", 1500) + ") }", "COST_LIMIT_EXCEEDED"},
		{"a document that does not parse", "{ a", "GRAPHQL_PARSE_FAILED"},
		{"a document within the limits", "{ __typename }", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := resolvers.DocumentLimit{}.MutateOperationParameters(t.Context(), &graphql.RawParams{Query: c.query})
			code := ""
			if err != nil {
				code, _ = err.Extensions["code"].(string)
				if te := (*resolvers.Error)(nil); errors.As(err, &te) {
					code = string(te.GraphQLCode())
				}
			}
			if code != c.code {
				t.Fatalf("code %q (%v), want %q", code, err, c.code)
			}
		})
	}
}
