package load

import (
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metric names Prom exports, every one with the label mode (a ModeSpec's
// name: "poll:1s", "sse", "partial", "immediate"). dashboards/ queries
// them; its test checks that each exists and moves in a real run.
const (
	// Counters of tasks, updated as each starts or ends.
	PromTasksStarted   = "tasksim_load_tasks_started_total"
	PromTasksCompleted = "tasksim_load_tasks_completed_total"
	PromTasksFailed    = "tasksim_load_tasks_failed_total"
	// PromInFlight is a gauge: tasks running now.
	PromInFlight = "tasksim_load_tasks_in_flight"
	// Histograms in seconds, from each task's intended start (completed
	// tasks only; lag for every task as it starts).
	PromTTFP      = "tasksim_load_time_to_first_content_seconds"
	PromTTR       = "tasksim_load_time_to_result_seconds"
	PromDiscovery = "tasksim_load_discovery_delay_seconds"
	PromLag       = "tasksim_load_start_lag_seconds"
	// Counters updated every interval: the mode's sessions' HTTP requests
	// and bytes on the wire (the standalone stream included), SEP-1905
	// segments and SEP-2679 partials received.
	PromRequests      = "tasksim_load_http_requests_total"
	PromBytesSent     = "tasksim_load_bytes_sent_total"
	PromBytesReceived = "tasksim_load_bytes_received_total"
	PromSegments      = "tasksim_load_segments_total"
	PromPartials      = "tasksim_load_partials_total"
)

// PromMetrics lists every metric name Prom exports, in a slice of the
// caller's own.
func PromMetrics() []string { return slices.Clone(promMetrics[:]) }

var promMetrics = [...]string{
	PromTasksStarted, PromTasksCompleted, PromTasksFailed, PromInFlight,
	PromTTFP, PromTTR, PromDiscovery, PromLag,
	PromRequests, PromBytesSent, PromBytesReceived, PromSegments, PromPartials,
}

// PromBucketFactor is the ratio of a histogram bucket's upper bound to its
// lower: 2^(1/8), so a quantile that histogram_quantile interpolates in a
// bucket is within 9.05% of the truth. Coarser buckets (1-2.5-5 per
// decade) put every ~1 s task in one bucket: the dashboard drew one 2.485 s
// p99 line for sse (truth 1.01 s) and poll:1s (truth 2.01 s).
var PromBucketFactor = math.Pow(2, 1.0/8)

// PromBuckets returns the classic histograms' upper bounds in seconds, in
// a slice of the caller's own: powers of PromBucketFactor from 2^-13.25 s
// (103 µs) to 2^6 s (64 s), 155 buckets, aligned with the native
// histograms' (schema 3) boundaries.
func PromBuckets() []float64 { return slices.Clone(promBuckets) }

var promBuckets = func() []float64 {
	var b []float64
	for k := -106; k <= 48; k++ {
		b = append(b, math.Pow(2, float64(k)/8))
	}
	return b
}()

// promNativeFactor makes the histograms native too (schema 3: factor
// 2^(1/8)) for a Prometheus that scrapes them (--enable-feature=
// native-histograms); older servers read the classic buckets.
const promNativeFactor = 1.09

// Prom is an Observer that exports a run as Prometheus metrics, in a
// registry of its own (never the global one), for Handler to serve:
//
//	p := load.NewProm()
//	go http.Serve(ln, p.Handler())
//	res, err := load.Run(ctx, cfg, load.Options{Targets: targets, Observer: p})
//
// Its methods are safe for concurrent use.
type Prom struct {
	reg                                  *prometheus.Registry
	started, completed, failed           *prometheus.CounterVec
	inFlight                             *prometheus.GaugeVec
	ttfp, ttr, discovery, lag            *prometheus.HistogramVec
	requests, sent, received, segs, part *prometheus.CounterVec

	modes sync.Map // mode name -> struct{}: series declared

	mu   sync.Mutex
	last map[string]ModeProgress // per mode, the totals already added
}

// NewProm returns a Prom with every metric registered.
func NewProm() *Prom {
	mode := []string{"mode"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, mode)
	}
	hist := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: promBuckets,
			NativeHistogramBucketFactor: promNativeFactor, NativeHistogramMaxBucketNumber: 200, NativeHistogramZeroThreshold: 1e-6}, mode)
	}
	p := &Prom{
		reg:       prometheus.NewRegistry(),
		started:   counter(PromTasksStarted, "Tasks started."),
		completed: counter(PromTasksCompleted, "Tasks that ended with their complete result."),
		failed:    counter(PromTasksFailed, "Tasks that ended without their result (error, timeout, interruption)."),
		inFlight:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: PromInFlight, Help: "Tasks running now."}, mode),
		ttfp:      hist(PromTTFP, "Intended start to first content received (segment, partial, or the result)."),
		ttr:       hist(PromTTR, "Intended start to the complete result in hand."),
		discovery: hist(PromDiscovery, "Server completion time to the complete result in hand."),
		lag:       hist(PromLag, "Intended start to actual start of a task."),
		requests:  counter(PromRequests, "HTTP requests of the mode's sessions."),
		sent:      counter(PromBytesSent, "Bytes sent on the wire by the mode's sessions."),
		received:  counter(PromBytesReceived, "Bytes received on the wire by the mode's sessions."),
		segs:      counter(PromSegments, "SEP-1905 segments received."),
		part:      counter(PromPartials, "SEP-2679 partial notifications received."),
		last:      map[string]ModeProgress{},
	}
	p.reg.MustRegister(p.started, p.completed, p.failed, p.inFlight, p.ttfp, p.ttr, p.discovery, p.lag,
		p.requests, p.sent, p.received, p.segs, p.part)
	return p
}

