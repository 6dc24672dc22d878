package load

import (
	"encoding/base64"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Metric names a measurement of a mode (DESIGN.md, "Load metrics"). The
// histogram metrics are recorded per task; bytes and cpu are means over
// the mode's tasks.
type Metric string

// Metrics.
const (
	// MetricTTFP: intended start -> first content received (a SEP-1905
	// segment or a SEP-2679 partial; for a mode that gets no content
	// before the result, the result).
	MetricTTFP Metric = "ttfp"
	// MetricTTR: intended start -> the complete result in hand.
	MetricTTR Metric = "ttr"
	// MetricDiscovery: the server's completion time -> the complete
	// result in hand.
	MetricDiscovery Metric = "discovery"
	// MetricLag: intended start -> actual start.
	MetricLag Metric = "lag"
	// MetricRequests: HTTP requests made for the task.
	MetricRequests Metric = "requests"
	// MetricBytes: bytes on the wire per task, both directions (mean).
	MetricBytes Metric = "bytes"
	// MetricCPU: server process CPU time per task (mean).
	MetricCPU Metric = "cpu"
)

// Metrics lists every metric, in a slice of the caller's own.
func Metrics() []Metric { return slices.Clone(metrics[:]) }

var metrics = [...]Metric{MetricTTFP, MetricTTR, MetricDiscovery, MetricLag, MetricRequests, MetricBytes, MetricCPU}

// histMetrics are the metrics kept in HDR histograms, in histSet order.
var histMetrics = [nHist]Metric{MetricTTFP, MetricTTR, MetricDiscovery, MetricLag, MetricRequests}

const (
	iTTFP = iota
	iTTR
	iDiscovery
	iLag
	iRequests
	nHist
)

// Histogram geometry: 3 significant digits; latencies in nanoseconds from
// 1 µs to 1 h, requests from 1 to 10 million. Larger values are recorded
// as the largest (and counted in ModeResult.Clipped).
const (
	sigFigs     = 3
	minLatency  = int64(time.Microsecond)
	maxLatency  = int64(time.Hour)
	maxRequests = 10_000_000
)

func newHistogram(i int) *hdr.Histogram {
	if i == iRequests {
		return hdr.New(1, maxRequests, sigFigs)
	}
	return hdr.New(minLatency, maxLatency, sigFigs)
}

// histSet is one mode's histograms.
type histSet [nHist]*hdr.Histogram

func newHistSet() *histSet {
	var s histSet
	for i := range s {
		s[i] = newHistogram(i)
	}
	return &s
}

func (s *histSet) merge(from *histSet) {
	for i := range s {
		s[i].Merge(from[i])
	}
}

func (s *histSet) reset() {
	for i := range s {
		s[i].Reset()
	}
}

// counts are one mode's counters besides histograms, for an interval or
// the whole run.
type counts struct {
	completed, failed int64
	errors            map[string]int64
	// errorSamples keeps the first failure's message of each error kind.
	errorSamples                         map[string]string
	answers                              map[string]int64
	segments, partials, duplicates       int64
	gaps, dataLoss, resumes, streamsLost int64
	negativeDiscovery, clipped           int64
	discoveryUpdated                     int64
	// sums give exact means (histograms give percentiles).
	sum [nHist]float64
	// 2026-07-28: the tasks/get round trips (nil until one is recorded)
	// and their sum, the largest pollIntervalMs seen, the listens that
	// fell back to polling.
	getRTT          *hdr.Histogram
	getRTTSum       float64
	serverPoll      time.Duration
	listenFallbacks int64
}

// addRTT records one tasks/get round trip.
func (c *counts) addRTT(d time.Duration) {
	if c.getRTT == nil {
		c.getRTT = newHistogram(iTTR)
	}
	c.clipped += recordValue(c.getRTT, int64(d))
	c.getRTTSum += float64(max(d, 0))
}

func (c *counts) add(o *counts) {
	c.completed += o.completed
	c.failed += o.failed
	c.errors = addMap(c.errors, o.errors)
	for k, v := range o.errorSamples {
		if _, ok := c.errorSamples[k]; !ok {
			if c.errorSamples == nil {
				c.errorSamples = map[string]string{}
			}
			c.errorSamples[k] = v
		}
	}
	c.answers = addMap(c.answers, o.answers)
	c.segments += o.segments
	c.partials += o.partials
	c.duplicates += o.duplicates
	c.gaps += o.gaps
	c.dataLoss += o.dataLoss
	c.resumes += o.resumes
	c.streamsLost += o.streamsLost
	c.negativeDiscovery += o.negativeDiscovery
	c.clipped += o.clipped
	c.discoveryUpdated += o.discoveryUpdated
	if o.getRTT != nil {
		if c.getRTT == nil {
			c.getRTT = newHistogram(iTTR)
		}
		c.getRTT.Merge(o.getRTT)
		c.getRTTSum += o.getRTTSum
	}
	c.serverPoll = max(c.serverPoll, o.serverPoll)
	c.listenFallbacks += o.listenFallbacks
	for i := range c.sum {
		c.sum[i] += o.sum[i]
	}
}

func addMap(dst, src map[string]int64) map[string]int64 {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]int64{}
	}
	for k, v := range src {
		dst[k] += v
	}
	return dst
}

// sample is what one task measured.
type sample struct {
	ok      bool
	errKind string // when !ok
	errMsg  string // when !ok: the error's message, if there was one
	answer  string
	// When ok:
	ttfp, ttr, discovery time.Duration
	hasDiscovery         bool
	discoveryUpdated     bool // from lastUpdatedAt, not the result's meta
	requests             int64

	segments, partials, duplicates, gaps, dataLoss, resumes int64
	streamLost                                              bool

	// 2026-07-28: each tasks/get's round trip, the task's pollIntervalMs
	// as last seen (0: none), and whether a listen fell back to polling.
	getRTTs        []time.Duration
	serverPoll     time.Duration
	listenFallback bool
}

