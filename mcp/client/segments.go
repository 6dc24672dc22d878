package client

import (
	"cmp"
	"slices"

	"github.com/tasksim/tasksim/mcp"
)

// segmentTracker is the per-task record SEP-1905 asks a streaming client to
// keep ("Client Implementation Guide", "Segment Tracking"): the received
// seqNr set, the highest seqNr, the segments by seqNr and completion.
// Segments may come by any mechanism (initial response, later responses on
// the stream, tasks/result with lastSeqNr); a seqNr already received is
// ignored whatever brought it ("Client Handling of Multiple Mechanisms",
// rules 1-3).
type segmentTracker struct {
	segs map[int64]mcp.Segment
	// noContent (CallOptions.NoContent) keeps no segment: received seqNrs
	// are 1..contiguous and those in ahead, which is made only for a
	// segment that comes before one below it.
	noContent  bool
	ahead      map[int64]struct{}
	received   int   // distinct segments
	contiguous int64 // the highest n with 1..n all received
	highest    int64
	duplicates int
	invalid    int
	complete   bool
	isError    bool
	// gapReported: the gap open now is on the timeline (one EventGap per
	// gap, however many responses show it).
	gapReported bool
	// tail is content of the final response carried by no segment (a
	// failure without partial results, "Streaming Behavior").
	tail []mcp.ContentBlock
}

type segmentOutcome int

const (
	segmentNew segmentOutcome = iota
	segmentDuplicate
	segmentInvalid
)

func newSegmentTracker(noContent bool) *segmentTracker {
	if noContent {
		return &segmentTracker{noContent: true}
	}
	return &segmentTracker{segs: map[int64]mcp.Segment{}}
}

// has reports whether seqNr n was received.
func (t *segmentTracker) has(n int64) bool {
	if t.noContent {
		_, ok := t.ahead[n]
		return n <= t.contiguous || ok
	}
	_, ok := t.segs[n]
	return ok
}

// add records one segment. A seqNr below 1 is invalid ("Sequence Number
// Requirements": positive integers) and dropped.
func (t *segmentTracker) add(s mcp.Segment) segmentOutcome {
	if s.SeqNr < 1 {
		t.invalid++
		return segmentInvalid
	}
	if t.has(s.SeqNr) {
		t.duplicates++
		return segmentDuplicate
	}
	t.received++
	t.highest = max(t.highest, s.SeqNr)
	switch {
	case !t.noContent:
		t.segs[s.SeqNr] = s
	case s.SeqNr != t.contiguous+1:
		if t.ahead == nil {
			t.ahead = map[int64]struct{}{}
		}
		t.ahead[s.SeqNr] = struct{}{}
		return segmentNew
	default:
		t.contiguous++
	}
	for t.has(t.contiguous + 1) {
		t.contiguous++
		delete(t.ahead, t.contiguous)
	}
	return segmentNew
}

// hasGap reports whether a seqNr below the highest is missing.
func (t *segmentTracker) hasGap() bool { return t.highest > t.contiguous }

// missing lists the seqNrs below the highest not received.
func (t *segmentTracker) missing() []int64 {
	var out []int64
	for n := t.contiguous + 1; n < t.highest; n++ {
		if !t.has(n) {
			out = append(out, n)
		}
	}
	return out
}

// segments returns the received segments in seqNr order.
func (t *segmentTracker) segments() []mcp.Segment {
	out := make([]mcp.Segment, 0, len(t.segs))
	for _, s := range t.segs {
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b mcp.Segment) int { return cmp.Compare(a.SeqNr, b.SeqNr) })
	return out
}

// content merges the segments in seqNr order without seqNr, then the tail
// (SEP-1905, "tasks/result Operation", merge steps 1-5).
func (t *segmentTracker) content() []mcp.ContentBlock {
	return append(mcp.MergeSegments(t.segments()), t.tail...)
}
