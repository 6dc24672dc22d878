package load

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// Result is what a run measured. It is JSON-serialisable and holds
// everything later reports need: the configuration and seed, the machine,
// per-mode statistics with their HDR histograms, and per-interval
// figures.
type Result struct {
	// Schema names this layout, ResultSchema; a change that breaks
	// readers bumps it. Results written before it was added have none.
	Schema string `json:"schema"`
	// Version is tasksim's.
	Version string  `json:"version"`
	Config  Config  `json:"config"`
	Machine Machine `json:"machine"`
	// Targets are the servers loaded: one for every mode, or one per
	// mode, in Config.Modes order.
	Targets []TargetInfo `json:"targets"`
	// Start is when the schedule started; ScheduleMs how long tasks kept
	// starting; ElapsedMs until the last task ended.
	Start      time.Time `json:"start"`
	ScheduleMs float64   `json:"scheduleMs"`
	ElapsedMs  float64   `json:"elapsedMs"`
	// Stopped says how the run ended: StopCompleted, StopOverloaded or
	// StopInterrupted.
	Stopped string `json:"stopped"`
	// Overload is set when the schedule could not be kept.
	Overload *Overload    `json:"overload,omitempty"`
	Modes    []ModeResult `json:"modes"`
	// ClientCPUMs is the load generator's own CPU time during the run
	// (0 when it cannot be read).
	ClientCPUMs float64 `json:"clientCpuMs"`
	// ClientPeakRSS is the load generator's peak resident memory in bytes
	// (0 when it cannot be read): it grows with the tasks in flight, not
	// with the tasks run.
	ClientPeakRSS int64 `json:"clientPeakRss"`
	// Warnings are things the reader should know about the figures.
	Warnings []string `json:"warnings,omitempty"`
	// Intervals are per-interval figures (Config.Interval apart).
	Intervals []Interval `json:"intervals"`
}

// How a run ended.
const (
	StopCompleted   = "completed"
	StopOverloaded  = "overloaded"
	StopInterrupted = "interrupted"
)

// ResultSchema is Result.Schema (docs/load.md, "Outputs").
const ResultSchema = "tasksim.load-result/v1"

// Overload describes a schedule the load generator could not keep.
type Overload struct {
	// LagMs is the start lag that broke the bound MaxLagMs, AtMs when
	// (from the start).
	LagMs    float64 `json:"lagMs"`
	MaxLagMs float64 `json:"maxLagMs"`
	AtMs     float64 `json:"atMs"`
	// Reason says what held tasks back.
	Reason string `json:"reason"`
}

// TargetInfo describes a server loaded.
type TargetInfo struct {
	URL   string `json:"url"`
	Label string `json:"label"`
	// Modes are the names of the modes it served.
	Modes []string `json:"modes"`
	// CPUMs is its process's CPU time during the run; CPUMeasured says
	// whether it could be read.
	CPUMs       float64 `json:"cpuMs"`
	CPUMeasured bool    `json:"cpuMeasured"`
}

