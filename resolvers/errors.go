package resolvers

import (
	"errors"
	"net/http"
	"time"

	"till/storage"
)

// Error is the one error vocabulary of Till. Its Code is the upstream error name (the
// Python class name upstream sends in "error"); the tables below give its HTTP status on
// /v1 and its GraphQL code on /graphql. The GraphQL presenter and the /v1 layer both render
// it, so a rule fails the same way on both APIs.
type Error struct {
	Code   string
	Detail string
	// Errors lists field errors for validation codes; Loc is the GraphQL input path
	// (["input", "customerId"]) which /v1 renders as ["body", "customer_id"].
	Errors []FieldError
	// Scopes are the scopes that would have satisfied an insufficient_scope error.
	Scopes []string
	// Cause is a machine-readable cause finer than Code (expired, activation_limit_reached),
	// for clients that act on it; GraphQL shows it as extensions.cause, /v1 does not.
	Cause string
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
	// CodeCSRF refuses a form the session cookie carried that does not prove it comes from
	// the page Till showed this session: a forged, expired or cross-site post.
	CodeCSRF = "CSRFVerificationFailed"
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
	CodeCSRF:              http.StatusForbidden,
	CodeNotOpenCheckout:   http.StatusForbidden,
	CodeExpiredCheckout:   http.StatusGone,
	CodePaymentError:      http.StatusBadRequest,

	CodeOrderNotEligibleForInvoice:   http.StatusConflict,
	CodeMissingInvoiceBillingDetails: http.StatusUnprocessableEntity,
	CodeInvoiceDoesNotExist:          http.StatusNotFound,
	CodeReceiptNotAllocated:          http.StatusNotFound,
	CodeDocumentPending:              http.StatusAccepted,
	CodeInvalidJobState:              http.StatusConflict,
	CodeRateLimited:                  http.StatusTooManyRequests,
	CodeCostLimitExceeded:            http.StatusBadRequest,
	codeSeatNotAvailable:             http.StatusBadRequest,
	codeSeatAlreadyAssigned:          http.StatusBadRequest,
	codeInvalidInvitationToken:       http.StatusBadRequest,
	codeSignInRefused:                http.StatusBadRequest,
	codeLastOwner:                    http.StatusForbidden,
	codeSeatNotPending:               http.StatusBadRequest,
	codeInvalidSeatAssignmentRequest: http.StatusBadRequest,
	codeSeatMemberNotFound:           http.StatusNotFound,
	codeSeatMemberEmailMismatch:      http.StatusBadRequest,
	codeAmbiguousExternalCustomerID:  http.StatusConflict,

	codeRefundedAlready:                      http.StatusForbidden,
	codeRefundDisputedPayment:                http.StatusForbidden,
	codeRefundUnknownPayment:                 http.StatusNotFound,
	codeRevokeSubscriptionBenefitsProhibited: http.StatusBadRequest,
	codeRefundError:                          http.StatusConflict,
	codeDisputeNotOpen:                       http.StatusConflict,

	codeOrderNotEligibleForRetry:    http.StatusUnprocessableEntity,
	codePaymentAlreadyInProgress:    http.StatusConflict,
	codeManualRetryLimitExceeded:    http.StatusTooManyRequests,
	codePaymentRetryValidationError: http.StatusUnprocessableEntity,
}

// GraphQLCode is how /graphql classifies a failure in extensions.code. The set is fixed, so
// a client handles every error with one switch; the upstream name is extensions.reason.
type GraphQLCode string

// The GraphQL codes, all of them.
const (
	// GraphQLUnauthenticated: no principal, or a bad, expired or revoked token.
	GraphQLUnauthenticated GraphQLCode = "UNAUTHENTICATED"
	// GraphQLForbidden: a valid principal that may not do this (wrong kind, scope or role).
	GraphQLForbidden GraphQLCode = "FORBIDDEN"
	// GraphQLNotFound: the object does not exist or belongs to an organization out of reach.
	GraphQLNotFound GraphQLCode = "NOT_FOUND"
	// GraphQLBadUserInput: the request or its arguments were refused; extensions.fields
	// names the failing input paths when there are some.
	GraphQLBadUserInput GraphQLCode = "BAD_USER_INPUT"
	// GraphQLConflict: the object's state does not allow the change (yet).
	GraphQLConflict GraphQLCode = "CONFLICT"
	// GraphQLRateLimited: over a rate limit or the cost budget; retry after
	// extensions.retryAfter seconds.
	GraphQLRateLimited GraphQLCode = "RATE_LIMITED"
	// GraphQLCostLimitExceeded: the document is too large or too costly to run at all.
	GraphQLCostLimitExceeded GraphQLCode = "COST_LIMIT_EXCEEDED"
	// GraphQLInternal: a fault of the server, logged; nothing about it is shown.
	GraphQLInternal GraphQLCode = "INTERNAL"
)

