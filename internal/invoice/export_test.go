package invoice

import "io"

// RenderUncompressed renders with plain page streams so tests can read
// the text operators.
func RenderUncompressed(w io.Writer, inv Invoice) error {
	return render(w, inv, false)
}