// ModeResult is one mode's figures.
type ModeResult struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Revision is the protocol revision the mode's tasks spoke.
	Revision mcp.Revision `json:"revision,omitempty"`
	// PollIntervalMs is the poll mode's interval (0: the server's).
	PollIntervalMs float64 `json:"pollIntervalMs,omitempty"`
	// Started tasks; of those Completed with a complete, non-error
	// result, and Failed otherwise; Errors counts failures by kind.
	Started   int64            `json:"started"`
	Completed int64            `json:"completed"`
	Failed    int64            `json:"failed"`
	Errors    map[string]int64 `json:"errors,omitempty"`
	// ErrorSamples is the first failure's message of each error kind,
	// so a run's errors can be told apart (a transport error may be a
	// refused dial or a file descriptor limit).
	ErrorSamples map[string]string `json:"errorSamples,omitempty"`
	// Answers counts how the server answered (client.Answer*: task,
	// streaming, immediate, plain): a fallback shows here.
	Answers map[string]int64 `json:"answers,omitempty"`
	// PeakInFlight is the most tasks of the mode running at once.
	PeakInFlight int64 `json:"peakInFlight"`
	// Latencies (ms) and requests per task, over completed tasks; Lag
	// over all started tasks.
	TTFP      Stats `json:"ttfp"`
	TTR       Stats `json:"ttr"`
	Discovery Stats `json:"discovery"`
	Lag       Stats `json:"lag"`
	Requests  Stats `json:"requests"`
	// GetRoundTrip is one tasks/get's round trip (request written, answer
	// read) over the mode's polls: the yardstick of a push's discovery
	// delay (2026-07-28; nil without polls).
	GetRoundTrip *Stats `json:"getRoundTrip,omitempty"`
	// ServerPollIntervalMs is the largest pollIntervalMs the server gave
	// the mode's tasks (2026-07-28), which poll:server honours and
	// poll:P overrides.
	ServerPollIntervalMs float64 `json:"serverPollIntervalMs,omitempty"`
	// ListenFallbacks counts listen tasks that polled tasks/get instead:
	// the listen failed, was refused or ended before the task's end.
	ListenFallbacks int64 `json:"listenFallbacks,omitempty"`
	// Wire is the traffic of the mode's sessions during the run.
	Wire Wire `json:"wire"`
	// ServerCPU is the server's CPU per task, when measured.
	ServerCPU *ServerCPU `json:"serverCpu,omitempty"`
	// What the tasks received: distinct SEP-1905 segments and SEP-2679
	// partials, duplicates, seqNr gaps, partials lost (seq skipped),
	// resumes with lastSeqNr, streams lost.
	Segments    int64 `json:"segments"`
	Partials    int64 `json:"partials"`
	Duplicates  int64 `json:"duplicates"`
	Gaps        int64 `json:"gaps"`
	DataLoss    int64 `json:"dataLoss"`
	Resumes     int64 `json:"resumes"`
	StreamsLost int64 `json:"streamsLost"`
	// PartialsPerSec and SegmentsPerSec are the mean received rates over
	// the run; Peak* the highest of one interval.
	PartialsPerSec     float64 `json:"partialsPerSec"`
	SegmentsPerSec     float64 `json:"segmentsPerSec"`
	PeakPartialsPerSec float64 `json:"peakPartialsPerSec"`
	PeakSegmentsPerSec float64 `json:"peakSegmentsPerSec"`
	// NegativeDiscovery counts results that arrived before the server's
	// completion time by the two clocks (recorded as 0): clock skew.
	NegativeDiscovery int64 `json:"negativeDiscovery,omitempty"`
	// DiscoveryFromLastUpdated counts discovery delays measured from the
	// terminal task's lastUpdatedAt (a server that does not put its
	// completion time in the result's _meta, or sse's final response);
	// the others come from the result's dev.tasksim/completed-at.
	DiscoveryFromLastUpdated int64 `json:"discoveryFromLastUpdated,omitempty"`
	// Clipped counts values above the histograms' range (recorded as
	// the largest).
	Clipped int64 `json:"clipped,omitempty"`
}

// Wire is what a mode's sessions sent and received, from the transport's
// counters: every HTTP request (POST, GET, DELETE) and body byte,
// including the standalone stream's notifications, whatever call they
// belong to. Per task means divide by the tasks that ended.
type Wire struct {
	HTTPRequests    int64   `json:"httpRequests"`
	BytesSent       int64   `json:"bytesSent"`
	BytesReceived   int64   `json:"bytesReceived"`
	RequestsPerTask float64 `json:"requestsPerTask"`
	BytesPerTask    float64 `json:"bytesPerTask"`
}

// ServerCPU is server process CPU time per task. Shared says the process
// served other modes too: then PerTaskMs is its CPU over the tasks of
// every mode it served, the same figure for each.
type ServerCPU struct {
	PerTaskMs float64 `json:"perTaskMs"`
	TotalMs   float64 `json:"totalMs"`
	Shared    bool    `json:"shared"`
}

// Interval holds one interval's figures per mode (Config.Modes order).
type Interval struct {
	// StartMs and EndMs are offsets from Result.Start.
	StartMs float64        `json:"startMs"`
	EndMs   float64        `json:"endMs"`
	Modes   []IntervalMode `json:"modes"`
}

// IntervalMode is one mode's figures in one interval: tasks started and
// ended in it, tasks in flight at its end, segments and partials received
// in it.
type IntervalMode struct {
	Started   int64   `json:"started"`
	Completed int64   `json:"completed"`
	Failed    int64   `json:"failed"`
	InFlight  int64   `json:"inFlight"`
	Segments  int64   `json:"segments"`
	Partials  int64   `json:"partials"`
	TTRP50Ms  float64 `json:"ttrP50Ms"`
	TTRP99Ms  float64 `json:"ttrP99Ms"`
	LagMaxMs  float64 `json:"lagMaxMs"`
}

// Machine describes where the load generator ran.
type Machine struct {
	Hostname   string `json:"hostname"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpuModel,omitempty"`
	GoVersion  string `json:"goVersion"`
}

func thisMachine() Machine {
	host, _ := os.Hostname()
	m := Machine{Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// summary is the machine in a few words.
func (m Machine) summary() string {
	s := fmt.Sprintf("%d CPUs", m.CPUs)
	if m.CPUModel != "" {
		s += " (" + m.CPUModel + ")"
	}
	return s + ", " + m.OS + "/" + m.Arch
}

// Mode returns the figures of the mode named name, or nil.
func (r *Result) Mode(name string) *ModeResult {
	for i := range r.Modes {
		if r.Modes[i].Name == name {
			return &r.Modes[i]
		}
	}
	return nil
}

// Reporter writes a report of a run and returns any write error.
type Reporter func(io.Writer) error

// JSONReporter writes r as indented JSON.
func JSONReporter(r *Result) Reporter {
	return func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
}

func ms(d time.Duration) float64 { return round3(float64(d) / 1e6) }
