package rest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"till/resolvers"
)

// ExportFunc answers an export route (Route.File) from its validated variables: it checks
// what the operation does not (an export's own parameters), sets the file's headers on h and
// streams the body to w. An error returned before anything reached w is answered as /v1
// answers a use case's error; after that the status is sent, so the connection is cut
// instead and the client sees a truncated file, never a complete-looking partial one. A
// failed write to w (the client is gone) is recognized whatever the export returns then.
type ExportFunc func(ctx context.Context, vars map[string]any, h http.Header, w io.Writer) error

// exportBuffer is how much of an export is buffered between writes to the connection: the
// header and first rows of a small export go out in one write, and a refusal found before
// the first row still gets its error status.
const exportBuffer = 32 << 10

// exportWriteWindow is how long one buffered write of an export may take. The server's write
// timeout bounds a whole answer, which a large export outlives; each write extends the
// deadline instead, so a slow reader is served and a stalled one is cut.
const exportWriteWindow = time.Minute

// errClientGone wraps a failed write of an export's body.
var errClientGone = errors.New("rest: export client gone")

// serveExport runs route's Export and sends what it streams.
func (rt *router) serveExport(w http.ResponseWriter, r *http.Request, route Route, vars map[string]any) {
	if route.Export == nil {
		rt.logger.ErrorContext(r.Context(), "rest: export route without Export", "operation", route.Operation)
		writeInternal(w)
		return
	}
	out := &exportWriter{w: w, rc: http.NewResponseController(w), h: http.Header{}}
	buf := bufio.NewWriterSize(out, exportBuffer)
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("export panicked: %v", p)
			}
		}()
		return route.Export(r.Context(), vars, out.h, buf)
	}()
	if err == nil && out.err == nil {
		_ = buf.Flush() // a failure is in out.err
	}
	var te *resolvers.Error
	switch {
	case out.err != nil, err != nil && !out.started && r.Context().Err() != nil:
		panic(http.ErrAbortHandler) // the client is gone: nothing more can reach it
	case err != nil && !out.started && errors.As(err, &te):
		rt.writeTillError(r.Context(), w, route, te)
	case err != nil && !out.started:
		rt.logger.ErrorContext(r.Context(), "rest: export failed", "operation", route.Operation, "error", err)
		writeInternal(w)
	case err != nil:
		rt.logger.ErrorContext(r.Context(), "rest: export failed while streaming", "operation", route.Operation, "error", err)
		panic(http.ErrAbortHandler)
	case !out.started:
		out.start()
	}
}

// exportWriter sends the status and the file's headers before the first bytes of the body,
// and extends the write deadline for each write.
type exportWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	h       http.Header
	started bool
	err     error
}

func (e *exportWriter) start() {
	e.started = true
	for k, v := range e.h {
		e.w.Header()[k] = v
	}
	e.w.WriteHeader(http.StatusOK)
}

// Write sends p; a failure is remembered and reported as errClientGone.
func (e *exportWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if !e.started {
		e.start()
	}
	_ = e.rc.SetWriteDeadline(time.Now().Add(exportWriteWindow)) // not every writer supports deadlines
	n, err := e.w.Write(p)
	if err == nil {
		err = e.rc.Flush()
		if errors.Is(err, http.ErrNotSupported) {
			err = nil
		}
	}
	if err != nil {
		e.err = fmt.Errorf("%w: %w", errClientGone, err)
	}
	return n, e.err
}
