// Package fastapi reads HTTP requests the way a FastAPI application does, so that Till's
// /v1 answers a malformed request with the very 422 upstream (Polar, a FastAPI service)
// sends: the same items, in the same order, with the same type, loc, msg, input and ctx.
//
// A request goes through three steps, each reproduced from its Python original rather than
// approximated: Python's json.loads reads the body (its syntax error messages and character
// offsets reach clients), Starlette splits the query string and uvicorn decodes the path,
// then pydantic v2 validates the values in lax mode with its own error templates, union
// tags and coercions. A Schema declares what an endpoint accepts, composed of the types of
// this package as a pydantic model is; its Body and Params are validated by ReadBody,
// Body.Validate and DecodeParams, and a value that passes comes out as a GraphQL variable
// (snake_case fields renamed to their GraphQL names, canonical UUIDs and date-times).
//
// Where pydantic lets a value through that PostgreSQL or a JSON document cannot hold
// (U+0000, text that is not UTF-8, infinities), the package refuses it at the value's loc
// with Polar's own wording, so no caller has to remember.
//
// WriteJSON writes JSON as Starlette's JSONResponse does (json.dumps with
// ensure_ascii=False), the encoding the 422 items and every upstream error body share.
//
// The package knows nothing of Till: it imports no layer, and the route table that declares
// Till's endpoints with it lives in rest.
package fastapi
