package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Shape is what each task asks the server's slow_text tool for: Chunks
// text blocks of ChunkSize bytes, one every Interval, or spread evenly
// over Duration when it is set. Each parameter is a Dist, drawn per task
// from the run's seed and the task's number within its mode, so the k-th
// task of every mode has the same shape and a run can be repeated.
type Shape struct {
	Chunks    IntDist      `json:"chunks"`
	ChunkSize IntDist      `json:"chunkSize"`
	Interval  DurationDist `json:"interval"`
	// Duration, when set, replaces Interval: the task's total duration.
	Duration DurationDist `json:"duration,omitzero"`
}

// DefaultShape is 10 chunks of 32 bytes spread over a duration drawn
// uniformly from 0.5 s to 1.5 s: one second on average.
//
// The duration is drawn, not fixed, so that task ends fall at every phase
// of a poll interval. With fixed 1 s tasks started on a fixed schedule,
// every poll:200ms (or poll:1s) task ends just before one of its polls, and
// polling's discovery delay came out near 0 (5 ms measured) instead of the
// half interval that theory and real traffic give. A range one second wide
// is a whole number of periods of any interval dividing 1 s, so the phase
// is uniform and poll:P measures P/2.
func DefaultShape() Shape {
	return Shape{Chunks: FixedInt(10), ChunkSize: FixedInt(32), Duration: UniformDuration(500*time.Millisecond, 1500*time.Millisecond)}
}

// taskShape is one task's draw.
type taskShape struct {
	chunks, chunkSize int
	interval          time.Duration // pause before each chunk
	duration          time.Duration // total
	useDuration       bool
}

// draw returns task k's shape: the same for every mode of a run.
func (s Shape) draw(seed uint64, k int64) taskShape {
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	t := taskShape{chunks: int(s.Chunks.sample(rng)), chunkSize: int(s.ChunkSize.sample(rng))}
	t.chunks = max(t.chunks, 0)
	t.chunkSize = max(t.chunkSize, 1)
	if !s.Duration.IsZero() {
		t.useDuration = true
		t.duration = time.Duration(s.Duration.sample(rng))
		if t.chunks > 0 {
			t.interval = t.duration / time.Duration(t.chunks)
		}
	} else {
		t.interval = time.Duration(s.Interval.sample(rng))
		t.duration = t.interval * time.Duration(t.chunks)
	}
	return t
}

// args are slow_text's arguments for the shape.
func (t taskShape) args() []byte {
	b := fmt.Appendf(nil, `{"chunks":%d,"chunkSize":%d,"progress":false,`, t.chunks, t.chunkSize)
	if t.useDuration {
		b = fmt.Appendf(b, `"durationMs":%s}`, strconv.FormatFloat(float64(t.duration)/1e6, 'f', -1, 64))
	} else {
		b = fmt.Appendf(b, `"intervalMs":%s}`, strconv.FormatFloat(float64(t.interval)/1e6, 'f', -1, 64))
	}
	return b
}

// MeanDuration is the mean task duration the shape asks for.
func (s Shape) MeanDuration() time.Duration {
	if !s.Duration.IsZero() {
		return time.Duration(s.Duration.mean())
	}
	return time.Duration(s.Interval.mean() * s.Chunks.mean())
}

// MaxDuration bounds the task duration the shape asks for.
func (s Shape) MaxDuration() time.Duration {
	if !s.Duration.IsZero() {
		return time.Duration(s.Duration.max())
	}
	return time.Duration(s.Interval.max() * s.Chunks.max())
}

// Distribution kinds.
const (
	distFixed   = "fixed"
	distUniform = "uniform"
	distExp     = "exp"
)

// expCap caps an exponential draw at this many means, so that a task's
// duration stays bounded.
const expCap = 10

// dist is a distribution over float64: a fixed value a, uniform in
// [a, b], or exponential with mean a (capped at expCap·a).
type dist struct {
	kind string
	a, b float64
}

func (d dist) sample(rng *rand.Rand) float64 {
	switch d.kind {
	case distUniform:
		return d.a + rng.Float64()*(d.b-d.a)
	case distExp:
		return math.Min(rng.ExpFloat64()*d.a, expCap*d.a)
	}
	return d.a
}

func (d dist) mean() float64 {
	switch d.kind {
	case distUniform:
		return (d.a + d.b) / 2
	case distExp:
		return d.a * (1 - math.Exp(-expCap))
	}
	return d.a
}

func (d dist) max() float64 {
	switch d.kind {
	case distUniform:
		return d.b
	case distExp:
		return expCap * d.a
	}
	return d.a
}

