package load

import (
	"fmt"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// collect flushes the shards every interval until stop closes, then once
// more.
func (r *runner) collect(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(time.Duration(r.cfg.Interval))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.flush(time.Now(), true)
		case <-stop:
			r.flush(time.Now(), false)
			return
		}
	}
}

// flush merges the shards' interval data, writes the interval log, keeps
// the interval's figures and, if report, reports progress (not for the
// last, short interval, whose rates would mislead).
func (r *runner) flush(now time.Time, report bool) {
	ic := make([]counts, len(r.modes))
	for i, sh := range r.shards {
		hist, c := sh.swap(r.spares[i])
		for m := range r.modes {
			r.interval[m].merge(hist[m])
			hist[m].reset()
			ic[m].add(&c[m])
		}
		r.spares[i] = hist
	}
	secs := now.Sub(r.lastFlush).Seconds()
	iv := Interval{StartMs: ms(r.lastFlush.Sub(r.start)), EndMs: ms(now.Sub(r.start))}
	p := Progress{Elapsed: now.Sub(r.start), Planned: time.Duration(r.cfg.Duration), PlannedTasks: r.plannedTasks(), Draining: r.draining.Load()}
	for i, m := range r.modes {
		h := r.interval[i]
		for j, metric := range histMetrics {
			r.hlog.write(h[j], m.spec.Name+"."+string(metric), r.lastFlush, now)
		}
		started, segs, parts := m.started.Load(), m.segments.Load(), m.partials.Load()
		im := IntervalMode{
			Started: started - m.lastStarted, Completed: ic[i].completed, Failed: ic[i].failed, InFlight: m.inFlight.Load(),
			Segments: segs - m.lastSegments, Partials: parts - m.lastPartials,
			TTRP50Ms: ms(time.Duration(h[iTTR].ValueAtPercentile(50))), TTRP99Ms: ms(time.Duration(h[iTTR].ValueAtPercentile(99))),
			LagMaxMs: ms(time.Duration(h[iLag].Max())),
		}
		if h[iLag].TotalCount() == 0 {
			im.LagMaxMs = 0
		}
		m.lastStarted, m.lastSegments, m.lastPartials = started, segs, parts
		iv.Modes = append(iv.Modes, im)
		r.total[i].merge(h)
		r.totalCount[i].add(&ic[i])

		p.Started += started
		p.Completed += r.totalCount[i].completed
		p.Failed += r.totalCount[i].failed
		p.InFlight += im.InFlight
		if secs > 0 {
			p.TasksPerSec += float64(im.Completed+im.Failed) / secs
			p.PartialsPerSec += float64(im.Partials) / secs
			p.SegmentsPerSec += float64(im.Segments) / secs
		}
		if lag := time.Duration(im.LagMaxMs * 1e6); lag > r.lagMax {
			r.lagMax = lag
		}
		p.LagMax = r.lagMax
		mp := ModeProgress{Name: m.spec.Name, Completed: r.totalCount[i].completed, Failed: r.totalCount[i].failed,
			TTRP50: time.Duration(h[iTTR].ValueAtPercentile(50)), TTRP99: time.Duration(h[iTTR].ValueAtPercentile(99)),
			DiscoveryP50: time.Duration(h[iDiscovery].ValueAtPercentile(50)), DiscoveryP99: time.Duration(h[iDiscovery].ValueAtPercentile(99)),
			LagMax: time.Duration(im.LagMaxMs * 1e6), Started: started, InFlight: im.InFlight, Segments: segs, Partials: parts, Wire: m.wireSoFar()}
		if secs > 0 {
			mp.TasksPerSec = float64(im.Completed+im.Failed) / secs
		}
		p.Modes = append(p.Modes, mp)
		h.reset()
	}
	r.intervals = append(r.intervals, iv)
	r.lastFlush = now
	if r.opts.Observer != nil {
		r.opts.Observer.Interval(p)
	}
	if report && r.opts.Progress != nil {
		r.opts.Progress(p)
	}
}

// plannedTasks is the number of tasks the schedule starts, -1 when it
// depends on the server (closed model by duration).
func (r *runner) plannedTasks() int64 {
	if r.cfg.Concurrency > 0 {
		if r.cfg.Duration == 0 {
			return r.cfg.Tasks * int64(len(r.modes))
		}
		return -1
	}
	return r.cfg.pacer().Total()
}

// result builds the Result from the collector's totals.
func (r *runner) result(scheduleEnd, end time.Time, interrupted bool) *Result {
	res := &Result{
		Schema: ResultSchema, Version: r.opts.Version, Config: r.cfg, Machine: thisMachine(), Start: r.start,
		ScheduleMs: ms(scheduleEnd.Sub(r.start)), ElapsedMs: ms(end.Sub(r.start)),
		Stopped: StopCompleted, Overload: r.overload.Load(), Intervals: r.intervals, Warnings: r.warnings,
	}
	switch {
	case res.Overload != nil:
		res.Stopped = StopOverloaded
	case interrupted:
		res.Stopped = StopInterrupted
	}
	res.Targets = r.targetInfos()
	elapsed := end.Sub(r.start).Seconds()
	var lagAll = newHistogram(iLag)
	for i := range r.modes {
		lagAll.Merge(r.total[i][iLag])
		res.Modes = append(res.Modes, r.modeResult(i, elapsed))
		res.Warnings = append(res.Warnings, r.modeWarnings(i)...)
	}
	for _, t := range r.targets {
		if t.CPU != nil && t.cpuErr != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("server CPU of %s not measured: %v", t.URL, t.cpuErr))
		}
	}
	if lagAll.TotalCount() > 0 {
		p99 := time.Duration(lagAll.ValueAtPercentile(99))
		if p99 > LagWarning {
			res.Warnings = append(res.Warnings, fmt.Sprintf("start lag p99 %s, max %s: the generator started tasks late (latencies count from the intended start, so they include this lag)",
				FormatMs(ms(p99)), FormatMs(ms(time.Duration(lagAll.Max())))))
		}
	}
	return res
}

