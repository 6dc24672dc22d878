package load

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// Defaults of Config.
const (
	DefaultSessions    = 4
	DefaultTimeout     = time.Minute
	DefaultMaxLag      = time.Second
	DefaultMaxInFlight = 20_000
	DefaultInterval    = time.Second
	// DefaultTTLMargin is added to a task's duration (and two poll
	// intervals) to make the ttl it asks for: long enough to fetch the
	// result, short enough that finished tasks leave the server's memory.
	DefaultTTLMargin = 30 * time.Second
	// defaultDuration is the run length when neither Duration nor Tasks
	// is set.
	defaultDuration = 10 * time.Second
)

// Config describes a run. Rates, concurrency and task counts are per mode:
// every mode gets the same workload, interleaved on the server(s) at the
// same time. Zero fields mean the documented defaults.
type Config struct {
	// Modes are the delivery modes compared; at least one.
	Modes []ModeSpec `json:"modes"`
	// Revision is the protocol revision the tasks speak:
	// mcp.Revision20251125 (the default, sessions opened by initialize)
	// or mcp.Revision20260728 (stateless requests, the tasks extension;
	// modes poll and listen).
	Revision mcp.Revision `json:"revision,omitempty"`
	// Rate is task arrivals per second for each mode (the open model,
	// the default: tasks start on schedule whatever the server does).
	Rate float64 `json:"rate,omitempty"`
	// Concurrency, when positive, replaces Rate: that many clients per
	// mode, each starting its next task when the last ended (the closed
	// model).
	Concurrency int `json:"concurrency,omitempty"`
	// Duration is how long tasks keep starting; Tasks how many start per
	// mode. With both, whichever comes first; with neither, 10 s.
	Duration Duration `json:"duration,omitempty"`
	Tasks    int64    `json:"tasks,omitempty"`
	// RampUp grows the rate (or the number of clients) linearly from 0
	// over this long.
	RampUp Duration `json:"rampUp,omitempty"`
	// Shape is each task's shape.
	Shape Shape `json:"shape"`
	// Seed draws task shapes; the same seed gives the same tasks.
	Seed uint64 `json:"seed"`
	// Tool, when set, is the tool every task calls instead of slow_text,
	// with Args or ArgSets as its arguments ({} without either). Shape
	// still draws each task's duration and size, which Args can use.
	Tool string `json:"tool,omitempty"`
	// Args is a JSON object in which the placeholders {{task}}, {{draw}},
	// {{durationMs}}, {{chunks}} and {{chunkSize}} become each task's
	// number, a seeded draw in [0, 1), and its drawn shape.
	Args string `json:"args,omitempty"`
	// ArgSets are JSON objects: task k of each mode gets set k mod n.
	ArgSets []json.RawMessage `json:"argSets,omitempty"`
	// Sessions is the number of MCP sessions per mode; tasks share them
	// round-robin. Default DefaultSessions.
	Sessions int `json:"sessions"`
	// Timeout bounds each task from its actual start; default
	// DefaultTimeout.
	Timeout Duration `json:"timeout"`
	// MaxLag bounds the start lag (intended vs actual start) of the open
	// model: a task later than this stops the schedule with
	// ErrOverloaded. Default DefaultMaxLag.
	MaxLag Duration `json:"maxLag"`
	// MaxInFlight bounds the tasks running at once (all modes); a
	// schedule that needs more waits, and its start lag grows until
	// MaxLag stops it. Default DefaultMaxInFlight.
	MaxInFlight int `json:"maxInFlight"`
	// Interval is the period of interval histograms (hlog) and progress
	// reports; default DefaultInterval.
	Interval Duration `json:"interval"`
	// TTLMargin is added to each task's duration and two poll intervals
	// to make the ttl it asks for; default DefaultTTLMargin.
	TTLMargin Duration `json:"ttlMargin"`
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Shape.Chunks.IsZero() && c.Shape.ChunkSize.IsZero() && c.Shape.Interval.IsZero() && c.Shape.Duration.IsZero() {
		c.Shape = DefaultShape()
	}
	d := DefaultShape()
	if c.Shape.Chunks.IsZero() {
		c.Shape.Chunks = d.Chunks
	}
	if c.Shape.ChunkSize.IsZero() {
		c.Shape.ChunkSize = d.ChunkSize
	}
	if c.Shape.Interval.IsZero() && c.Shape.Duration.IsZero() {
		c.Shape.Duration = d.Duration
	}
	if c.Duration == 0 && c.Tasks == 0 {
		c.Duration = Duration(defaultDuration)
	}
	c.Revision = cmp.Or(c.Revision, mcp.Revision20251125)
	c.Sessions = cmp.Or(c.Sessions, DefaultSessions)
	c.Timeout = cmp.Or(c.Timeout, Duration(DefaultTimeout))
	c.MaxLag = cmp.Or(c.MaxLag, Duration(DefaultMaxLag))
	c.MaxInFlight = cmp.Or(c.MaxInFlight, DefaultMaxInFlight)
	c.Interval = cmp.Or(c.Interval, Duration(DefaultInterval))
	c.TTLMargin = cmp.Or(c.TTLMargin, Duration(DefaultTTLMargin))
	return c
}

