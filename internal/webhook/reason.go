package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"
)

// Reasons an attempt failed without an answer, as the organization sees them in its delivery
// log. They name what went wrong in the endpoint's own terms and nothing of the server's
// network: the network error itself names the server's DNS resolver, the addresses a host
// resolved to and host names the resolver could not find, and goes to the operator's log only.
// A host that does not resolve and one that resolves to a refused address get the same
// reason, so the log cannot tell an organization which names the server's resolver knows.
const (
	ReasonUnresolved  = "could not resolve the endpoint's host to an allowed public address"
	ReasonRefused     = "connection refused"
	ReasonUnreachable = "the endpoint's host is unreachable"
	ReasonTimeout     = "timed out"
	ReasonTLS         = "TLS handshake with the endpoint failed"
	ReasonCertificate = "the endpoint's TLS certificate was not accepted"
	ReasonClosed      = "the endpoint closed the connection before answering"
	ReasonInvalidURL  = "invalid endpoint URL"
	ReasonInterrupted = "the attempt was interrupted by the server stopping"
	ReasonFailed      = "could not deliver to the endpoint"
)

// Reason is the organization-facing reason of a failed attempt's error: for an answer
// outside 2xx its status (and redirect target), which the endpoint itself sent; for any
// other failure one of the fixed Reason texts.
func Reason(err error) string {
	var (
		status  *StatusError
		blocked *BlockedAddrError
		dns     *net.DNSError
		cert    *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		alert   tls.AlertError
		header  tls.RecordHeaderError
		ne      net.Error
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &status):
		return status.Error()
	case errors.Is(err, errInvalidURL):
		return ReasonInvalidURL
	case errors.As(err, &blocked), errors.As(err, &dns):
		return ReasonUnresolved
	case errors.Is(err, context.Canceled):
		return ReasonInterrupted
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ReasonTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonRefused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return ReasonUnreachable
	case errors.As(err, &cert), errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid):
		return ReasonCertificate
	case errors.As(err, &alert), errors.As(err, &header):
		return ReasonTLS
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return ReasonClosed
	}
	return ReasonFailed
}

// errInvalidURL marks an endpoint URL the HTTP client could not even build a request for.
var errInvalidURL = errors.New("webhook: invalid endpoint URL")
