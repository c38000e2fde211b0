package resolvers

// The error tables, for the test that keeps them in step.
var (
	StatusByCode      = statusByCode
	GraphQLCodeByCode = graphQLCodeByCode
)
