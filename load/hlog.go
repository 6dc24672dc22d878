package load

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// An .hlog file is the standard HdrHistogram interval log (format 1.3, as
// HdrHistogram's Java and Go log readers and HistogramLogAnalyzer read it):
// comment lines starting with '#', a legend, then one line per interval
// and histogram:
//
//	#[Histogram log format version 1.3]
//	#[StartTime: 1767225600 (seconds since epoch), 2026-01-01T00:00:00Z]
//	"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//	Tag=sse.ttr,1767225600.000000,1.000000,1012.735999,HISTFAAAA...
//
// tasksim load writes, every interval, one line per mode and histogram
// metric, tagged MODE.METRIC (sse.ttr, poll:1s.discovery). Timestamps are
// absolute, in seconds. Latency histograms hold nanoseconds, so the
// Interval_Max column is in milliseconds as the format expects; the
// requests histograms hold request counts (their Interval_Max column is
// that count divided by 10^6, the format's fixed ratio).

// hlogWriter writes a run's interval log.
type hlogWriter struct {
	lw  *hdr.HistogramLogWriter
	err error
}

func newHlogWriter(w io.Writer, start time.Time, comment string) *hlogWriter {
	h := &hlogWriter{lw: hdr.NewHistogramLogWriter(w)}
	h.do(h.lw.OutputLogFormatVersion())
	h.do(h.lw.OutputStartTime(start.UnixMilli()))
	if comment != "" {
		h.do(h.lw.OutputComment(comment))
	}
	h.do(h.lw.OutputLegend())
	return h
}

func (h *hlogWriter) do(err error) {
	if h.err == nil && err != nil {
		h.err = fmt.Errorf("write hlog: %w", err)
	}
}

// write logs h tagged tag for [start, end).
func (h *hlogWriter) write(hist *hdr.Histogram, tag string, start, end time.Time) {
	if h == nil || h.err != nil {
		return
	}
	hist.SetTag(tag)
	hist.SetStartTimeMs(start.UnixMilli())
	hist.SetEndTimeMs(end.UnixMilli())
	h.do(h.lw.OutputIntervalHistogram(hist))
}

// HlogIntervals reads an interval log, yielding each interval histogram
// with its tag and start and end times (StartTimeMs, EndTimeMs) set.
func HlogIntervals(r io.Reader) iter.Seq2[*hdr.Histogram, error] {
	return func(yield func(*hdr.Histogram, error) bool) {
		lr := hdr.NewHistogramLogReader(r)
		for {
			h, err := lr.NextIntervalHistogram()
			if err != nil {
				yield(nil, fmt.Errorf("read hlog: %w", err))
				return
			}
			if h == nil {
				return
			}
			if !yield(h, nil) {
				return
			}
		}
	}
}

// HlogTotals reads an interval log and returns, per tag, the merge of all
// its intervals: the histogram of the whole run.
func HlogTotals(r io.Reader) (map[string]*hdr.Histogram, error) {
	out := map[string]*hdr.Histogram{}
	for h, err := range HlogIntervals(r) {
		if err != nil {
			return nil, err
		}
		if err := mergeInto(out, h.Tag(), h); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MergeHlogs merges interval logs exactly: the intervals of every input
// whose start falls in the same slot (a multiple of width since the epoch)
// and that carry the same tag are added up, histogram by histogram, and
// written as one interval of that slot. Nothing is resampled, so the
// totals of the merged log equal the totals of the inputs added up: two
// half-runs, or two load generators on two machines, merge into the
// histograms of the whole.
func MergeHlogs(w io.Writer, width time.Duration, logs ...io.Reader) error {
	if width < time.Millisecond {
		return errors.New("merge hlog: the interval width must be at least 1ms")
	}
	type key struct {
		slot int64
		tag  string
	}
	merged := map[key]*hdr.Histogram{}
	first := int64(-1)
	for i, r := range logs {
		for h, err := range HlogIntervals(r) {
			if err != nil {
				return fmt.Errorf("log %d: %w", i+1, err)
			}
			slot := h.StartTimeMs() / width.Milliseconds()
			k := key{slot, h.Tag()}
			if first < 0 || h.StartTimeMs() < first {
				first = h.StartTimeMs()
			}
			if m := merged[k]; m != nil {
				if dropped := m.Merge(h); dropped > 0 {
					return fmt.Errorf("log %d: tag %s: %d values outside the histogram range of the first log", i+1, h.Tag(), dropped)
				}
				continue
			}
			merged[k] = h.Clone()
		}
	}
	keys := slices.SortedFunc(maps.Keys(merged), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.slot, b.slot), cmp.Compare(a.tag, b.tag))
	})
	start := time.UnixMilli(max(first, 0))
	hw := newHlogWriter(w, start, fmt.Sprintf("[tasksim: %d logs merged, interval %v]", len(logs), width))
	for _, k := range keys {
		s := time.UnixMilli(k.slot * width.Milliseconds())
		hw.write(merged[k], k.tag, s, s.Add(width))
	}
	return hw.err
}

func mergeInto(m map[string]*hdr.Histogram, tag string, h *hdr.Histogram) error {
	if t := m[tag]; t != nil {
		if dropped := t.Merge(h); dropped > 0 {
			return fmt.Errorf("tag %s: %d values outside the histogram range", tag, dropped)
		}
		return nil
	}
	m[tag] = h.Clone()
	return nil
}
