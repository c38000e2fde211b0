package resolvers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"till/internal/ratelimit"
	"till/storage"
)

// Error is the one error vocabulary of Till. Its Code is the upstream error name (the
// Python class name upstream sends in "error"), its status comes from the table below, and
// the GraphQL presenter and the /v1 layer both render it, so a rule fails the same way on
// both APIs.
type Error struct {
	Code   string
	Detail string
	// Errors lists field errors for validation codes; Loc is the GraphQL input path
	// (["input", "customerId"]) which /v1 renders as ["body", "customer_id"].
	Errors []FieldError
	// Scopes are the scopes that would have satisfied an insufficient_scope error.
	Scopes []string
	// Reason is a machine-readable cause finer than Code (expired, ACTIVATION_LIMIT_REACHED),
	// for clients that act on it; GraphQL shows it as extensions.reason, /v1 does not.
	Reason string
	// RetryAfter is how long a RATE_LIMITED caller must wait; GraphQL shows it in whole
	// seconds as extensions.retryAfter, /v1 as the Retry-After header.
	RetryAfter time.Duration
}

// FieldError is one validation failure, shaped as upstream's ValidationError item.
type FieldError struct {
	Type  string `json:"type"`
	Loc   []any  `json:"loc"`
	Msg   string `json:"msg"`
	Input any    `json:"input"`
	// Ctx is pydantic's ctx where upstream sends one, e.g. {"error": {}} for a validator's
	// ValueError; omitted otherwise.
	Ctx any `json:"ctx,omitempty"`
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return e.Detail
	}
	if len(e.Errors) > 0 {
		return e.Errors[0].Msg
	}
	return e.Code
}

// Error codes with a fixed meaning across the APIs.
const (
	CodeNotFound          = "ResourceNotFound"
	CodeNotPermitted      = "NotPermitted"
	CodeUnauthorized      = "Unauthorized"
	CodeBadRequest        = "BadRequest"
	CodeValidation        = "PolarRequestValidationError"
	CodeRequestValidation = "RequestValidationError"
	CodeInsufficientScope = "insufficient_scope"
	CodeInternal          = "InternalServerError"
	// Checkout errors carry upstream's class names (server/polar/checkout/service.py).
	CodeNotOpenCheckout = "NotOpenCheckout"
	CodeExpiredCheckout = "ExpiredCheckoutError"
	CodePaymentError    = "PaymentError"
	// Order documents (server/polar/order/service.py, receipt/service.py).
	CodeOrderNotEligibleForInvoice   = "OrderNotEligibleForInvoice"
	CodeMissingInvoiceBillingDetails = "MissingInvoiceBillingDetails"
	CodeInvoiceDoesNotExist          = "InvoiceDoesNotExist"
	CodeReceiptNotAllocated          = "ReceiptNotAllocated"
	// CodeDocumentPending is no failure: the document is being rendered. GraphQL reports it
	// as an error because the field has no value yet; /v1 answers 202 with an empty body.
	CodeDocumentPending = "DocumentPending"
	// CodeInvalidJobState refuses retrying or cancelling a job whose state does not allow it.
	CodeInvalidJobState = "InvalidJobState"
	// CodeRateLimited refuses a call over its rate limit or a GraphQL operation over its
	// principal's cost budget; /v1 answers it with its own 429 body (internal/ratelimit).
	CodeRateLimited = "RATE_LIMITED"
	// CodeCostLimitExceeded refuses a GraphQL document that is too large or too costly to
	// run at all, whatever the budget.
	CodeCostLimitExceeded = "COST_LIMIT_EXCEEDED"
)

// statusByCode is the single table from error code to HTTP status.
var statusByCode = map[string]int{
	CodeNotFound:          http.StatusNotFound,
	CodeNotPermitted:      http.StatusForbidden,
	CodeUnauthorized:      http.StatusUnauthorized,
	CodeBadRequest:        http.StatusBadRequest,
	CodeValidation:        http.StatusUnprocessableEntity,
	CodeRequestValidation: http.StatusUnprocessableEntity,
	CodeInsufficientScope: http.StatusForbidden,
	CodeInternal:          http.StatusInternalServerError,
	CodeNotOpenCheckout:   http.StatusForbidden,
	CodeExpiredCheckout:   http.StatusGone,

	CodeOrderNotEligibleForInvoice:   http.StatusConflict,
	CodeMissingInvoiceBillingDetails: http.StatusUnprocessableEntity,
	CodeInvoiceDoesNotExist:          http.StatusNotFound,
	CodeReceiptNotAllocated:          http.StatusNotFound,
	CodeDocumentPending:              http.StatusAccepted,
	CodeInvalidJobState:              http.StatusConflict,
	CodeRateLimited:                  http.StatusTooManyRequests,
	CodeCostLimitExceeded:            http.StatusBadRequest,
}

// Status is the HTTP status of the error's code; unknown codes are 400 so that a new domain
// error is never reported as a server fault.
func (e *Error) Status() int {
	if s, ok := statusByCode[e.Code]; ok {
		return s
	}
	return http.StatusBadRequest
}

// NotFound reports a missing object, or one of an organization the caller cannot see.
func NotFound(detail string) *Error {
	if detail == "" {
		detail = "Not found"
	}
	return &Error{Code: CodeNotFound, Detail: detail}
}

