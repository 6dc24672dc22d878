package traces

import (
	"errors"
	"io"
	"time"
)

// VerifyReport is what Verify found.
type VerifyReport struct {
	// Header is the trace's header (zero if it could not be read).
	Header Header
	// Records counts the whole, valid records.
	Records uint64
	// Size is the byte length of the valid part: the offset just past the
	// last whole record (or the header).
	Size int64
	// Duration is the Offset of the last whole record.
	Duration time.Duration
	// Truncated is set when the input ends inside a frame.
	Truncated *TruncatedError
	// Corrupt is set at the first damaged frame; Verify stops there.
	Corrupt *CorruptError
}

// OK reports a whole, undamaged trace.
func (v *VerifyReport) OK() bool { return v.Truncated == nil && v.Corrupt == nil }

// Verify reads a whole trace and checks every frame. A cut or damaged
// trace is a finding, reported in the VerifyReport by record index and
// byte offset, with a nil error; the error is for input that is not a
// trace (ErrNotTrace), a *VersionError, and read errors.
func Verify(in io.Reader) (VerifyReport, error) {
	var v VerifyReport
	r, err := NewReader(in)
	if err != nil {
		if v.note(err) {
			return v, nil
		}
		return v, err
	}
	v.Header = r.Header()
	v.Size = r.off
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return v, nil
		}
		if err != nil {
			if v.note(err) {
				return v, nil
			}
			return v, err
		}
		v.Records++
		v.Size = r.off
		v.Duration = rec.Offset
	}
}

// note records a truncation or corruption and reports whether err was
// one.
func (v *VerifyReport) note(err error) bool {
	var t *TruncatedError
	var c *CorruptError
	switch {
	case errors.As(err, &t):
		v.Truncated = t
		v.Size = t.Offset
	case errors.As(err, &c):
		v.Corrupt = c
		v.Size = c.Offset
	default:
		return false
	}
	return true
}