// Registry is the registry the metrics live in.
func (p *Prom) Registry() *prometheus.Registry { return p.reg }

// Handler serves the metrics in the Prometheus exposition formats.
func (p *Prom) Handler() http.Handler {
	return promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{Registry: p.reg})
}

// declare creates every series of mode at 0 the first time the mode is
// seen, so that each exists (and rate() sees its start) before it moves.
func (p *Prom) declare(mode string) {
	if _, seen := p.modes.LoadOrStore(mode, struct{}{}); seen {
		return
	}
	for _, c := range []*prometheus.CounterVec{p.started, p.completed, p.failed, p.requests, p.sent, p.received, p.segs, p.part} {
		c.WithLabelValues(mode)
	}
	p.inFlight.WithLabelValues(mode)
	for _, h := range []*prometheus.HistogramVec{p.ttfp, p.ttr, p.discovery, p.lag} {
		h.WithLabelValues(mode)
	}
}

// Started implements Observer.
func (p *Prom) Started(mode string, lag time.Duration) {
	p.declare(mode)
	p.started.WithLabelValues(mode).Inc()
	p.inFlight.WithLabelValues(mode).Inc()
	p.lag.WithLabelValues(mode).Observe(max(lag, 0).Seconds())
}

// Ended implements Observer.
func (p *Prom) Ended(mode string, t TaskEnd) {
	p.inFlight.WithLabelValues(mode).Dec()
	if !t.OK {
		p.failed.WithLabelValues(mode).Inc()
		return
	}
	p.completed.WithLabelValues(mode).Inc()
	p.ttfp.WithLabelValues(mode).Observe(t.TTFP.Seconds())
	p.ttr.WithLabelValues(mode).Observe(t.TTR.Seconds())
	if t.HasDiscovery {
		p.discovery.WithLabelValues(mode).Observe(max(t.Discovery, 0).Seconds())
	}
}

// Interval implements Observer: it adds what the wire counters, segments
// and partials grew by since the last interval.
func (p *Prom) Interval(pr Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range pr.Modes {
		p.declare(m.Name)
		l := p.last[m.Name]
		add := func(c *prometheus.CounterVec, now, before int64) {
			if now > before {
				c.WithLabelValues(m.Name).Add(float64(now - before))
			}
		}
		add(p.requests, m.Wire.HTTPRequests, l.Wire.HTTPRequests)
		add(p.sent, m.Wire.BytesSent, l.Wire.BytesSent)
		add(p.received, m.Wire.BytesReceived, l.Wire.BytesReceived)
		add(p.segs, m.Segments, l.Segments)
		add(p.part, m.Partials, l.Partials)
		p.last[m.Name] = m
	}
}
