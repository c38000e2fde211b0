package gqlexec

import (
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// RenderedOf is the JSON a record carries when PostgreSQL wrote it for the selection being
// executed (storage.Rendered, read with storage.Window.Render), as a marshaller that copies
// it; nil when obj was read as columns. The generated executor asks it before resolving an
// object's fields. A record is rendered only for the one selection it was read for: the
// loader that reads it is keyed by that selection.
func RenderedOf(obj any) graphql.Marshaler {
	r, ok := obj.(interface{ RenderedJSON() []byte })
	if !ok {
		return nil
	}
	b := r.RenderedJSON()
	if b == nil {
		return nil
	}
	return graphql.WriterFunc(func(w io.Writer) { _, _ = w.Write(b) })
}
