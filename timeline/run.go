package timeline

import (
	"bytes"
	"errors"
	"iter"
	"unicode/utf8"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/traces"
)

// Defaults of Options.
const (
	// DefaultMaxRecords is how many records a run draws when
	// Options.MaxRecords is 0: about 2 MB of HTML at most.
	DefaultMaxRecords = 2000
	// DefaultMaxBytes is how many bytes of a record's raw text its
	// details show when Options.MaxBytes is 0.
	DefaultMaxBytes = 600
)

// Options bound what a Run keeps. Zero values are the defaults.
type Options struct {
	// MaxRecords is how many records are drawn; the records past it are
	// counted, and the page says how many, with their faults and
	// violations.
	MaxRecords int
	// MaxBytes is how many bytes of each record's raw text are kept for
	// its details.
	MaxBytes int
}

// Run is one history to draw: its records (the first MaxRecords), the
// trace header, and the verdict that judged it. Add records in trace
// order; set Verdict (and Notes) before Write. A Run is not safe for
// concurrent use.
type Run struct {
	// Title names the run on the page ("seed 42", a scenario, a file).
	Title string
	// Header is the trace's header: command, seed, fault schedule.
	Header traces.Header
	// Verdict is the checker's verdict on the run; nil: none. Its
	// findings' records are highlighted.
	Verdict *check.Verdict
	// Notes are lines shown under the title, such as findings that name
	// no record (the simulator's liveness findings).
	Notes []string

	max, maxBytes int
	records       []traces.Record
	// total counts every record added; past counts those not kept, and
	// pastFaults the fault records among them.
	total, past uint64
	pastFaults  int
	firstPast   uint64
	// cut holds the raw length of each record whose raw text was cut.
	cut map[uint64]int
}

// NewRun returns an empty run titled title.
func NewRun(title string, o *Options) *Run {
	r := &Run{Title: title, max: DefaultMaxRecords, maxBytes: DefaultMaxBytes}
	if o != nil && o.MaxRecords > 0 {
		r.max = o.MaxRecords
	}
	if o != nil && o.MaxBytes > 0 {
		r.maxBytes = o.MaxBytes
	}
	return r
}

// Add adds the next record of the trace. It keeps a copy of the first
// MaxRecords records, their raw text cut to MaxBytes, and counts the rest.
func (r *Run) Add(rec traces.Record) {
	r.total++
	if len(r.records) >= r.max {
		if r.past == 0 {
			r.firstPast = rec.Index
		}
		r.past++
		if rec.Kind == traces.KindFault {
			r.pastFaults++
		}
		return
	}
	if len(rec.Raw) > r.maxBytes {
		if r.cut == nil {
			r.cut = map[uint64]int{}
		}
		r.cut[rec.Index] = len(rec.Raw)
		n := r.maxBytes
		for n > 0 && !utf8.RuneStart(rec.Raw[n]) {
			n-- // cut between characters, not inside one
		}
		rec.Raw = rec.Raw[:n]
	}
	c := rec.Clone()
	r.records = append(r.records, c)
}

// Tee returns seq with every record it yields also added to r, so that
// one pass over a trace feeds the checker and the timeline.
func (r *Run) Tee(seq iter.Seq2[traces.Record, error]) iter.Seq2[traces.Record, error] {
	return func(yield func(traces.Record, error) bool) {
		for rec, err := range seq {
			if err == nil {
				r.Add(rec)
			}
			if !yield(rec, err) {
				return
			}
		}
	}
}

// Records returns how many records were added and how many of them are
// drawn.
func (r *Run) Records() (added, drawn int) { return int(r.total), len(r.records) }

// FromTrace reads a whole trace file's bytes into a run titled title,
// with its header. A trace cut short (its writer was killed) is read up
// to its last whole record, and a note says so.
func FromTrace(data []byte, title string, o *Options) (*Run, error) {
	rd, err := traces.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	r := NewRun(title, o)
	r.Header = rd.Header()
	for rec, err := range rd.Records() {
		if err != nil {
			if errors.Is(err, traces.ErrTruncated) {
				r.Notes = append(r.Notes, "the trace is cut: "+err.Error()+"; drawn up to its last whole record")
				break
			}
			return nil, err
		}
		r.Add(rec)
	}
	return r, nil
}
