package cli

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/sim"
)

// SimOptions are the flags of tasksim sim.
type SimOptions struct {
	Seeds     int
	Seed      string
	Faults    []string
	FaultRate float64
	NoFaults  bool
	// Strict fails a SHOULD broken (WARN) as a MUST is.
	Strict    bool
	Modes     []string
	Tasks     int
	Transport string
	JSON      string
	JUnit     string
	Out       string
	Schedule  string
	Corpus    string
	Shrink    string
	Trace     string
	HTML      string
	Bug       string
	Partition string
}

// NewCmdSim builds tasksim sim.
func NewCmdSim(st *State) *cobra.Command {
	o := &SimOptions{}
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Seeded in-process simulation of the reference client and server under fault schedules, with shrinking",
		Long: `Run the reference server and reference clients in one process, over the
in-memory transports (Streamable HTTP and stdio), through the in-process
fault layer, on a simulated clock. Each seed draws a workload (tools, modes,
chunk counts, ttls, cancels, concurrent calls on one session) and a fault
schedule from the fault catalog (over stdio, every fault but http-status,
which needs HTTP). Every run's trace is judged by the rule catalog (safety), and
every call must end with its correct result or an error a fault explains,
also once the faults stop (liveness: SIM-LIVENESS, SIM-RESULT).

A line is printed per failing seed, then a summary: runs, failures by rule,
how often each fault fired. A failing run is shrunk (delta debugging over
the fault decisions, the calls and their chunks) to a minimal schedule that
fails the same rule; its schedule and trace go to --out, with the command
that reproduces it: tasksim sim --seed S --schedule FILE. A directory of
kept schedules re-runs as a regression corpus (--corpus).

The same seed gives the same workload, fault schedule, ids and verdict;
docs/sim.md says where Go's scheduler may still order two things. A long
range scales out: --partition I/N runs one share of the seeds (a Kubernetes
Indexed Job sets JOB_COMPLETION_INDEX; set TASKSIM_SIM_PARTITIONS), --json
writes each share's result (schema tasksim.sim/v1), and tasksim report
sim-merge adds them up.

Interrupted (SIGINT, SIGTERM), it prints the summary of the runs that
ended and writes --json, --junit and --html for them. Every output path is
checked before the first run.

Exit codes: 0 every run passed, 1 a run failed a rule, 2 bad input (a seed
that is not a number, a schedule file that is not one, an unknown fault, a
bad --partition, a bad output path), 3 runtime failure (a run past its
wall-time bound, an output not written), 130 interrupted before its end
with no run failed.

--bug NAME plants a known bug in the reference server, its transport or
the reference client (tasksim sim --bug list names them, with the rule
that catches each): a way to see what a bug looks like, shrunk.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Bug == bugList {
				return listBugs(st.Stdout, false)
			}
			if !cmd.Flags().Changed("shrink") && (o.Schedule != "" || o.Corpus != "") {
				o.Shrink = "none" // a kept schedule is small already
			}
			if !cmd.Flags().Changed("partition") {
				o.Partition = partitionFromEnv(st)
			}
			return runSim(st, o, cmd.Flags().Changed("seeds"))
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Seeds, "seeds", 100, "how many seeds to run: 1..N, or from --seed on")
	f.StringVar(&o.Seed, "seed", "", "the seed (a uint64) to run, or to start from with --seeds")
	f.StringArrayVar(&o.Faults, "fault", nil, "run these faults (a spec, repeatable) instead of drawing them per seed")
	f.Float64Var(&o.FaultRate, "fault-rate", 0, "probability of each drawn fault on each message it addresses (0: 0.05; more for faults that address few messages)")
	f.BoolVar(&o.NoFaults, "no-faults", false, "run without faults")
	f.BoolVar(&o.Strict, "strict", false, "judge a SHOULD broken as FAIL (exit 1, shrunk), not WARN")
	f.StringSliceVar(&o.Modes, "mode", nil, "call modes to draw from (plain, immediate, streaming, task, poll, partial; default all)")
	f.IntVar(&o.Tasks, "tasks", 5, "at most this many calls per run")
	f.StringVar(&o.Transport, "transport", "", "http or stdio (default: drawn per seed, http 3 in 4)")
	f.StringVar(&o.JSON, "json", "", "also write the result (schema tasksim.sim/v1: seeds, summary, failures) as JSON to this file (- for stdout); tasksim report sim-merge merges partitions")
	f.StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report: one testcase per run")
	f.StringVar(&o.Out, "out", "sim-failures", "directory for the shrunk schedules and traces of failures")
	f.StringVar(&o.Schedule, "schedule", "", "run this schedule file (from --out) instead of drawing one")
	f.StringVar(&o.Corpus, "corpus", "", "re-run every *.json schedule in this directory (a regression corpus)")
	f.StringVar(&o.Shrink, "shrink", "first", "which failures to shrink: first (of each rule), all, none (default none with --schedule, --corpus)")
	f.StringVar(&o.Trace, "trace", "", "write the trace of the run to this file (one run: --seed or --schedule), and over HTTP its HTTP record beside it (x.trace: x.http.trace); --json then holds its verdict")
	f.StringVar(&o.HTML, "html", "", "write the timeline of a run to this HTML file: the run, or of many the first failing (else the one where faults did most)")
	f.StringVar(&o.Partition, "partition", "", "run partition I/N (I from 0 to N-1) of the seeds; default from JOB_COMPLETION_INDEX and TASKSIM_SIM_PARTITIONS (a Kubernetes Indexed Job)")
	f.StringVar(&o.Bug, "bug", "", `plant this known bug in the reference server, transport or client, to see the simulator catch it ("list" lists them; docs/sim.md)`)
	return cmd
}

// simCase is one run in the JUnit output.
type simCase struct {
	name  string
	rules []string
	text  string
	wall  time.Duration
}

// simRun runs one schedule: sim.Run, which tests wrap to stop a command
// after some runs, as a SIGINT would.
var simRun = sim.Run

func runSim(st *State, o *SimOptions, seedsGiven bool) error {
	plan, err := simSchedules(o, seedsGiven)
	if err != nil {
		return err
	}
	if o.Trace != "" && plan.n != 1 {
		return usagef("--trace writes the trace of one run: give --seed or --schedule, not %d runs", plan.n)
	}
	if o.Shrink != "first" && o.Shrink != "all" && o.Shrink != "none" {
		return usagef("--shrink %q: want first, all or none", o.Shrink)
	}
	var bugs *sim.Bugs
	if o.Bug != "" {
		b, err := plantedBug(o.Bug, false)
		if err != nil {
			return err
		}
		bugs = &b.Plant
	}
	outs, err := openSimOutputs(st, o)
	if err != nil {
		return err
	}
	defer outs.abort()
	ctx := st.Context
	tally := simTally{maxFailures: maxSimFailures, maxCases: maxSimCases}
	shrunkRules := map[string]bool{}
	start := time.Now()
	runOpts := &sim.RunOptions{Version: Version, Bugs: bugs, Strict: o.Strict}
	var pick simPick
	// traced is the verdict of the run --trace keeps, for --json.
	var traced *check.Verdict
	interrupted := false
	for s := range plan.schedules {
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		runOpts.Command = simCommand(s, o.Bug)
		t0 := time.Now()
		res, err := simRun(ctx, s, runOpts)
		if err != nil {
			if ctx.Err() != nil {
				interrupted = true // the run cut short counts for nothing
				break
			}
			return fmt.Errorf("seed %d: %w", s.Seed, err)
		}
		if o.HTML != "" {
			pick.offer(res)
		}
		c := simCase{name: "seed " + strconv.FormatUint(s.Seed, 10), wall: time.Since(t0)}
		if o.Trace != "" {
			if err := outs.trace.write(func(w io.Writer) error { _, err := w.Write(res.Trace); return err }); err != nil {
				return err
			}
			if res.HTTPTrace != nil && outs.httpTrace != nil {
				// Beside it, the run's HTTP record (docs/sim.md).
				if err := outs.httpTrace.write(func(w io.Writer) error { _, err := w.Write(res.HTTPTrace); return err }); err != nil {
					return err
				}
			}
			traced = res.Verdict
		}
		rules := res.FailedRules()
		if len(rules) == 0 {
			tally.add(res, c, nil)
			continue
		}
		finding := res.Finding(rules[0])
		fmt.Fprintf(st.Stdout, "seed %d: FAIL %s: %s\n", s.Seed, strings.Join(rules, ","), finding)
		c.rules, c.text = rules, finding
		fail := sim.Failure{Seed: s.Seed, Rules: rules, Finding: finding}
		if o.Shrink == "all" || o.Shrink == "first" && !shrunkRules[rules[0]] {
			shrunkRules[rules[0]] = true
			if err := simShrink(st, o, s, res, rules[0], runOpts, &fail); err != nil {
				return err
			}
		}
		tally.add(res, c, &fail)
	}
	sum := &tally.sum
	sum.Wall = time.Since(start)
	seeds := tally.seeds.Ranges()
	if o.Partition != "" {
		fmt.Fprintf(st.Stdout, "partition %s: seeds %s\n", o.Partition, sim.SeedsText(seeds))
	}
	if err := sum.WriteText(st.Stdout); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if interrupted {
		// What ran is reported, and written to every output, as at the
		// end of a whole run.
		fmt.Fprintf(st.Stdout, "interrupted: %d of %d runs ended (seeds %s)\n", sum.Runs, plan.n, orNone(sim.SeedsText(seeds)))
	}
	if o.HTML != "" && pick.best != nil {
		if err := outs.html.write(func(w io.Writer) error { return writeSimHTML(w, &pick, sum.Runs) }); err != nil {
			return err
		}
	}
	err = outs.json.write(func(w io.Writer) error {
		rep := sim.NewReport(*sum, tally.failures, seeds, o.Partition)
		rep.FailuresOmitted, rep.Interrupted = tally.failuresOmitted, interrupted
		rep.Verdict = traced
		return writeJSON(w, rep)
	})
	if err != nil {
		return err
	}
	if err := outs.junit.write(func(w io.Writer) error { return writeSimJUnit(w, &tally, interrupted, plan.n) }); err != nil {
		return err
	}
	if err := outs.commit(); err != nil {
		return err
	}
	switch {
	case sum.Failures > 0 && interrupted:
		return &FindingsError{Summary: fmt.Sprintf("interrupted after %d of %d runs; %d of them failed a rule", sum.Runs, plan.n, sum.Failures)}
	case sum.Failures > 0:
		return &FindingsError{Summary: fmt.Sprintf("%d of %d runs failed a rule", sum.Failures, sum.Runs)}
	case interrupted:
		return &InterruptedError{What: "sim", Detail: fmt.Sprintf("%d of %d runs ended, none failed", sum.Runs, plan.n)}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Bounds on what tasksim sim keeps of its runs, whatever their number:
// the summary counts every run; --json lists the first maxSimFailures
// failing runs, --junit has a testcase for each of the first maxSimCases
// runs (and the first maxSimFailures failing ones), and one testcase for
// the passing and one for the failing runs past them.
const (
	maxSimFailures = 1000
	maxSimCases    = 10000
)

// simTally is what tasksim sim keeps of its runs, in memory that does
// not grow with their number.
type simTally struct {
	sum   sim.Summary
	seeds sim.SeedSet
	// failures are the first maxFailures failing runs; failuresOmitted
	// counts the others.
	failures        []sim.Failure
	failuresOmitted int
	maxFailures     int
	// cases are the JUnit testcases: every run until there are maxCases,
	// then failing runs until maxFailures of them are cases; passOmitted
	// and failOmitted count the runs past that.
	cases                    []simCase
	failCases                int
	passOmitted, failOmitted int
	maxCases                 int
}

// add counts a run; fail is its failure, nil when it passed.
func (t *simTally) add(res *sim.Result, c simCase, fail *sim.Failure) {
	t.sum.Add(res)
	t.seeds.Add(res.Schedule.Seed)
	if fail != nil {
		if len(t.failures) < t.maxFailures {
			t.failures = append(t.failures, *fail)
		} else {
			t.failuresOmitted++
		}
	}
	switch {
	case len(t.cases) < t.maxCases || fail != nil && t.failCases < t.maxFailures:
		t.cases = append(t.cases, c)
		if fail != nil {
			t.failCases++
		}
	case fail != nil:
		t.failOmitted++
	default:
		t.passOmitted++
	}
}

// simPlan is the runs the flags ask for: how many, and their schedules,
// drawn one at a time as the runs need them, so that memory does not
// grow with the number of seeds.
type simPlan struct {
	n         int
	schedules iter.Seq[sim.Schedule]
}

// simSchedules makes the schedules the flags ask for.
func simSchedules(o *SimOptions, seedsGiven bool) (simPlan, error) {
	var seed uint64
	hasSeed := o.Seed != ""
	if hasSeed {
		var err error
		if seed, err = strconv.ParseUint(strings.TrimSpace(o.Seed), 10, 64); err != nil {
			return simPlan{}, usagef("--seed %q: not a seed (want a number from 0 to %d)", o.Seed, uint64(1<<64-1))
		}
	}
	if o.Seeds < 1 {
		return simPlan{}, usagef("--seeds %d: want at least 1", o.Seeds)
	}
	if o.Tasks < 1 || o.Tasks > 1000 {
		return simPlan{}, usagef("--tasks %d: want 1 to 1000", o.Tasks)
	}
	if o.FaultRate < 0 || o.FaultRate > 1 {
		return simPlan{}, usagef("--fault-rate %v: want a probability from 0 to 1", o.FaultRate)
	}
	if o.Transport != "" && o.Transport != sim.TransportHTTP && o.Transport != sim.TransportStdio {
		return simPlan{}, usagef("--transport %q: want http or stdio", o.Transport)
	}
	if o.NoFaults && len(o.Faults) > 0 {
		return simPlan{}, usagef("--no-faults and --fault: choose one")
	}
	fo := &sim.FaultOptions{Specs: o.Faults, Rate: o.FaultRate, None: o.NoFaults}
	if err := fo.Check(o.Transport); err != nil {
		return simPlan{}, &UsageError{Err: err}
	}
	transport := o.Transport
	if transport == "" && fo.Transport() == sim.TransportHTTP {
		transport = sim.TransportHTTP // a fault of the HTTP place: every run over HTTP
	}
	var modes []client.Mode
	for _, m := range o.Modes {
		mode, err := client.ParseMode(m)
		if err != nil {
			return simPlan{}, usagef("--mode: %v", err)
		}
		modes = append(modes, mode)
	}
	switch {
	case o.Partition != "" && (o.Schedule != "" || o.Corpus != ""):
		return simPlan{}, usagef("--partition %s: partitions split a seed range, not --schedule or --corpus", o.Partition)
	case o.Schedule != "" && o.Corpus != "":
		return simPlan{}, usagef("--schedule and --corpus: choose one")
	case o.Schedule != "":
		s, err := readSchedule(o.Schedule)
		if err != nil {
			return simPlan{}, err
		}
		if hasSeed {
			s.Seed = seed
		}
		return simPlan{n: 1, schedules: slices.Values([]sim.Schedule{s})}, nil
	case o.Corpus != "":
		paths, err := filepath.Glob(filepath.Join(o.Corpus, "*.json"))
		if err != nil || len(paths) == 0 {
			return simPlan{}, usagef("--corpus %s: no *.json schedules there", o.Corpus)
		}
		slices.Sort(paths)
		// Every file is read before the first run: a bad one is bad
		// input, found before anything runs.
		var out []sim.Schedule
		for _, p := range paths {
			s, err := readSchedule(p)
			if err != nil {
				return simPlan{}, err
			}
			out = append(out, s)
		}
		return simPlan{n: len(out), schedules: slices.Values(out)}, nil
	}
	n := o.Seeds
	if hasSeed && !seedsGiven {
		n = 1
	}
	if !hasSeed {
		seed = 1
	}
	if o.Partition != "" {
		i, parts, err := parsePartition(o.Partition)
		if err != nil {
			return simPlan{}, err
		}
		seed, n = sim.Partition(seed, n, i, parts)
	}
	wo := &sim.WorkloadOptions{Modes: modes, Tasks: o.Tasks, Transport: transport}
	draw := func(yield func(sim.Schedule) bool) {
		for i := range n {
			if !yield(sim.Draw(seed+uint64(i), wo, fo)) {
				return
			}
		}
	}
	return simPlan{n: n, schedules: draw}, nil
}

// parsePartition reads "I/N": partition I (from 0) of N.
func parsePartition(p string) (i, n int, err error) {
	a, b, ok := strings.Cut(p, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || n > 100000 || i < 0 || i >= n {
		return 0, 0, usagef("--partition %q: want I/N, N from 1 to 100000 and I from 0 to N-1 (JOB_COMPLETION_INDEX/TASKSIM_SIM_PARTITIONS)", p)
	}
	return i, n, nil
}

// partitionFromEnv is the partition of a Kubernetes Indexed Job's pod:
// JOB_COMPLETION_INDEX of TASKSIM_SIM_PARTITIONS; "" when either is unset.
func partitionFromEnv(st *State) string {
	idx, parts := st.Getenv("JOB_COMPLETION_INDEX"), st.Getenv("TASKSIM_SIM_PARTITIONS")
	if idx == "" || parts == "" {
		return ""
	}
	return idx + "/" + parts
}

func readSchedule(path string) (sim.Schedule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return sim.Schedule{}, usagef("--schedule %s: %v", path, pe.Err)
		}
		return sim.Schedule{}, err
	}
	s, err := sim.ParseSchedule(path, data)
	if err != nil {
		return sim.Schedule{}, &UsageError{Err: err}
	}
	return s, nil
}

// simShrink shrinks a failure, writes its schedule and trace to --out and
// prints how to reproduce it.
func simShrink(st *State, o *SimOptions, s sim.Schedule, res *sim.Result, rule string, runOpts *sim.RunOptions, fail *sim.Failure) error {
	t0 := time.Now()
	ro := *runOpts
	ro.Command = simCommand(s, o.Bug)
	sh, err := sim.Shrink(st.Context, s, rule, &sim.ShrinkOptions{Run: &ro})
	keep, trace, httpTrace := s, res.Trace, res.HTTPTrace
	var said string
	switch {
	case err == nil:
		keep, trace, httpTrace = sh.Schedule, sh.Result.Trace, sh.Result.HTTPTrace
		fail.Shrunk = &sim.ShrunkSize{FromCalls: len(s.Workload.Calls), FromFaults: len(s.Faults), ToCalls: len(keep.Workload.Calls), ToFaults: len(keep.Faults), Runs: sh.Runs}
		said = fmt.Sprintf("%d calls, %d faults -> %d calls, %d faults in %d runs (%v)",
			len(s.Workload.Calls), len(s.Faults), len(keep.Workload.Calls), len(keep.Faults), sh.Runs, time.Since(t0).Round(time.Millisecond))
	case errors.Is(err, sim.ErrNotFailing):
		keep.Fails = rule
		fail.NotShrunk = "the run did not fail the same way again (docs/sim.md, Determinism)"
		said = "not shrunk: " + fail.NotShrunk
	case st.Context.Err() != nil:
		// Interrupted: the failing run is kept as it ran.
		keep.Fails = rule
		fail.NotShrunk = "interrupted while shrinking"
		said = "not shrunk: " + fail.NotShrunk
	default:
		return fmt.Errorf("seed %d: shrink: %w", s.Seed, err)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	base := filepath.Join(o.Out, fmt.Sprintf("seed-%d-%s", s.Seed, rule))
	sched, err := sim.MarshalSchedule(keep)
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".json", sched, 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := os.WriteFile(base+".trace", trace, 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fail.Schedule, fail.Trace = base+".json", base+".trace"
	if httpTrace != nil {
		fail.HTTPTrace = httpTracePath(fail.Trace)
		if err := os.WriteFile(fail.HTTPTrace, httpTrace, 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	fail.Repro = fmt.Sprintf("tasksim sim --seed %d --schedule %s", s.Seed, base+".json")
	if o.Bug != "" {
		fail.Repro += " --bug " + o.Bug
	}
	fmt.Fprintf(st.Stdout, "  shrunk: %s\n  trace: %s\n", said, fail.Trace)
	if fail.HTTPTrace != "" {
		fmt.Fprintf(st.Stdout, "  http record: %s\n", fail.HTTPTrace)
	}
	fmt.Fprintf(st.Stdout, "  reproduce: %s\n", fail.Repro)
	return nil
}

// httpTracePath is where the HTTP record of a run whose trace goes to
// path is written: x.trace -> x.http.trace, any other name + ".http".
func httpTracePath(path string) string {
	if base, ok := strings.CutSuffix(path, ".trace"); ok {
		return base + ".http.trace"
	}
	return path + ".http"
}

// simCommand is the command line that reproduces a schedule's run, for
// its trace header.
func simCommand(s sim.Schedule, bug string) []string {
	cmd := []string{"tasksim", "sim", "--seed", strconv.FormatUint(s.Seed, 10)}
	if bug != "" {
		cmd = append(cmd, "--bug", bug)
	}
	return cmd
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr,omitempty"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Class   string        `xml:"classname,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
	Skipped *junitSkipped `xml:"skipped,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func writeSimJUnit(w io.Writer, t *simTally, interrupted bool, planned int) error {
	s := junitSuite{Name: "tasksim sim", Time: fmt.Sprintf("%.3f", t.sum.Wall.Seconds())}
	for _, c := range t.cases {
		jc := junitCase{Name: c.name, Class: "tasksim.sim", Time: fmt.Sprintf("%.3f", c.wall.Seconds())}
		if len(c.rules) > 0 {
			jc.Failure = &junitFailure{Message: strings.Join(c.rules, ","), Text: c.text}
		}
		s.Cases = append(s.Cases, jc)
	}
	if t.passOmitted > 0 {
		s.Cases = append(s.Cases, junitCase{Name: fmt.Sprintf("%d more runs passed", t.passOmitted), Class: "tasksim.sim", Time: "0.000"})
	}
	if t.failOmitted > 0 {
		s.Cases = append(s.Cases, junitCase{Name: fmt.Sprintf("%d more runs failed", t.failOmitted), Class: "tasksim.sim", Time: "0.000",
			Failure: &junitFailure{Message: "not listed", Text: "the summary counts them by rule"}})
	}
	if interrupted {
		s.Cases = append(s.Cases, junitCase{Name: "interrupted", Class: "tasksim.sim", Time: "0.000",
			Skipped: &junitSkipped{Message: fmt.Sprintf("interrupted after %d of %d runs", t.sum.Runs, planned)}})
	}
	for _, c := range s.Cases {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Skipped != nil {
			s.Skipped++
		}
	}
	return check.WriteJUnitXML(w, s)
}