// shard is one recorder's histograms and counters for the current
// interval: tasks record into shard (task number mod shards) under its
// lock; the collector swaps them out every interval. Memory is shards ×
// modes × 2 histogram sets, whatever the number of tasks or clients.
type shard struct {
	mu    sync.Mutex
	hist  []*histSet
	count []counts
}

func newShard(modes int) *shard {
	s := &shard{hist: make([]*histSet, modes), count: make([]counts, modes)}
	for i := range s.hist {
		s.hist[i] = newHistSet()
	}
	return s
}

// numShards is the number of recorders: one per processor, at most 8.
func numShards() int { return min(runtime.GOMAXPROCS(0), 8) }

// recordStart records a task's start lag when it starts, so that the
// interval it lands in (and the live warning) is when it happened.
func (s *shard) recordStart(mode int, lag time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.count[mode]
	c.clipped += recordValue(s.hist[mode][iLag], int64(lag))
	c.sum[iLag] += float64(max(lag, 0))
}

// record records what a task measured when it ended.
func (s *shard) record(mode int, x *sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, c := s.hist[mode], &s.count[mode]
	if x.answer != "" {
		if c.answers == nil {
			c.answers = map[string]int64{}
		}
		c.answers[x.answer]++
	}
	c.segments += x.segments
	c.partials += x.partials
	c.duplicates += x.duplicates
	c.gaps += x.gaps
	c.dataLoss += x.dataLoss
	c.resumes += x.resumes
	if x.streamLost {
		c.streamsLost++
	}
	for _, d := range x.getRTTs {
		c.addRTT(d)
	}
	c.serverPoll = max(c.serverPoll, x.serverPoll)
	if x.listenFallback {
		c.listenFallbacks++
	}
	if !x.ok {
		c.failed++
		if c.errors == nil {
			c.errors = map[string]int64{}
		}
		c.errors[x.errKind]++
		if _, ok := c.errorSamples[x.errKind]; !ok && x.errMsg != "" {
			if c.errorSamples == nil {
				c.errorSamples = map[string]string{}
			}
			c.errorSamples[x.errKind] = x.errMsg
		}
		return
	}
	c.completed++
	c.clipped += recordValue(h[iTTFP], int64(x.ttfp))
	c.clipped += recordValue(h[iTTR], int64(x.ttr))
	c.sum[iTTFP] += float64(x.ttfp)
	c.sum[iTTR] += float64(x.ttr)
	if x.hasDiscovery {
		if x.discovery < 0 {
			c.negativeDiscovery++
		}
		if x.discoveryUpdated {
			c.discoveryUpdated++
		}
		c.clipped += recordValue(h[iDiscovery], int64(x.discovery))
		c.sum[iDiscovery] += float64(max(x.discovery, 0))
	}
	c.clipped += recordValue(h[iRequests], x.requests)
	c.sum[iRequests] += float64(x.requests)
}

// recordValue records v, clamped into h's range; it returns 1 when v was
// above the range.
func recordValue(h *hdr.Histogram, v int64) int64 {
	clipped := int64(0)
	if v < 0 {
		v = 0
	}
	if hi := h.HighestTrackableValue(); v > hi {
		v, clipped = hi, 1
	}
	_ = h.RecordValue(v)
	return clipped
}

// swap hands the shard's interval data to the collector, taking the
// cleared spares in exchange.
func (s *shard) swap(spare []*histSet) (hist []*histSet, c []counts) {
	fresh := make([]counts, len(s.count))
	s.mu.Lock()
	hist, s.hist = s.hist, spare
	c, s.count = s.count, fresh
	s.mu.Unlock()
	return hist, c
}

// Stats summarises one metric of a mode. Latencies are in milliseconds,
// requests in requests, bytes in bytes, CPU in milliseconds (Unit says
// which). Mean is exact; percentiles and Max come from the HDR histogram
// (3 significant digits). HDR is the histogram itself, V2 compressed and
// base64 encoded (the .hlog payload format), for reports that draw
// percentile curves.
type Stats struct {
	Unit  string  `json:"unit"`
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
	HDR   string  `json:"hdr,omitempty"`
}

// Units of Stats.
const (
	UnitMs       = "ms"
	UnitRequests = "requests"
	UnitBytes    = "bytes"
)

// statsOf summarises h, whose values are divided by scale (1e6 for
// nanoseconds to milliseconds); sum is the exact sum of the recorded
// values, in h's unit.
func statsOf(h *hdr.Histogram, sum float64, unit string, scale float64) Stats {
	st := Stats{Unit: unit, Count: h.TotalCount()}
	if st.Count == 0 {
		return st
	}
	v := h.ValueAtPercentilesSlice([]float64{50, 90, 99, 99.9})
	st.Mean = round3(sum / float64(st.Count) / scale)
	st.P50 = round3(float64(v[0]) / scale)
	st.P90 = round3(float64(v[1]) / scale)
	st.P99 = round3(float64(v[2]) / scale)
	st.P999 = round3(float64(v[3]) / scale)
	st.Max = round3(float64(h.Max()) / scale)
	if b, err := h.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
		st.HDR = string(b)
	}
	return st
}

// DecodeHDR returns the histogram of a Stats.HDR.
func DecodeHDR(s string) (*hdr.Histogram, error) {
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return nil, err
	}
	return hdr.Decode([]byte(s))
}

// round3 keeps three decimals: microseconds for milliseconds.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
