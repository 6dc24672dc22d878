package sse

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// keepBuf is the largest encoding buffer a Writer keeps between events.
const keepBuf = 64 << 10

// Writer encodes events onto an event stream. Each event or comment goes
// out in one Write call.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// WriteEvent writes one event; see AppendEvent for the encoding. An event
// that cannot be encoded writes nothing and fails with ErrInvalidField.
func (w *Writer) WriteEvent(e Event) error {
	b, err := AppendEvent(w.buf[:0], e)
	if err != nil {
		return err
	}
	return w.write(b, "event")
}

// WriteComment writes a comment, ": text" and a blank line, which readers
// ignore; servers send it to keep a connection alive. Text with line breaks
// becomes several comment lines.
func (w *Writer) WriteComment(text string) error {
	return w.write(AppendComment(w.buf[:0], text), "comment")
}

// Flush flushes the underlying writer if it has a Flush method, with or
// without an error result (an http.ResponseWriter has one, so has a
// bufio.Writer), and does nothing otherwise.
func (w *Writer) Flush() error {
	switch f := w.w.(type) {
	case interface{ Flush() error }:
		if err := f.Flush(); err != nil {
			return fmt.Errorf("sse: flush: %w", err)
		}
	case interface{ Flush() }:
		f.Flush()
	}
	return nil
}

func (w *Writer) write(b []byte, what string) error {
	_, err := w.w.Write(b)
	if cap(b) <= keepBuf {
		w.buf = b[:0]
	} else {
		w.buf = nil
	}
	if err != nil {
		return fmt.Errorf("sse: write %s: %w", what, err)
	}
	return nil
}

// AppendEvent appends the encoding of e to dst: an "id" line if e.HasID or
// e.ID is set, an "event" line if e.Name is set, a "retry" line in whole
// milliseconds (rounded down) if e.HasRetry or e.Retry is set, one "data" line
// per line of e.Data (split at "\n", "\r\n" and "\r"), and a blank line.
//
// There is always at least one data line, so every encoded event is
// dispatched by a reader: an event with an id and no data (one that only sets
// the resume point) is "id: X\ndata:\n\n" and reads back with Data "".
//
// An id or name holding CR, LF or NUL, or a negative retry, cannot be
// encoded: AppendEvent then returns dst unchanged and an error wrapping
// ErrInvalidField.
func AppendEvent(dst []byte, e Event) ([]byte, error) {
	if strings.ContainsAny(e.ID, "\r\n\x00") {
		return dst, fmt.Errorf("%w: id %q holds CR, LF or NUL", ErrInvalidField, e.ID)
	}
	if strings.ContainsAny(e.Name, "\r\n\x00") {
		return dst, fmt.Errorf("%w: event name %q holds CR, LF or NUL", ErrInvalidField, e.Name)
	}
	if e.Retry < 0 {
		return dst, fmt.Errorf("%w: negative retry %v", ErrInvalidField, e.Retry)
	}
	if e.HasID || e.ID != "" {
		dst = appendLine(dst, "id:", e.ID)
	}
	if e.Name != "" {
		dst = appendLine(dst, "event:", e.Name)
	}
	if e.HasRetry || e.Retry != 0 {
		dst = append(dst, "retry: "...)
		dst = strconv.AppendInt(dst, int64(e.Retry/time.Millisecond), 10)
		dst = append(dst, '\n')
	}
	dst = appendLines(dst, "data:", e.Data)
	return append(dst, '\n'), nil
}

// AppendComment appends a comment, ": text" and a blank line, to dst. Text
// with line breaks becomes several comment lines.
func AppendComment(dst []byte, text string) []byte {
	dst = appendLines(dst, ":", text)
	return append(dst, '\n')
}

// appendLines appends one line of prefix and value per line of text, split
// at LF, CRLF and CR.
func appendLines(dst []byte, prefix, text string) []byte {
	for {
		end := strings.IndexByte(text, '\n')
		before := text
		if end >= 0 {
			before = text[:end]
		}
		if cr := strings.IndexByte(before, '\r'); cr >= 0 {
			end = cr
		}
		if end < 0 {
			return appendLine(dst, prefix, text)
		}
		dst = appendLine(dst, prefix, text[:end])
		if text[end] == '\r' && end+1 < len(text) && text[end+1] == '\n' {
			end++
		}
		text = text[end+1:]
	}
}

// appendLine appends "prefix value\n". The space is left out when value is
// empty; when present, readers remove it, so a value that starts with a space
// keeps it.
func appendLine(dst []byte, prefix, value string) []byte {
	dst = append(dst, prefix...)
	if value != "" {
		dst = append(dst, ' ')
		dst = append(dst, value...)
	}
	return append(dst, '\n')
}
