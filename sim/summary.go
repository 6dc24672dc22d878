package sim

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/faults"
)

// FailedRules returns the rules the run failed, checker's and
// simulator's, sorted.
func (r *Result) FailedRules() []string {
	var out []string
	for _, rr := range r.Verdict.Rules {
		if rr.Status == check.Fail {
			out = append(out, rr.Rule.ID)
		}
	}
	for _, f := range r.Liveness {
		if !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	slices.Sort(out)
	return out
}

// WarnedRules returns the SHOULD rules the run broke (WARN), sorted.
func (r *Result) WarnedRules() []string {
	var out []string
	for _, rr := range r.Verdict.Rules {
		if rr.Status == check.Warn {
			out = append(out, rr.Rule.ID)
		}
	}
	return out
}

// Failed reports whether any rule failed.
func (r *Result) Failed() bool { return len(r.FailedRules()) > 0 }

// Fails reports whether the run failed rule.
func (r *Result) Fails(rule string) bool { return slices.Contains(r.FailedRules(), rule) }

// Finding returns the first finding of rule, on one line.
func (r *Result) Finding(rule string) string {
	for _, rr := range r.Verdict.Rules {
		if rr.Rule.ID == rule && len(rr.Findings) > 0 {
			f := rr.Findings[0]
			return fmt.Sprintf("records %v: %s", f.Records, f.Message)
		}
	}
	for _, f := range r.Liveness {
		if f.Rule == rule {
			return f.Message
		}
	}
	return ""
}

// Summary adds up many runs.
type Summary struct {
	// Revision is the MCP revision the runs spoke: "" for 2025-11-25
	// (what every run spoke before runs had a revision), 2026-07-28, or
	// RevisionMixed for runs of both (a corpus of kept schedules).
	Revision string `json:"revision,omitempty"`
	Runs     int    `json:"runs"`
	Failures int    `json:"failures"`
	// Warnings counts runs that broke a SHOULD and no MUST.
	Warnings int `json:"warnings"`
	// ByRule counts failed runs per rule.
	ByRule map[string]int `json:"byRule"`
	// WarnByRule counts warned runs per rule.
	WarnByRule map[string]int `json:"warnByRule,omitempty"`
	// Fired counts fault decisions per fault name.
	Fired map[string]int64 `json:"fired"`
	// Calls counts calls; Restarts server restarts.
	Calls    int `json:"calls"`
	Restarts int `json:"restarts"`
	// TailLost counts calls whose last segments a dropped or held-back
	// response took where no client can see it (CallOutcome.TailLost):
	// not failures.
	TailLost int `json:"tailLost,omitempty"`
	// TailRecovered counts those of them that tasks/result, asked once
	// the faults stopped, answered with the whole result (the others'
	// session or server was gone).
	TailRecovered int           `json:"tailRecovered,omitempty"`
	SimTime       time.Duration `json:"simTimeNs"`
	// Wall is the wall time of the runs; in a Report it is Timing.
	Wall time.Duration `json:"-"`
}

// Add counts one run.
func (s *Summary) Add(r *Result) {
	if s.ByRule == nil {
		s.ByRule = map[string]int{}
		s.Fired = map[string]int64{}
	}
	s.addRevision(r.Schedule.Workload.Revision)
	s.Runs++
	s.Calls += len(r.Calls)
	s.Restarts += r.Restarts
	for _, c := range r.Calls {
		if c.TailLost {
			s.TailLost++
			if c.Recovered == c.Expected {
				s.TailRecovered++
			}
		}
	}
	s.SimTime += r.SimTime
	rules := r.FailedRules()
	if len(rules) > 0 {
		s.Failures++
	}
	if warned := r.WarnedRules(); len(warned) > 0 {
		if len(rules) == 0 {
			s.Warnings++
		}
		if s.WarnByRule == nil {
			s.WarnByRule = map[string]int{}
		}
		for _, id := range warned {
			s.WarnByRule[id]++
		}
	}
	for _, id := range rules {
		s.ByRule[id]++
	}
	for _, a := range r.Applied {
		s.Fired[a.Name]++
	}
}

// RevisionMixed is the Summary.Revision of runs of both revisions.
const RevisionMixed = "mixed"

// addRevision notes the revision of one more run, "" and 2025-11-25
// alike.
func (s *Summary) addRevision(r string) {
	if r == Revision20251125 {
		r = ""
	}
	if s.Runs == 0 {
		s.Revision = r
	} else if s.Revision != r {
		s.Revision = RevisionMixed
	}
}

// faultNames returns the names of the faults the summary's runs could
// apply: of the revision's catalog (revisionKinds), every one for
// 2025-11-25 or a mix.
func (s *Summary) faultNames() []string {
	r := s.Revision
	if r == RevisionMixed {
		r = ""
	}
	return revisionFaultNames(faults.Builtin(), TransportHTTP, r)
}

// RunsPerMinute is the rate of runs in wall time.
func (s *Summary) RunsPerMinute() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.Runs) / s.Wall.Minutes()
}

// WriteText writes the summary for people: runs, rate, failures by rule,
// and how often each fault of the catalog fired.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	if s.Revision != "" {
		fmt.Fprintf(&b, "revision %s\n", s.Revision)
	}
	fmt.Fprintf(&b, "%d runs, %d calls, in %v (%.0f runs/min), %v simulated; %d failed, %d warned\n",
		s.Runs, s.Calls, s.Wall.Round(time.Millisecond), s.RunsPerMinute(), s.SimTime.Round(time.Second), s.Failures, s.Warnings)
	if len(s.ByRule) > 0 {
		b.WriteString("failures by rule:")
		for _, id := range sortedKeys(s.ByRule) {
			fmt.Fprintf(&b, " %s %d", id, s.ByRule[id])
		}
		b.WriteString("\n")
	}
	if len(s.WarnByRule) > 0 {
		b.WriteString("warnings by rule (SHOULD; failures under --strict):")
		for _, id := range sortedKeys(s.WarnByRule) {
			fmt.Fprintf(&b, " %s %d", id, s.WarnByRule[id])
		}
		b.WriteString("\n")
	}
	if s.TailLost > 0 {
		fmt.Fprintf(&b, "not failures: %d calls lost their last segments to a dropped or held-back response, which SEP-1905 gives no client a way to see; tasks/result returned %d of them whole (the others' session or server was gone)\n", s.TailLost, s.TailRecovered)
	}
	b.WriteString("faults applied:")
	for _, name := range s.faultNames() {
		fmt.Fprintf(&b, " %s %d", name, s.Fired[name])
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
