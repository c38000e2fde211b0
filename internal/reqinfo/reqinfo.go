// Package reqinfo carries what the access log and the metrics say about a request from the
// layers that learn it back out to the HTTP middleware that reports it: the request id, the
// GraphQL operation (known only inside gqlgen) and the principal (known only after the bearer
// middleware). The middleware puts an empty Info in the request's context; the layers fill
// it in as the request passes through them.
package reqinfo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// Header is the request and response header that carries the request id.
const Header = "X-Request-Id"

// maxIDLen bounds a request id taken from a client: long enough for a UUID or a trace id,
// short enough that it cannot bloat every log line of the request.
const maxIDLen = 64

// Operation is a GraphQL operation as the access log and the metrics show it.
type Operation struct {
	// Name is the client's operationName, "anonymous" when it gave none: a client's own
	// word, fit for logs and never for metric labels.
	Name string
	// Type is query, mutation or subscription; empty when the document did not validate.
	Type string
	// RootFields are the schema fields the operation selects at its root, sorted and
	// without duplicates (aliases resolved); empty when the document did not validate.
	RootFields []string
}

// Info is what is known of one request. Its methods are safe on a nil *Info (a context
// without one) and from several goroutines.
type Info struct {
	// ID identifies the request in logs and in the X-Request-Id response header.
	ID string

	mu           sync.Mutex
	op           *Operation
	principal    string
	organization string
}

type infoKey struct{}

// New returns ctx carrying a new Info with the given id.
func New(ctx context.Context, id string) (context.Context, *Info) {
	info := &Info{ID: id}
	return context.WithValue(ctx, infoKey{}, info), info
}

// From returns the request's Info, or nil outside a request.
func From(ctx context.Context) *Info {
	info, _ := ctx.Value(infoKey{}).(*Info)
	return info
}

// SetOperation records the GraphQL operation the request runs.
func (i *Info) SetOperation(op Operation) {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.op = &op
}

// Operation returns the recorded GraphQL operation, if any.
func (i *Info) Operation() (Operation, bool) {
	if i == nil {
		return Operation{}, false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.op == nil {
		return Operation{}, false
	}
	return *i.op, true
}

// SetPrincipal records who the request acts as: its kind, and its organization's id when it
// has exactly one (empty otherwise). Never a credential.
func (i *Info) SetPrincipal(kind, organization string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.principal, i.organization = kind, organization
}

// Principal returns the recorded principal kind and organization id; empty when no bearer
// middleware admitted the request.
func (i *Info) Principal() (kind, organization string) {
	if i == nil {
		return "", ""
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.principal, i.organization
}

// RequestID is the id of a request that sent incoming as its X-Request-Id: kept when it is
// short and made only of letters, digits and - _ . : (a proxy's or client's id, so their
// logs and ours can be joined), otherwise a new random one, since a client's text would
// otherwise land verbatim in every log line of the request.
func RequestID(incoming string) string {
	if safeID(incoming) {
		return incoming
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func safeID(s string) bool {
	if s == "" || len(s) > maxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}
