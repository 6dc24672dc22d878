package sim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/check"
)

// ReportSchema names the format of a Report.
const ReportSchema = "tasksim.sim/v1"

// Report is the result of tasksim sim --json: what ran, what failed, how
// often each fault fired. Everything but Timing is a function of the
// seeds and the flags (docs/sim.md, "Determinism"), so partitions of a
// seed range merge (MergeReports) into the report one run of the whole
// range writes, Timing aside.
type Report struct {
	Schema string `json:"schema"`
	// Seeds are the seeds run, as sorted ranges.
	Seeds []SeedRange `json:"seeds"`
	// Partition is "I/N" for one partition of a range, "" otherwise.
	Partition string  `json:"partition,omitempty"`
	Summary   Summary `json:"summary"`
	// Failures are the failing runs, by seed: the first ones, when there
	// were more than tasksim sim keeps (FailuresOmitted counts the others;
	// Summary counts them all).
	Failures        []Failure `json:"failures"`
	FailuresOmitted int       `json:"failuresOmitted,omitempty"`
	// Interrupted says the run was stopped (SIGINT, SIGTERM) before its
	// last seed: Seeds are the seeds that ran to their end.
	Interrupted bool   `json:"interrupted,omitempty"`
	Timing      Timing `json:"timing"`
	// Verdict is the verdict of the one run sim --trace kept, rule by rule.
	Verdict *check.Verdict `json:"verdict,omitempty"`
}

// SeedRange is the seeds First to Last, both included.
type SeedRange struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

// Failure is one failing run of a report.
type Failure struct {
	Seed    uint64   `json:"seed"`
	Rules   []string `json:"rules"`
	Finding string   `json:"finding"`
	// Shrinking, when the run was shrunk: its schedule and trace files,
	// the command that reproduces it, the sizes before and after.
	Schedule string `json:"schedule,omitempty"`
	Trace    string `json:"trace,omitempty"`
	// HTTPTrace is the file of the run's HTTP record, over Streamable
	// HTTP (docs/sim.md, "The HTTP record").
	HTTPTrace string      `json:"httpTrace,omitempty"`
	Repro     string      `json:"repro,omitempty"`
	Shrunk    *ShrunkSize `json:"shrunk,omitempty"`
	// NotShrunk says why a run chosen for shrinking was not.
	NotShrunk string `json:"notShrunk,omitempty"`
}

// ShrunkSize is a schedule's size before and after shrinking.
type ShrunkSize struct {
	FromCalls  int `json:"fromCalls"`
	FromFaults int `json:"fromFaults"`
	ToCalls    int `json:"toCalls"`
	ToFaults   int `json:"toFaults"`
	Runs       int `json:"runs"`
}

// Timing is the wall time of a report's runs: of each partition, added
// up by a merge.
type Timing struct {
	WallNs        time.Duration `json:"wallNs"`
	RunsPerMinute float64       `json:"runsPerMinute"`
}

// NewReport makes the report of a summary and its failures; seeds are
// the seeds run (SeedSet.Ranges).
func NewReport(sum Summary, failures []Failure, seeds []SeedRange, partition string) Report {
	r := Report{Schema: ReportSchema, Seeds: seeds, Partition: partition, Summary: sum, Failures: failures}
	r.normalize()
	r.Timing = Timing{WallNs: sum.Wall, RunsPerMinute: sum.RunsPerMinute()}
	return r
}

func (r *Report) normalize() {
	if r.Failures == nil {
		r.Failures = []Failure{}
	}
	if r.Seeds == nil {
		r.Seeds = []SeedRange{}
	}
	if r.Summary.ByRule == nil {
		r.Summary.ByRule = map[string]int{}
	}
	if r.Summary.Fired == nil {
		r.Summary.Fired = map[string]int64{}
	}
	for _, name := range r.Summary.faultNames() {
		r.Summary.Fired[name] += 0 // every fault of the revision named, fired or not
	}
	slices.SortStableFunc(r.Failures, func(a, b Failure) int { return cmpU64(a.Seed, b.Seed) })
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// SeedSet collects the seeds of runs as ranges: consecutive seeds, what
// --seeds runs, take one range however many they are.
type SeedSet struct{ rs []SeedRange }

// Add adds a seed.
func (s *SeedSet) Add(seed uint64) {
	if n := len(s.rs); n > 0 && s.rs[n-1].Last != math.MaxUint64 && s.rs[n-1].Last+1 == seed {
		s.rs[n-1].Last = seed
		return
	}
	s.rs = append(s.rs, SeedRange{First: seed, Last: seed})
}

// Ranges returns the seeds as sorted ranges of consecutive seeds.
func (s *SeedSet) Ranges() []SeedRange {
	out, _, _ := joinRanges(s.rs)
	return out
}

// joinRanges sorts ranges and joins those that meet or overlap; dup is
// the first seed two of them share, if any.
func joinRanges(rs []SeedRange) (out []SeedRange, dup uint64, shared bool) {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b SeedRange) int { return cmp.Or(cmpU64(a.First, b.First), cmpU64(a.Last, b.Last)) })
	for _, r := range s {
		n := len(out)
		switch {
		case n > 0 && r.First <= out[n-1].Last:
			if !shared {
				dup, shared = r.First, true
			}
			out[n-1].Last = max(out[n-1].Last, r.Last)
		case n > 0 && r.First == out[n-1].Last+1:
			out[n-1].Last = r.Last
		default:
			out = append(out, r)
		}
	}
	return out, dup, shared
}

