package blob

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"unsafe"
)

// directAlign is the alignment direct I/O needs of file offsets, lengths and memory: the
// largest logical block size in common use, so it suits every device.
const directAlign = 4096

// partBufSize is the size of the copy buffers of part PUTs: large enough for few system
// calls, and bounded memory however large the part.
const partBufSize = 1 << 20

// partBuffers recycle directAlign-aligned copy buffers.
var partBuffers = sync.Pool{New: func() any {
	raw := make([]byte, partBufSize+directAlign)
	skip := (directAlign - int(uintptr(unsafe.Pointer(&raw[0]))%directAlign)) % directAlign
	b := raw[skip : skip+partBufSize]
	return &b
}}

// partFile writes one part into an upload's data file. Whole aligned blocks go through
// direct, a descriptor opened with direct I/O when the filesystem allows it, so they
// reach the disk without filling the page cache: on virtual machines that hand freed
// memory back to the host, every new page-cache page costs a fault in the host, and
// buffered writes there run at a fraction of the disk's speed. The unaligned head and
// tail of a part, which share a block with the neighbouring part, go through buffered.
type partFile struct {
	buffered *os.File
	direct   *os.File // nil: everything is buffered
}

// writePart streams body to the part's range of the data file, hashing it on the way, and
// returns the SHA-256. It reads at most one byte past the part and never writes outside the
// range. Reading and hashing one buffer overlap with writing the previous one, so a part
// streams at the pace of the slower of network and disk rather than of both in turn.
func (pf partFile) writePart(body io.Reader, p Part) ([]byte, error) {
	h := sha256.New()
	r := io.LimitReader(body, p.Size()+1)
	off := p.Start
	w := pf.startWriter()
	defer w.finish()
	// The head up to the first aligned offset goes first, alone, so that every later
	// buffer starts at an aligned file offset.
	headLen := (directAlign - p.Start%directAlign) % directAlign
	if pf.direct == nil {
		headLen = 0
	}
	for first := true; ; first = false {
		buf := w.buffer()
		if first && headLen > 0 {
			buf = buf[:min(int64(len(buf)), headLen, p.Size()+1)]
		}
		k, err := io.ReadFull(r, buf)
		if off+int64(k) > p.End {
			w.release(buf)
			return nil, errPartTooLarge
		}
		h.Write(buf[:k])
		w.submit(buf[:k], off)
		off += int64(k)
		if err != nil {
			if werr := w.finish(); werr != nil {
				return nil, werr
			}
			if e := pf.ended(err, off, p); e != nil {
				return nil, e
			}
			return h.Sum(nil), nil
		}
	}
}

// partWriter writes a part's buffers in a goroutine of its own, with two buffers in
// turn: one being filled while the other is written.
type partWriter struct {
	pf      partFile
	free    chan []byte
	writes  chan pendingWrite
	done    chan error
	pooled  []*[]byte
	stopped bool
	err     error
}

type pendingWrite struct {
	b   []byte
	off int64
}

func (pf partFile) startWriter() *partWriter {
	w := &partWriter{pf: pf, free: make(chan []byte, 2), writes: make(chan pendingWrite, 2), done: make(chan error, 1)}
	for range 2 {
		bp := partBuffers.Get().(*[]byte)
		w.pooled = append(w.pooled, bp)
		w.free <- *bp
	}
	go w.run()
	return w
}

// run writes each buffer, whole aligned blocks directly and the rest buffered, and hands
// it back. After a failure it only hands buffers back, and reports the failure at the end.
func (w *partWriter) run() {
	var failed error
	for pw := range w.writes {
		if failed == nil {
			aligned := len(pw.b) &^ (directAlign - 1)
			if w.pf.direct == nil || pw.off%directAlign != 0 {
				aligned = 0
			}
			failed = w.pf.write(w.pf.direct, pw.b[:aligned], pw.off)
			if failed == nil {
				failed = w.pf.write(w.pf.buffered, pw.b[aligned:], pw.off+int64(aligned))
			}
		}
		w.free <- pw.b[:cap(pw.b)]
	}
	w.done <- failed
}

// buffer waits for a free buffer.
func (w *partWriter) buffer() []byte { return <-w.free }

// release hands back a buffer that will not be written.
func (w *partWriter) release(b []byte) { w.free <- b[:cap(b)] }

func (w *partWriter) submit(b []byte, off int64) { w.writes <- pendingWrite{b, off} }

// finish waits for the writes submitted so far and returns the first failure; later calls
// return the same.
func (w *partWriter) finish() error {
	if !w.stopped {
		w.stopped = true
		close(w.writes)
		w.err = <-w.done
		for _, bp := range w.pooled {
			partBuffers.Put(bp)
		}
	}
	return w.err
}

// write writes b at off through f.
func (pf partFile) write(f *os.File, b []byte, off int64) error {
	if len(b) == 0 {
		return nil
	}
	_, err := f.WriteAt(b, off)
	return err
}

// ended turns the read error that stopped a part into its outcome: nil when the part is
// complete, else why it is not.
func (pf partFile) ended(err error, off int64, p Part) error {
	switch {
	case err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: %v", errReadBody, err)
	case off < p.End:
		return fmt.Errorf("%w: %d of %d bytes", errPartTooShort, off-p.Start, p.Size())
	}
	return nil
}
