package resolvers

// The error tables, for the test that keeps them in step.
var (
	StatusByCode      = statusByCode
	GraphQLCodeByCode = graphQLCodeByCode
)

// WireBody exposes the response encoder to package resolvers_test.
var WireBody = wireBody