// NotPermitted reports an action the caller may not take on an object it can see.
func NotPermitted(detail string) *Error {
	if detail == "" {
		detail = "Not permitted"
	}
	return &Error{Code: CodeNotPermitted, Detail: detail}
}

// Unauthorized reports a missing or unsuitable principal.
func Unauthorized() *Error { return &Error{Code: CodeUnauthorized, Detail: "Unauthorized"} }

// BadRequest reports a request that breaks a business rule.
func BadRequest(detail string) *Error {
	if detail == "" {
		detail = "Bad request"
	}
	return &Error{Code: CodeBadRequest, Detail: detail}
}

// Invalid reports one field that failed validation inside a use case.
func Invalid(typ, msg string, input any, loc ...any) *Error {
	return &Error{Code: CodeValidation, Errors: []FieldError{{Type: typ, Loc: loc, Msg: msg, Input: input}}}
}

// InsufficientScope reports a token that lacks every scope a field accepts.
func InsufficientScope(scopes []string) *Error {
	return &Error{Code: CodeInsufficientScope,
		Detail: "The request requires higher privileges than provided by the access token.", Scopes: scopes}
}

// notFoundOr turns storage.ErrNotFound into a NotFound error and passes other errors on.
func notFoundOr(err error, detail string) error {
	if errors.Is(err, storage.ErrNotFound) {
		return NotFound(detail)
	}
	return err
}

// ErrorPresenter renders a resolver error into the GraphQL response: Till errors carry code,
// status, detail and field errors in extensions; GraphQL's own errors (parse, validation)
// pass through; anything else is logged and shown as an internal error.
func ErrorPresenter(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var te *Error
		if errors.As(err, &te) {
			gqlErr.Message, gqlErr.Extensions = te.Error(), extensionsOf(te)
			return gqlErr
		}
		var already *gqlerror.Error
		if errors.As(err, &already) && already.Err == nil {
			return gqlErr
		}
		if ie := argumentError(ctx, gqlErr); ie != nil {
			gqlErr.Message = ie.Error()
			gqlErr.Extensions = map[string]any{"code": ie.Code, "status": ie.Status(), "detail": ie.Detail,
				"errors": ie.Errors}
			return gqlErr
		}
		if storage.IsOutOfRange(err) {
			oe := outOfRange()
			gqlErr.Message, gqlErr.Extensions = oe.Error(), extensionsOf(oe)
			return gqlErr
		}
		logger.ErrorContext(ctx, "resolver failed", "err", err, "path", gqlErr.Path.String())
		gqlErr.Message = "Internal Server Error"
		gqlErr.Extensions = map[string]any{"code": CodeInternal, "status": http.StatusInternalServerError,
			"detail": "Internal Server Error"}
		return gqlErr
	}
}

// extensionsOf is how a Till error shows in a GraphQL error's extensions.
func extensionsOf(te *Error) map[string]any {
	ext := map[string]any{"code": te.Code, "status": te.Status(), "detail": te.Detail}
	if len(te.Errors) > 0 {
		ext["errors"] = te.Errors
	}
	if len(te.Scopes) > 0 {
		ext["scopes"] = te.Scopes
	}
	if te.Reason != "" {
		ext["reason"] = te.Reason
	}
	if te.RetryAfter > 0 {
		ext["retryAfter"] = ratelimit.RetryAfterSeconds(te.RetryAfter)
	}
	return ext
}

// errorOf is a Till error as the presenter shows it, for refusals made before any resolver
// runs (handler extensions), which return GraphQL errors themselves.
func errorOf(te *Error) *gqlerror.Error {
	return &gqlerror.Error{Message: te.Error(), Extensions: extensionsOf(te)}
}

// argumentError recognises an argument gqlgen could not coerce (a malformed UUID, a metadata
// value of the wrong type): gqlgen reports it from the field's context before the resolver
// runs, so the field has arguments but none were set. It is the client's mistake, a 422 with
// the argument's path as loc, not a server fault.
func argumentError(ctx context.Context, gqlErr *gqlerror.Error) *Error {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Args != nil || fc.Field.Field == nil || len(fc.Field.Arguments) == 0 {
		return nil
	}
	loc := []any{}
	for _, p := range gqlErr.Path[min(len(fc.Path()), len(gqlErr.Path)):] {
		switch p := p.(type) {
		case ast.PathName:
			loc = append(loc, string(p))
		case ast.PathIndex:
			loc = append(loc, int(p))
		}
	}
	return &Error{Code: CodeRequestValidation,
		Errors: []FieldError{{Type: "value_error", Loc: loc, Msg: gqlErr.Message}}}
}

// outOfRange is a number PostgreSQL refused as out of range (storage.IsOutOfRange) where no
// use case checked it first: still the client's number, so a 422 and not a server fault.
func outOfRange() *Error {
	return &Error{Code: CodeValidation, Errors: []FieldError{{Type: "value_error", Loc: []any{},
		Msg: "A number in the request is out of range."}}}
}

// Recover turns a panic in a resolver into a logged internal error instead of a crash.
func Recover(logger *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		logger.ErrorContext(ctx, "resolver panicked", "panic", fmt.Sprint(p))
		return &Error{Code: CodeInternal, Detail: "Internal Server Error"}
	}
}