// GraphQLCodes lists every code a /graphql error may carry.
var GraphQLCodes = []GraphQLCode{GraphQLUnauthenticated, GraphQLForbidden, GraphQLNotFound, GraphQLBadUserInput,
	GraphQLConflict, GraphQLRateLimited, GraphQLCostLimitExceeded, GraphQLInternal}

// graphQLCodeByCode is the single table from error code to GraphQL code. It follows what the
// failure means to a GraphQL client, not upstream's status: a checkout that is no longer open
// is a conflict with its state, though upstream answers 403. Unauthorized is refined by the
// presenter: a request that has a principal, of the wrong kind, is FORBIDDEN.
var graphQLCodeByCode = map[string]GraphQLCode{
	CodeNotFound:          GraphQLNotFound,
	CodeNotPermitted:      GraphQLForbidden,
	CodeUnauthorized:      GraphQLUnauthenticated,
	CodeBadRequest:        GraphQLBadUserInput,
	CodeValidation:        GraphQLBadUserInput,
	CodeRequestValidation: GraphQLBadUserInput,
	CodeInsufficientScope: GraphQLForbidden,
	CodeInternal:          GraphQLInternal,
	CodeCSRF:              GraphQLForbidden,
	CodeNotOpenCheckout:   GraphQLConflict,
	CodeExpiredCheckout:   GraphQLConflict,
	CodePaymentError:      GraphQLBadUserInput,

	CodeOrderNotEligibleForInvoice:   GraphQLConflict,
	CodeMissingInvoiceBillingDetails: GraphQLBadUserInput,
	CodeInvoiceDoesNotExist:          GraphQLNotFound,
	CodeReceiptNotAllocated:          GraphQLNotFound,
	CodeDocumentPending:              GraphQLConflict,
	CodeInvalidJobState:              GraphQLConflict,
	CodeRateLimited:                  GraphQLRateLimited,
	CodeCostLimitExceeded:            GraphQLCostLimitExceeded,
	codeSeatNotAvailable:             GraphQLConflict,
	codeSeatAlreadyAssigned:          GraphQLConflict,
	codeInvalidInvitationToken:       GraphQLBadUserInput,
	codeSignInRefused:                GraphQLBadUserInput,
	codeLastOwner:                    GraphQLConflict, // the organization's state, not the caller's rights
	codeSeatNotPending:               GraphQLConflict,
	codeInvalidSeatAssignmentRequest: GraphQLBadUserInput,
	codeSeatMemberNotFound:           GraphQLNotFound,
	codeSeatMemberEmailMismatch:      GraphQLBadUserInput,
	codeAmbiguousExternalCustomerID:  GraphQLConflict,

	codeRefundedAlready:                      GraphQLConflict,
	codeRefundDisputedPayment:                GraphQLConflict,
	codeRefundUnknownPayment:                 GraphQLNotFound,
	codeRevokeSubscriptionBenefitsProhibited: GraphQLBadUserInput,
	codeRefundError:                          GraphQLConflict,
	codeDisputeNotOpen:                       GraphQLConflict,

	codeOrderNotEligibleForRetry:    GraphQLConflict,
	codePaymentAlreadyInProgress:    GraphQLConflict,
	codeManualRetryLimitExceeded:    GraphQLConflict, // a ceiling per order, not a rate: waiting lifts nothing
	codePaymentRetryValidationError: GraphQLBadUserInput,
}

// GraphQLCode is the error's class on /graphql; unknown codes are BAD_USER_INPUT, as their
// status is 400.
func (e *Error) GraphQLCode() GraphQLCode {
	if c, ok := graphQLCodeByCode[e.Code]; ok {
		return c
	}
	return GraphQLBadUserInput
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
