package resolvers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/internal/auth"
	"till/internal/ratelimit"
	"till/storage"
)

// persistedQueryNotFound is gqlgen's code for an automatic persisted query it does not hold;
// the message ("PersistedQueryNotFound") stays, as clients retry with the document on it.
const persistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"

// ErrorPresenter renders every error of a GraphQL response with a code of GraphQLCodes:
//
//   - a Till error shows its GraphQL code, its upstream name as reason, and what else it
//     knows (failing input fields, scopes, cause, retry delay);
//   - GraphQL's own errors (parse, validation, variables, persisted queries) are
//     BAD_USER_INPUT, or NOT_FOUND for an unknown persisted query, with gqlgen's code as
//     reason;
//   - an argument gqlgen could not coerce, or a number PostgreSQL found out of range, is
//     BAD_USER_INPUT naming the input;
//   - anything else is logged and shown as INTERNAL, with nothing of its cause.
//
// The error it returns wraps the *Error it shows, so the /v1 layer, which executes through
// the same presenter, renders upstream's body from that value rather than from extensions.
func ErrorPresenter(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var te *Error
		if !errors.As(err, &te) {
			if graphQLOwn(gqlErr) {
				presentGraphQLOwn(gqlErr)
				return gqlErr
			}
			te = argumentError(ctx, gqlErr)
			if te == nil && storage.IsOutOfRange(err) {
				te = outOfRange()
			}
			if te == nil {
				logger.ErrorContext(ctx, "resolver failed", "err", err, "path", gqlErr.Path.String())
				te = internalError()
			}
			gqlErr.Err = te
		}
		gqlErr.Message, gqlErr.Extensions = presentTill(ctx, te)
		return gqlErr
	}
}

// presentTill is a Till error's message and extensions on /graphql. Unauthorized is
// upstream's answer to a principal a route does not serve, authenticated or not; GraphQL
// tells the two apart: without a principal it is UNAUTHENTICATED, with one FORBIDDEN.
func presentTill(ctx context.Context, te *Error) (string, map[string]any) {
	code, msg := te.GraphQLCode(), te.Error()
	if te.Code == CodeUnauthorized {
		if kind := auth.FromContext(ctx).Kind; kind != auth.KindAnonymous {
			code, msg = GraphQLForbidden, "This field is not available to "+principalName(kind)+"."
		}
	}
	ext := map[string]any{"code": code}
	if te.Code != string(code) {
		ext["reason"] = te.Code
	}
	if len(te.Errors) > 0 {
		fields := make([]InputFieldError, len(te.Errors))
		for i, fe := range te.Errors {
			fields[i] = InputFieldError{Path: fe.Loc, Message: fe.Msg, Type: fe.Type, Input: fe.Input}
		}
		ext["fields"] = fields
	}
	if len(te.Scopes) > 0 {
		ext["scopes"] = te.Scopes
	}
	if te.Cause != "" {
		ext["cause"] = te.Cause
	}
	if te.RetryAfter > 0 {
		ext["retryAfter"] = ratelimit.RetryAfterSeconds(te.RetryAfter)
	}
	return msg, ext
}

// InputFieldError is one item of extensions.fields: the path of an input that was refused
// (["input", "email"], from the field's arguments or the operation's variables), why, and
// the value refused when there was one.
type InputFieldError struct {
	Path    []any  `json:"path"`
	Message string `json:"message"`
	// Type is the kind of failure (missing, value_error, string_too_long, …).
	Type  string `json:"type,omitempty"`
	Input any    `json:"input,omitempty"`
}

// principalName says who a token acts as, in a sentence.
func principalName(k auth.Kind) string {
	switch k {
	case auth.KindOrganization:
		return "an organization token"
	case auth.KindUser:
		return "a user token"
	case auth.KindCustomerSession:
		return "a customer session"
	case auth.KindMemberSession:
		return "a member session"
	}
	return "an anonymous request"
}