// ParseReport reads a report file; name is used in errors, which are one
// line.
func ParseReport(name string, data []byte) (Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return Report{}, fmt.Errorf("%s: not a tasksim sim result: %v", name, err)
	}
	if r.Schema != ReportSchema {
		return Report{}, fmt.Errorf("%s: not a tasksim sim result (schema %q, want %q)", name, r.Schema, ReportSchema)
	}
	r.normalize()
	r.Summary.Wall = r.Timing.WallNs
	return r, nil
}

// MergeReports adds up the reports of partitions: seeds, counts,
// failures, wall time. Partitions must not share a seed.
func MergeReports(rs []Report) (Report, error) {
	out := Report{Schema: ReportSchema}
	var seeds []SeedRange
	for i, r := range rs {
		if i > 0 && r.Summary.Revision != rs[0].Summary.Revision {
			return Report{}, fmt.Errorf("results of two revisions (%s, %s): merge the partitions of one run", revisionName(rs[0].Summary.Revision), revisionName(r.Summary.Revision))
		}
		for _, sr := range r.Seeds {
			if sr.Last < sr.First {
				return Report{}, fmt.Errorf("seed range %d-%d: not a range", sr.First, sr.Last)
			}
		}
		seeds = append(seeds, r.Seeds...)
		out.Summary.merge(r.Summary)
		out.Failures = append(out.Failures, r.Failures...)
		out.FailuresOmitted += r.FailuresOmitted
		out.Interrupted = out.Interrupted || r.Interrupted
		out.Timing.WallNs += r.Timing.WallNs
	}
	joined, dup, shared := joinRanges(seeds)
	if shared {
		return Report{}, fmt.Errorf("seed %d is in two of the results: partitions must not overlap", dup)
	}
	out.Seeds = joined
	out.normalize()
	out.Summary.Wall = out.Timing.WallNs
	out.Timing.RunsPerMinute = out.Summary.RunsPerMinute()
	return out, nil
}

func (s *Summary) merge(o Summary) {
	if s.ByRule == nil {
		s.ByRule = map[string]int{}
		s.Fired = map[string]int64{}
	}
	s.Revision = o.Revision
	s.Runs += o.Runs
	s.Failures += o.Failures
	s.Calls += o.Calls
	s.Restarts += o.Restarts
	s.TailLost += o.TailLost
	s.TailRecovered += o.TailRecovered
	s.SimTime += o.SimTime
	for k, v := range o.ByRule {
		s.ByRule[k] += v
	}
	for k, v := range o.Fired {
		s.Fired[k] += v
	}
}

// revisionName names a Summary.Revision, "" as 2025-11-25.
func revisionName(r string) string {
	if r == "" {
		return Revision20251125
	}
	return r
}

// SeedsText is the seed ranges on one line: "1-500, 700".
func SeedsText(rs []SeedRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.FormatUint(r.First, 10)
		if r.Last != r.First {
			parts[i] += "-" + strconv.FormatUint(r.Last, 10)
		}
	}
	return strings.Join(parts, ", ")
}

// Partition returns the seeds of partition i of n (0 <= i < n) of the n
// seeds from first on: contiguous ranges, their sizes differing by at
// most one. A partition may be empty when there are fewer seeds than
// partitions.
func Partition(first uint64, count, i, n int) (uint64, int) {
	// count*k/n in 128 bits: count may be any int.
	at := func(k int) uint64 {
		hi, lo := bits.Mul64(uint64(count), uint64(k))
		q, _ := bits.Div64(hi, lo, uint64(n))
		return q
	}
	lo, hi := at(i), at(i+1)
	return first + lo, int(hi - lo)
}