// targetInfos describes the targets: their URLs, modes and CPU.
func (r *runner) targetInfos() []TargetInfo {
	var infos []TargetInfo
	for _, t := range r.targets {
		ti := TargetInfo{URL: t.URL, Label: t.Label, CPUMeasured: t.CPU != nil && t.cpuErr == nil}
		if ti.CPUMeasured {
			ti.CPUMs = ms(t.cpu)
		}
		for _, i := range t.modes {
			ti.Modes = append(ti.Modes, r.modes[i].spec.Name)
		}
		infos = append(infos, ti)
	}
	return infos
}

// modeResult is mode i's figures over the run, elapsed seconds long.
func (r *runner) modeResult(i int, elapsed float64) ModeResult {
	m, h, c := r.modes[i], r.total[i], &r.totalCount[i]
	mr := ModeResult{
		Name: m.spec.Name, Kind: m.spec.Kind, Revision: m.revision, PollIntervalMs: ms(m.spec.PollInterval),
		Started: m.started.Load(), Completed: c.completed, Failed: c.failed, Errors: c.errors, ErrorSamples: c.errorSamples, Answers: c.answers,
		PeakInFlight: m.peak.Load(),
		TTFP:         statsOf(h[iTTFP], c.sum[iTTFP], UnitMs, 1e6),
		TTR:          statsOf(h[iTTR], c.sum[iTTR], UnitMs, 1e6),
		Discovery:    statsOf(h[iDiscovery], c.sum[iDiscovery], UnitMs, 1e6),
		Lag:          statsOf(h[iLag], c.sum[iLag], UnitMs, 1e6),
		Requests:     statsOf(h[iRequests], c.sum[iRequests], UnitRequests, 1),
		Wire:         m.wire,
		Segments:     c.segments, Partials: c.partials, Duplicates: c.duplicates, Gaps: c.gaps, DataLoss: c.dataLoss,
		Resumes: c.resumes, StreamsLost: c.streamsLost, NegativeDiscovery: c.negativeDiscovery, Clipped: c.clipped,
		DiscoveryFromLastUpdated: c.discoveryUpdated,
		ServerPollIntervalMs:     ms(c.serverPoll), ListenFallbacks: c.listenFallbacks,
	}
	if c.getRTT != nil {
		st := statsOf(c.getRTT, c.getRTTSum, UnitMs, 1e6)
		st.HDR = ""
		mr.GetRoundTrip = &st
	}
	if ended := c.completed + c.failed; ended > 0 {
		mr.Wire.RequestsPerTask = round3(float64(m.wire.HTTPRequests) / float64(ended))
		mr.Wire.BytesPerTask = round3(float64(m.wire.BytesSent+m.wire.BytesReceived) / float64(ended))
	}
	if elapsed > 0 {
		mr.PartialsPerSec = round3(float64(c.partials) / elapsed)
		mr.SegmentsPerSec = round3(float64(c.segments) / elapsed)
	}
	for _, iv := range r.intervals {
		if d := (iv.EndMs - iv.StartMs) / 1000; d >= 0.5 { // a short last interval would exaggerate
			mr.PeakPartialsPerSec = max(mr.PeakPartialsPerSec, round3(float64(iv.Modes[i].Partials)/d))
			mr.PeakSegmentsPerSec = max(mr.PeakSegmentsPerSec, round3(float64(iv.Modes[i].Segments)/d))
		}
	}
	if t := m.target; t.CPU != nil && t.cpuErr == nil {
		mr.ServerCPU = r.serverCPU(t)
	}
	return mr
}

// serverCPU is the CPU target t used, measured, over the tasks of its
// modes.
func (r *runner) serverCPU(t *targetRun) *ServerCPU {
	var ended int64
	for _, j := range t.modes {
		ended += r.totalCount[j].completed + r.totalCount[j].failed
	}
	cpu := &ServerCPU{TotalMs: ms(t.cpu), Shared: len(t.modes) > 1}
	if ended > 0 {
		cpu.PerTaskMs = round3(float64(t.cpu) / 1e6 / float64(ended))
	}
	return cpu
}

// modeWarnings are the warnings mode i's totals call for.
func (r *runner) modeWarnings(i int) []string {
	name, c := r.modes[i].spec.Name, &r.totalCount[i]
	var w []string
	if c.clipped > 0 {
		w = append(w, fmt.Sprintf("%s: %d values above the histograms' range (1 h, 10^7 requests) were recorded as the largest", name, c.clipped))
	}
	if c.negativeDiscovery > 0 {
		w = append(w, fmt.Sprintf("%s: %d results arrived before the server's completion time: the clocks differ (discovery delay needs the server's clock to agree with this one)", name, c.negativeDiscovery))
	}
	return w
}

// wireSoFar is the mode's sessions' wire counters since the schedule
// started.
func (m *modeRun) wireSoFar() mcp.WireStats {
	var w mcp.WireStats
	for i, s := range m.conns {
		if i >= len(m.wireBefore) {
			break
		}
		w = w.Add(transportStats(s).Sub(m.wireBefore[i]))
	}
	return w
}
