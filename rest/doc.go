// Package rest serves the upstream (Polar) API 2026-04 under /v1 on top of
// the GraphQL schema, so that the published SDKs work against Till unchanged.
//
// Each /v1 operation is one [Route] row: a method, a chi path pattern, the
// name of a persisted GraphQL document (rest/operations/<Name>.graphql), how
// path, query and body map to GraphQL variables, which field of data becomes
// the response body, and the success status. Requests are validated by
// rest/fastapi the way FastAPI and pydantic v2 validate them upstream, so a
// client sees the same 422 items (type, loc, msg, input, ctx) it would see
// from Polar; the operation then runs in process through an [Executor], and
// the resolvers' errors are turned into Polar's error envelopes.
//
// Both packages reproduce upstream quirks on purpose (Python's JSON decoder
// messages, pydantic's union tags, Starlette's slash redirects): real clients
// observe server behaviour, and the contract says the server wins.
package rest