// Validate reports the first thing wrong with c (after WithDefaults).
func (c Config) Validate() error {
	if err := c.validateSchedule(); err != nil {
		return err
	}
	if err := c.validateLimits(); err != nil {
		return err
	}
	if err := c.validateTool(); err != nil {
		return err
	}
	if c.Revision != mcp.Revision20251125 && c.Revision != mcp.Revision20260728 {
		return fmt.Errorf("revision %q: want %s or %s", c.Revision, mcp.Revision20251125, mcp.Revision20260728)
	}
	seen := map[string]bool{}
	for _, m := range c.Modes {
		if seen[m.Name] {
			return fmt.Errorf("mode %s given twice", m.Name)
		}
		seen[m.Name] = true
		if !m.revisionOK(c.Revision) {
			return fmt.Errorf("mode %s does not exist in %s (%s; MODE@REVISION names another revision's mode)", m.Name, c.Revision, modesByRevision)
		}
	}
	return nil
}

// validateSchedule checks the modes and the schedule: the model, its rate
// or concurrency, and its length.
func (c Config) validateSchedule() error {
	switch {
	case len(c.Modes) == 0:
		return errors.New("no mode given")
	case c.Concurrency < 0:
		return errors.New("concurrency must not be negative")
	case c.Concurrency == 0 && c.Rate <= 0:
		return errors.New("give a positive rate (tasks/s per mode) or a concurrency")
	case c.Concurrency > 0 && c.Rate > 0:
		return errors.New("give a rate (open model) or a concurrency (closed model), not both")
	case c.Duration < 0 || c.Tasks < 0 || c.RampUp < 0:
		return errors.New("duration, tasks and ramp-up must not be negative")
	}
	return nil
}

// validateLimits checks the sessions, times and bounds of the run, and
// that the task shape and concurrency fit them.
func (c Config) validateLimits() error {
	switch {
	case c.Sessions < 1:
		return errors.New("sessions must be at least 1")
	case c.Timeout <= 0 || c.MaxLag <= 0 || c.Interval <= 0 || c.TTLMargin <= 0:
		return errors.New("timeout, max lag, interval and ttl margin must be positive")
	case c.MaxInFlight < 1:
		return errors.New("max in-flight must be at least 1")
	case !c.Shape.Duration.IsZero() && c.Shape.Chunks.d.a < 1:
		// slow_text spreads the duration over the chunks: with none the
		// task would end at once, whatever duration was asked.
		return errors.New("a task duration is spread over the chunks: give at least 1 chunk")
	case c.Concurrency*len(c.Modes) > c.MaxInFlight:
		return fmt.Errorf("concurrency %d × %d modes is above max in-flight %d", c.Concurrency, len(c.Modes), c.MaxInFlight)
	}
	return nil
}

// pacer is the open model's schedule over all modes: arrival n goes to
// mode n mod len(Modes), so the total rate is Rate × modes.
func (c Config) pacer() Pacer {
	m := int64(len(c.Modes))
	return Pacer{Rate: c.Rate * float64(m), RampUp: time.Duration(c.RampUp), Duration: time.Duration(c.Duration), Count: c.Tasks * m}
}

// Duration is a time.Duration that marshals as text such as "1.5s".
type Duration time.Duration

// String returns the duration as time.Duration prints it.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
