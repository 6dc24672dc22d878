package load

import (
	"fmt"
	"strings"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// Progress is a run's state, reported every interval while it runs.
type Progress struct {
	// Elapsed since the start; Planned the schedule's length (0 when the
	// run is bounded by task count); PlannedTasks the tasks the schedule
	// starts in all (-1 when unknown in advance).
	Elapsed      time.Duration
	Planned      time.Duration
	PlannedTasks int64
	// Totals so far, all modes.
	Started, Completed, Failed, InFlight int64
	// Rates over the last interval, all modes.
	TasksPerSec, PartialsPerSec, SegmentsPerSec float64
	// LagMax is the largest start lag since the start: the table's
	// worst lag once the run ends (ModeProgress.LagMax is the last
	// interval's).
	LagMax time.Duration
	// Draining: no more tasks start; the run waits for those in flight.
	Draining bool
	Modes    []ModeProgress
}

// ModeProgress is one mode's state.
type ModeProgress struct {
	Name              string
	Completed, Failed int64
	// TTRP50 is the median time to result of the last interval (0: none
	// completed).
	TTRP50 time.Duration

	// Started and InFlight are tasks so far and running now.
	Started, InFlight int64
	// TasksPerSec is the tasks that ended per second over the last
	// interval.
	TasksPerSec float64
	// TTRP99, DiscoveryP50, DiscoveryP99 and LagMax are of the last
	// interval (0: nothing recorded).
	TTRP99, DiscoveryP50, DiscoveryP99, LagMax time.Duration
	// Segments and Partials received, and the mode's sessions' wire
	// counters, since the start.
	Segments, Partials int64
	Wire               mcp.WireStats
}

// Fraction is how far the schedule is, 0 to 1, or -1 when unknown.
func (p Progress) Fraction() float64 {
	switch {
	case p.Draining:
		return 1
	case p.Planned > 0:
		return min(1, float64(p.Elapsed)/float64(p.Planned))
	case p.PlannedTasks > 0:
		return min(1, float64(p.Started)/float64(p.PlannedTasks))
	}
	return -1
}

// Line is the progress as one line of live figures.
func (p Progress) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%5.1fs", p.Elapsed.Seconds())
	if p.Draining {
		b.WriteString(" draining")
	}
	fmt.Fprintf(&b, " · %d started, %d done, %d failed, %d in flight · %.0f tasks/s", p.Started, p.Completed, p.Failed, p.InFlight, p.TasksPerSec)
	if p.PartialsPerSec > 0 {
		fmt.Fprintf(&b, ", %.0f partials/s", p.PartialsPerSec)
	}
	if p.SegmentsPerSec > 0 {
		fmt.Fprintf(&b, ", %.0f segments/s", p.SegmentsPerSec)
	}
	fmt.Fprintf(&b, " · lag max %s", FormatMs(ms(p.LagMax)))
	for _, m := range p.Modes {
		if m.TTRP50 > 0 {
			fmt.Fprintf(&b, " · %s ttr %s", m.Name, FormatMs(ms(m.TTRP50)))
		}
	}
	return b.String()
}

// Bar is the progress as a bar of width characters and the line.
func (p Progress) Bar(width int) string {
	f := p.Fraction()
	if f < 0 || width < 3 {
		return p.Line()
	}
	n := int(f * float64(width))
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + fmt.Sprintf("] %3.0f%% ", f*100) + p.Line()
}

// FormatMs prints a duration given in milliseconds with three significant
// digits: 0.412ms, 41.2ms, 1.51s.
func FormatMs(v float64) string {
	switch {
	case v >= 1000:
		return trimFloat(v/1000) + "s"
	case v >= 1:
		return trimFloat(v) + "ms"
	case v > 0:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".") + "ms"
	}
	return "0"
}

// trimFloat prints v (>= 1) with three significant digits.
func trimFloat(v float64) string {
	var s string
	switch {
	case v >= 100:
		s = fmt.Sprintf("%.0f", v)
	case v >= 10:
		s = fmt.Sprintf("%.1f", v)
	default:
		s = fmt.Sprintf("%.2f", v)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
