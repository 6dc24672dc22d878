package traces

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// DefaultFlushInterval is how often a Writer flushes by default.
const DefaultFlushInterval = 100 * time.Millisecond

// WriterOptions configure a Writer. The zero value (or nil) is the
// default everywhere.
type WriterOptions struct {
	// FlushInterval bounds how long a written record may stay in the
	// writer's buffer: the writer flushes on its own at least this often
	// while it holds unflushed bytes. 0 means DefaultFlushInterval;
	// negative means never on a timer (only when the buffer fills, on
	// Flush and on Close).
	FlushInterval time.Duration
	// Redactor is applied to the header and to every record before it is
	// written (nil: none).
	Redactor *Redactor
	// Now is the clock for Header.Created and for the Wall and Offset of
	// records that leave them zero. Default time.Now; offsets are measured
	// from the writer's creation (monotonic with time.Now).
	Now func() time.Time
	// KeepTimes writes Wall and Offset exactly as records give them, zero
	// or not: for tools that rewrite a trace (import, redact).
	KeepTimes bool
}

// Writer appends records to a trace. Its methods are safe for concurrent
// use. Records reach the underlying writer when the buffer fills, at
// least every FlushInterval, on Flush and on Close; a process killed in
// between loses at most the unflushed records, and the file it leaves
// reads back up to its last whole record.
//
// To keep records on SIGINT/SIGTERM, close the writer when the signal's
// context ends, for example with
//
//	stop := context.AfterFunc(ctx, func() { w.Close() })
//	defer stop()
//
// Writes after Close return ErrClosed, so producers still running stop
// cleanly.
type Writer struct {
	mu        sync.Mutex
	out       *bufio.Writer
	file      *os.File // opened by Create
	enc       *encoder
	frame     []byte
	header    Header
	interval  time.Duration
	timer     *time.Timer
	armed     bool
	now       func() time.Time
	start     time.Time
	red       *Redactor
	keepTimes bool
	next      uint64
	err       error // sticky write error
	closed    bool
}

// Create creates (or truncates) the file at path and starts a trace in
// it with header h. The header is on disk when Create returns.
func Create(path string, h Header, opts *WriterOptions) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f, h, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.file = f
	return w, nil
}

// NewWriter starts a trace on out with header h: it writes the magic, the
// format version and the header, and flushes them. Header.FormatVersion
// is set to FormatVersion; a zero Header.Created is set to now.
func NewWriter(out io.Writer, h Header, opts *WriterOptions) (*Writer, error) {
	if opts == nil {
		opts = &WriterOptions{}
	}
	w := &Writer{
		out:       bufio.NewWriterSize(out, 64<<10),
		enc:       newEncoder(),
		interval:  opts.FlushInterval,
		now:       opts.Now,
		red:       opts.Redactor,
		keepTimes: opts.KeepTimes,
	}
	if w.interval == 0 {
		w.interval = DefaultFlushInterval
	}
	if w.now == nil {
		w.now = time.Now
	}
	w.start = w.now()
	h.FormatVersion = FormatVersion
	if h.Created.IsZero() {
		h.Created = w.start
	}
	h.Command = slices.Clone(h.Command)
	h.Labels = slices.Clone(h.Labels)
	h.Faults = h.Faults.Clone()
	if w.red != nil {
		w.red.ApplyHeader(&h)
	}
	w.header = h
	payload, err := w.enc.header(&h)
	if err != nil {
		return nil, fmt.Errorf("encode trace header: %w", err)
	}
	if len(payload) > MaxRecordSize {
		return nil, fmt.Errorf("trace header: %w", ErrTooLarge)
	}
	w.frame = appendPreamble(w.frame[:0], FormatVersion)
	w.frame = appendFrameHead(w.frame, payload)
	w.frame = append(w.frame, payload...)
	if _, err := w.out.Write(w.frame); err != nil {
		return nil, fmt.Errorf("write trace header: %w", err)
	}
	if err := w.out.Flush(); err != nil {
		return nil, fmt.Errorf("write trace header: %w", err)
	}
	return w, nil
}

