package traces

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"os"
	"slices"
)

// Source is a stream of records: a trace file, a JSONL export, a test's
// slice. Next returns io.EOF after the last record; any other error ends
// the stream too.
type Source interface {
	Next() (Record, error)
}

// All returns the records of src as an iterator. It stops after the first
// error, which it yields; io.EOF ends it without an error.
func All(src Source) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			r, err := src.Next()
			if err == io.EOF {
				return
			}
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// Reader reads a trace. It checks every frame's checksums and every
// record's index; it never allocates more than the input holds (and at
// most MaxRecordSize per record).
type Reader struct {
	in      io.Reader
	closer  io.Closer
	header  Header
	next    uint64
	off     int64 // byte offset of the next frame
	err     error // sticky
	head    [frameHeadSize]byte
	payload []byte
}

// Open opens the trace file at path and reads its header. Close the
// Reader when done.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.closer = f
	return r, nil
}

// NewReader reads and checks the magic, the format version and the
// header of the trace on in. Errors: ErrNotTrace (wrapped), *VersionError,
// *CorruptError (with Header set), *TruncatedError (with Header set), or
// a read error.
func NewReader(in io.Reader) (*Reader, error) {
	r := &Reader{in: in}
	if _, buffered := in.(io.ByteReader); !buffered {
		// Not in memory nor buffered already: save syscalls.
		r.in = bufio.NewReaderSize(in, 64<<10)
	}
	pre := make([]byte, preambleSize)
	n, err := io.ReadFull(r.in, pre)
	if n < len(Magic) && string(pre[:n]) != Magic[:n] || n >= len(Magic) && string(pre[:len(Magic)]) != Magic {
		return nil, fmt.Errorf("%w (it does not start with the trace magic bytes)", ErrNotTrace)
	}
	switch {
	case n == 0 && err == io.EOF:
		return nil, fmt.Errorf("%w (empty file)", ErrNotTrace)
	case err == io.ErrUnexpectedEOF:
		return nil, &TruncatedError{Header: true, Offset: 0}
	case err != nil:
		return nil, fmt.Errorf("read trace: %w", err)
	}
	version := int(pre[len(Magic)])<<8 | int(pre[len(Magic)+1])
	if version < MinFormatVersion || version > FormatVersion {
		return nil, &VersionError{Version: version}
	}
	r.off = int64(preambleSize)
	p, err := r.frame()
	if err == io.EOF {
		err = &TruncatedError{Header: true, Offset: r.off}
	}
	if err != nil {
		var c *CorruptError
		var t *TruncatedError
		switch {
		case errors.As(err, &c):
			c.Header = true
		case errors.As(err, &t):
			t.Header = true
		}
		return nil, err
	}
	h, err := decodeHeader(p)
	if err != nil {
		return nil, &CorruptError{Header: true, Offset: r.off, Reason: err.Error()}
	}
	h.FormatVersion = version
	r.header = h
	r.off += int64(frameHeadSize + len(p))
	return r, nil
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.header }

// Next returns the next record. After the last whole record it returns
// io.EOF for a whole trace, a *TruncatedError (wrapping ErrTruncated) for
// a cut one, a *CorruptError for damaged bytes; once it has returned an
// error it returns the same error again.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	rec, err := r.read()
	if err != nil {
		r.err = err
	}
	return rec, err
}

func (r *Reader) read() (Record, error) {
	p, err := r.frame()
	if err != nil {
		return Record{}, err
	}
	rec, err := decodeRecord(p)
	if err != nil {
		return Record{}, r.corrupt(err.Error())
	}
	if rec.Index != r.next {
		return Record{}, r.corrupt(fmt.Sprintf("record says index %d", rec.Index))
	}
	r.next++
	r.off += int64(frameHeadSize + len(p))
	return rec, nil
}

// Records returns the remaining records as an iterator; it yields the
// error that ends them, if not io.EOF.
func (r *Reader) Records() iter.Seq2[Record, error] { return All(r) }

// Close closes the file Open opened; for a Reader from NewReader it does
// nothing.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

func (r *Reader) corrupt(reason string) error {
	return &CorruptError{Index: r.next, Offset: r.off, Reason: reason}
}

// frame reads one frame at r.off and returns its payload, valid until the
// next call. A clean end of input before the frame is io.EOF.
func (r *Reader) frame() ([]byte, error) {
	n, err := io.ReadFull(r.in, r.head[:])
	switch {
	case n == 0 && err == io.EOF:
		return nil, io.EOF
	case err == io.ErrUnexpectedEOF:
		return nil, &TruncatedError{Index: r.next, Offset: r.off}
	case err != nil:
		return nil, fmt.Errorf("read trace at byte %d: %w", r.off, err)
	}
	size, sum, reason := parseFrameHead(r.head[:])
	if reason != "" {
		return nil, r.corrupt(reason)
	}
	r.payload, err = readPayload(r.in, r.payload, size)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, &TruncatedError{Index: r.next, Offset: r.off}
	case err != nil:
		return nil, fmt.Errorf("read trace at byte %d: %w", r.off, err)
	}
	if crc32.Checksum(r.payload, castagnoli) != sum {
		return nil, r.corrupt("checksum mismatch")
	}
	return r.payload, nil
}

// readPayload reads n bytes into buf, growing it a step at a time so
// that a length prefix promising more than the input holds costs no more
// memory than the input.
func readPayload(in io.Reader, buf []byte, n int) ([]byte, error) {
	const step = 1 << 20
	buf = buf[:0]
	for len(buf) < n {
		k := min(n-len(buf), step)
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(in, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}