// parseDist reads "V", "A..B" or "exp:MEAN" with parse reading one value.
func parseDist(s string, parse func(string) (float64, error)) (dist, error) {
	s = strings.TrimSpace(s)
	if mean, ok := strings.CutPrefix(s, "exp:"); ok {
		m, err := parse(mean)
		if err != nil {
			return dist{}, err
		}
		if m <= 0 {
			return dist{}, fmt.Errorf("%q: the mean must be positive", s)
		}
		return dist{kind: distExp, a: m}, nil
	}
	if lo, hi, ok := strings.Cut(s, ".."); ok {
		a, err := parse(lo)
		if err != nil {
			return dist{}, err
		}
		b, err := parse(hi)
		if err != nil {
			return dist{}, err
		}
		if b < a {
			return dist{}, fmt.Errorf("%q: the range is empty", s)
		}
		return dist{kind: distUniform, a: a, b: b}, nil
	}
	v, err := parse(s)
	if err != nil {
		return dist{}, err
	}
	return dist{kind: distFixed, a: v}, nil
}

func (d dist) format(f func(float64) string) string {
	switch d.kind {
	case distUniform:
		return f(d.a) + ".." + f(d.b)
	case distExp:
		return "exp:" + f(d.a)
	}
	return f(d.a)
}

// DurationDist is a distribution of durations: "100ms" (fixed),
// "50ms..150ms" (uniform) or "exp:1s" (exponential with that mean, capped
// at 10 means). It marshals as that text.
type DurationDist struct{ d dist }

// UniformDuration is the uniform distribution from a to b.
func UniformDuration(a, b time.Duration) DurationDist {
	return DurationDist{dist{kind: distUniform, a: float64(a), b: float64(b)}}
}

// FixedDuration is the distribution that is always v.
func FixedDuration(v time.Duration) DurationDist {
	return DurationDist{dist{kind: distFixed, a: float64(v)}}
}

// ParseDurationDist reads a DurationDist. Durations must not be negative.
func ParseDurationDist(s string) (DurationDist, error) {
	d, err := parseDist(s, func(v string) (float64, error) {
		x, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (e.g. 100ms, 50ms..150ms, exp:1s)", v)
		}
		if x < 0 {
			return 0, fmt.Errorf("%q: a duration must not be negative", v)
		}
		return float64(x), nil
	})
	return DurationDist{d}, err
}

// IsZero reports an unset distribution.
func (d DurationDist) IsZero() bool { return d.d.kind == "" }

func (d DurationDist) sample(rng *rand.Rand) float64 { return d.d.sample(rng) }
func (d DurationDist) mean() float64                 { return d.d.mean() }
func (d DurationDist) max() float64                  { return d.d.max() }

func (d DurationDist) String() string {
	if d.IsZero() {
		return ""
	}
	return d.d.format(func(v float64) string { return time.Duration(v).String() })
}

// MarshalText implements encoding.TextMarshaler.
func (d DurationDist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *DurationDist) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = DurationDist{}
		return nil
	}
	v, err := ParseDurationDist(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// IntDist is a distribution of whole numbers: "10" (fixed) or "5..15"
// (uniform, both ends included). It marshals as that text.
type IntDist struct{ d dist }

// FixedInt is the distribution that is always v.
func FixedInt(v int) IntDist { return IntDist{dist{kind: distFixed, a: float64(v)}} }

// ParseIntDist reads an IntDist. Numbers must not be negative.
func ParseIntDist(s string) (IntDist, error) {
	if strings.HasPrefix(strings.TrimSpace(s), "exp:") {
		return IntDist{}, fmt.Errorf("%q: whole numbers take N or A..B", s)
	}
	d, err := parseDist(s, func(v string) (float64, error) {
		x, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%q is not a whole number (e.g. 10 or 5..15)", v)
		}
		if x < 0 {
			return 0, fmt.Errorf("%q must not be negative", v)
		}
		return float64(x), nil
	})
	return IntDist{d}, err
}

// sample draws a whole number; uniform draws include both ends.
func (d IntDist) sample(rng *rand.Rand) float64 {
	if d.d.kind == distUniform {
		return d.d.a + float64(rng.IntN(int(d.d.b-d.d.a)+1))
	}
	return math.Round(d.d.sample(rng))
}
func (d IntDist) mean() float64 { return d.d.mean() }
func (d IntDist) max() float64  { return d.d.max() }

// IsZero reports an unset distribution.
func (d IntDist) IsZero() bool { return d.d.kind == "" }

func (d IntDist) String() string {
	return d.d.format(func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
}

// MarshalText implements encoding.TextMarshaler.
func (d IntDist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *IntDist) UnmarshalText(b []byte) error {
	v, err := ParseIntDist(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