// Header returns the header as written (after redaction).
func (w *Writer) Header() Header { return w.header }

// Written returns the number of records written so far.
func (w *Writer) Written() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next
}

// Write appends r. It assigns r.Index (records count from 0 in file
// order); unless KeepTimes, it fills a zero Wall and Offset from the
// clock (one from the other when only one is zero); it fills a nil RPC of
// a message, stdio-line or sse-event record with DescribeMessage of its
// JSON text; it applies the Redactor to a copy. r is encoded before Write
// returns, so the caller may reuse r.Raw at once.
//
// A record that encodes to more than MaxRecordSize bytes is refused with
// ErrTooLarge and the trace goes on. After a write error of the
// underlying writer every Write returns that error.
func (w *Writer) Write(r Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if w.red != nil {
		r = r.Clone()
		w.red.Apply(&r)
	}
	if !w.keepTimes {
		w.fillTimes(&r)
	}
	if r.RPC == nil {
		r.RPC = describeRecord(&r)
	}
	r.Index = w.next
	payload, err := w.enc.record(&r)
	if err != nil {
		return fmt.Errorf("encode record %d: %w", r.Index, err)
	}
	if len(payload) > MaxRecordSize {
		return fmt.Errorf("record %d (%s, %d bytes): %w", r.Index, r.Kind, len(payload), ErrTooLarge)
	}
	w.frame = appendFrameHead(w.frame[:0], payload)
	if _, err := w.out.Write(w.frame); err != nil {
		return w.fail(err)
	}
	if _, err := w.out.Write(payload); err != nil {
		return w.fail(err)
	}
	w.next++
	w.arm()
	return nil
}

func (w *Writer) fillTimes(r *Record) {
	switch {
	case r.Wall.IsZero() && r.Offset == 0:
		t := w.now()
		r.Wall, r.Offset = t, t.Sub(w.start)
	case r.Wall.IsZero():
		r.Wall = w.start.Add(r.Offset)
	case r.Offset == 0:
		r.Offset = r.Wall.Sub(w.start)
	}
}

// describeRecord returns the RPC fields of a record's JSON-RPC text.
func describeRecord(r *Record) *RPCFields {
	switch r.Kind {
	case KindMessage, KindStdioLine:
		return DescribeMessage(r.Raw)
	case KindSSEEvent:
		if r.SSE != nil {
			return DescribeMessage([]byte(r.SSE.Data))
		}
	}
	return nil
}

func (w *Writer) fail(err error) error {
	w.err = fmt.Errorf("write trace: %w", err)
	return w.err
}

// arm starts the flush timer if unflushed bytes wait and it is not
// running.
func (w *Writer) arm() {
	if w.armed || w.interval < 0 || w.out.Buffered() == 0 {
		return
	}
	w.armed = true
	if w.timer == nil {
		w.timer = time.AfterFunc(w.interval, w.tick)
	} else {
		w.timer.Reset(w.interval)
	}
}

func (w *Writer) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if w.closed || w.err != nil {
		return
	}
	if err := w.out.Flush(); err != nil {
		w.fail(err)
	}
}

// Flush writes the buffered records to the underlying writer.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if err := w.out.Flush(); err != nil {
		return w.fail(err)
	}
	return nil
}

// Close flushes, stops the flush timer and, if Create opened the file,
// syncs and closes it. Closing twice is not an error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	err := w.err
	if err == nil {
		if ferr := w.out.Flush(); ferr != nil {
			err = fmt.Errorf("write trace: %w", ferr)
		}
	}
	if w.file != nil {
		if err == nil {
			if serr := w.file.Sync(); serr != nil {
				err = fmt.Errorf("sync trace: %w", serr)
			}
		}
		if cerr := w.file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close trace: %w", cerr)
		}
	}
	return err
}