// graphQLOwn reports an error gqlgen raised about the request itself: one with no cause
// (parse, validation, persisted queries) or with gqlgen's code (a variable that did not
// coerce, which wraps the scalar's error).
func graphQLOwn(gqlErr *gqlerror.Error) bool {
	_, coded := gqlErr.Extensions["code"].(string)
	return gqlErr.Err == nil || coded
}

// presentGraphQLOwn puts one of gqlgen's errors in the fixed set. It may see an error twice
// (a refusal the transport made, then dispatched), so a GraphQLCode already set stays.
// A variable's path (["variable", "input", "email"]) is no response path: it moves to
// extensions.fields as the input's path.
func presentGraphQLOwn(gqlErr *gqlerror.Error) {
	if _, presented := gqlErr.Extensions["code"].(GraphQLCode); presented {
		return
	}
	reason, _ := gqlErr.Extensions["code"].(string)
	ext := map[string]any{"code": GraphQLBadUserInput}
	if reason == persistedQueryNotFound {
		ext["code"] = GraphQLNotFound
	}
	if reason != "" {
		ext["reason"] = reason
	}
	if len(gqlErr.Path) > 1 && gqlErr.Path[0] == ast.PathName("variable") {
		ext["fields"] = []InputFieldError{{Path: plainPath(gqlErr.Path[1:]), Message: gqlErr.Message}}
		gqlErr.Path = nil
	}
	gqlErr.Extensions = ext
}

// requestError is a refusal of the request made before gqlgen saw it (an unreadable body, a
// wrong method), shaped as the presenter shapes gqlgen's own.
func requestError(reason, format string, args ...any) *gqlerror.Error {
	e := gqlerror.Errorf(format, args...)
	errcode.Set(e, reason)
	presentGraphQLOwn(e)
	return e
}

// errorOf is a Till error as a GraphQL error, for refusals made before any resolver runs
// (handler extensions): the presenter fills in its message and extensions from te.
func errorOf(te *Error) *gqlerror.Error {
	return &gqlerror.Error{Message: te.Error(), Err: te}
}

// plainPath is an ast.Path as JSON values: names as strings, indexes as ints.
func plainPath(path ast.Path) []any {
	out := make([]any, 0, len(path))
	for _, p := range path {
		switch p := p.(type) {
		case ast.PathName:
			out = append(out, string(p))
		case ast.PathIndex:
			out = append(out, int(p))
		}
	}
	return out
}

// argumentError recognises an argument gqlgen could not coerce (a malformed UUID, a metadata
// value of the wrong type): gqlgen reports it from the field's context before the resolver
// runs, so the field has arguments but none were set. It is the client's mistake, a 422 on
// /v1 with the argument's path as loc, not a server fault.
func argumentError(ctx context.Context, gqlErr *gqlerror.Error) *Error {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Args != nil || fc.Field.Field == nil || len(fc.Field.Arguments) == 0 {
		return nil
	}
	loc := plainPath(gqlErr.Path[min(len(fc.Path()), len(gqlErr.Path)):])
	return &Error{Code: CodeRequestValidation,
		Errors: []FieldError{{Type: "value_error", Loc: loc, Msg: gqlErr.Message}}}
}

// outOfRange is a number PostgreSQL refused as out of range (storage.IsOutOfRange) where no
// use case checked it first: still the client's number, so a 422 and not a server fault.
func outOfRange() *Error {
	return &Error{Code: CodeValidation, Errors: []FieldError{{Type: "value_error", Loc: []any{},
		Msg: "A number in the request is out of range."}}}
}

// internalError is what a client sees of a server fault: nothing.
func internalError() *Error {
	return &Error{Code: CodeInternal, Detail: "Internal Server Error"}
}

// Recover turns a panic in a resolver into a logged internal error instead of a crash.
func Recover(logger *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		logger.ErrorContext(ctx, "resolver panicked", "panic", fmt.Sprint(p))
		return internalError()
	}
}
