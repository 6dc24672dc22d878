package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tasksim/tasksim/check"
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
	// Revision is the MCP revision the runs speak (2025-11-25 or
	// 2026-07-28).
	Revision string
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
sim-merge adds them up. TASKSIM_CLOCK_VERIFY=1 in the environment checks
that nothing outside a run (a wall-clock timer, the network) wakes it
while its clock may move: such a wake stops the run with an error naming
the goroutine (exit 3). A diagnostic: each check costs 3 ms
(docs/sim.md, "When the clock moves").

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
that catches each): a way to see what a bug looks like, shrunk.

--revision 2026-07-28 runs the reference pair of that revision: the
stateless client against the reference server serving both revisions or
2026-07-28 alone (drawn per seed), its tasks followed by polling tasks/get
at the pollIntervalMs the server suggests or by subscriptions/listen
(--mode poll,listen), input asked through tasks/update and by multi
round-trip requests. Faults whose meaning is 2025-11-25's alone
(duplicate-seqnr, drop-partial, server-restart, the seqnr=, seq= and
stream=get selectors, ttl-expiry without advance=) are not drawn, and
given with --fault they are exit 2.`,
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
	f.StringSliceVar(&o.Modes, "mode", nil, "call modes to draw from (plain, immediate, streaming, task, poll, partial; default all); with --revision 2026-07-28 how tasks are followed (poll, listen; default both)")
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
	f.StringVar(&o.Revision, "revision", sim.Revision20251125, "the MCP revision of the reference pair: 2025-11-25 or 2026-07-28 (the stateless client; docs/sim.md)")
	f.StringVar(&o.Bug, "bug", "", `plant this known bug in the reference server, transport or client, to see the simulator catch it ("list" lists them; docs/sim.md)`)
	return cmd
}

// simRun runs one schedule: sim.Run, which tests wrap to stop a command
// after some runs, as a SIGINT would.
var simRun = sim.Run

func runSim(st *State, o *SimOptions, seedsGiven bool) error {
	plan, err := simSchedules(o, seedsGiven)
	if err != nil {
		return err
	}
	bugs, err := simRunFlags(o, plan.n)
	if err != nil {
		return err
	}
	outs, err := openSimOutputs(st, o)
	if err != nil {
		return err
	}
	defer outs.abort()
	l := &simLoop{
		st: st, o: o, outs: outs,
		tally:       simTally{sum: sim.Summary{Revision: summaryRevision(o.Revision)}, maxFailures: maxSimFailures, maxCases: maxSimCases},
		shrunkRules: map[string]bool{},
		runOpts:     &sim.RunOptions{Version: Version, Bugs: bugs, Strict: o.Strict},
	}
	start := time.Now()
	if err := l.runAll(plan.schedules); err != nil {
		return err
	}
	l.tally.sum.Wall = time.Since(start)
	return l.report(plan.n)
}

// simRunFlags checks the flags that shape the runs rather than their
// schedules (--trace, --shrink) and returns the planted bug of --bug.
func simRunFlags(o *SimOptions, n int) (*sim.Bugs, error) {
	if o.Trace != "" && n != 1 {
		return nil, usagef("--trace writes the trace of one run: give --seed or --schedule, not %d runs", n)
	}
	if o.Shrink != "first" && o.Shrink != "all" && o.Shrink != "none" {
		return nil, usagef("--shrink %q: want first, all or none", o.Shrink)
	}
	if o.Bug == "" {
		return nil, nil
	}
	if o.Revision == sim.Revision20260728 {
		return nil, usagef("--bug %s: the planted bugs are of 2025-11-25; a %s run plants none yet", o.Bug, sim.Revision20260728)
	}
	b, err := plantedBug(o.Bug, false)
	if err != nil {
		return nil, err
	}
	return &b.Plant, nil
}

// simLoop is tasksim sim's runs in progress: what it keeps of them, which
// rules it has shrunk a failure of, and whether an interrupt cut it short.
type simLoop struct {
	st      *State
	o       *SimOptions
	outs    *simOutputs
	runOpts *sim.RunOptions
	tally   simTally
	// shrunkRules are the rules a failure was shrunk for (--shrink first).
	shrunkRules map[string]bool
	pick        simPick
	// traced is the verdict of the run --trace keeps, for --json.
	traced      *check.Verdict
	interrupted bool
}

// runAll runs the schedules until they end or the command is
// interrupted; a run cut short by the interrupt counts for nothing.
func (l *simLoop) runAll(schedules iter.Seq[sim.Schedule]) error {
	ctx := l.st.Context
	for s := range schedules {
		if ctx.Err() != nil {
			l.interrupted = true
			break
		}
		if err := l.runOne(ctx, s); err != nil {
			return err
		}
		if l.interrupted {
			break
		}
	}
	return nil
}

// runOne runs one schedule, keeps its trace (--trace), prints and
// shrinks its failure, and counts it.
func (l *simLoop) runOne(ctx context.Context, s sim.Schedule) error {
	o := l.o
	l.runOpts.Command = simCommand(s, o.Bug)
	t0 := time.Now()
	res, err := simRun(ctx, s, l.runOpts)
	if err != nil {
		if ctx.Err() != nil {
			l.interrupted = true // the run cut short counts for nothing
			return nil
		}
		return fmt.Errorf("seed %d: %w", s.Seed, err)
	}
	if o.HTML != "" {
		l.pick.offer(res)
	}
	c := simCase{name: "seed " + strconv.FormatUint(s.Seed, 10), wall: time.Since(t0)}
	if o.Trace != "" {
		if err := l.keepTrace(res); err != nil {
			return err
		}
	}
	rules := res.FailedRules()
	if len(rules) == 0 {
		l.tally.add(res, c, nil)
		return nil
	}
	finding := res.Finding(rules[0])
	fmt.Fprintf(l.st.Stdout, "seed %d: FAIL %s: %s\n", s.Seed, strings.Join(rules, ","), finding)
	c.rules, c.text = rules, finding
	fail := sim.Failure{Seed: s.Seed, Rules: rules, Finding: finding}
	if o.Shrink == "all" || o.Shrink == "first" && !l.shrunkRules[rules[0]] {
		l.shrunkRules[rules[0]] = true
		if err := simShrink(l.st, o, s, res, rules[0], l.runOpts, &fail); err != nil {
			return err
		}
	}
	l.tally.add(res, c, &fail)
	return nil
}

// keepTrace writes the run's trace to --trace, and its HTTP record
// beside it (docs/sim.md).
func (l *simLoop) keepTrace(res *sim.Result) error {
	if err := l.outs.trace.write(func(w io.Writer) error { _, err := w.Write(res.Trace); return err }); err != nil {
		return err
	}
	if res.HTTPTrace != nil && l.outs.httpTrace != nil {
		// Beside it, the run's HTTP record (docs/sim.md).
		if err := l.outs.httpTrace.write(func(w io.Writer) error { _, err := w.Write(res.HTTPTrace); return err }); err != nil {
			return err
		}
	}
	l.traced = res.Verdict
	return nil
}

// report prints the summary, writes every output and maps the runs to
// the command's result; n is the number of runs planned.
func (l *simLoop) report(n int) error {
	st, o, sum := l.st, l.o, &l.tally.sum
	seeds := l.tally.seeds.Ranges()
	if o.Partition != "" {
		fmt.Fprintf(st.Stdout, "partition %s: seeds %s\n", o.Partition, sim.SeedsText(seeds))
	}
	if err := sum.WriteText(st.Stdout); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if l.interrupted {
		// What ran is reported, and written to every output, as at the
		// end of a whole run.
		fmt.Fprintf(st.Stdout, "interrupted: %d of %d runs ended (seeds %s)\n", sum.Runs, n, orNone(sim.SeedsText(seeds)))
	}
	if o.HTML != "" && l.pick.best != nil {
		if err := l.outs.html.write(func(w io.Writer) error { return writeSimHTML(w, &l.pick, sum.Runs) }); err != nil {
			return err
		}
	}
	err := l.outs.json.write(func(w io.Writer) error {
		rep := sim.NewReport(*sum, l.tally.failures, seeds, o.Partition)
		rep.FailuresOmitted, rep.Interrupted = l.tally.failuresOmitted, l.interrupted
		rep.Verdict = l.traced
		return writeJSON(w, rep)
	})
	if err != nil {
		return err
	}
	if err := l.outs.junit.write(func(w io.Writer) error { return writeSimJUnit(w, &l.tally, l.interrupted, n) }); err != nil {
		return err
	}
	if err := l.outs.commit(); err != nil {
		return err
	}
	switch {
	case sum.Failures > 0 && l.interrupted:
		return &FindingsError{Summary: fmt.Sprintf("interrupted after %d of %d runs; %d of them failed a rule", sum.Runs, n, sum.Failures)}
	case sum.Failures > 0:
		return &FindingsError{Summary: fmt.Sprintf("%d of %d runs failed a rule", sum.Failures, sum.Runs)}
	case l.interrupted:
		return &InterruptedError{What: "sim", Detail: fmt.Sprintf("%d of %d runs ended, none failed", sum.Runs, n)}
	}
	return nil
}

// summaryRevision is the Summary.Revision of runs of revision r: ""
// for 2025-11-25, as runs before revisions were.
func summaryRevision(r string) string {
	if r == sim.Revision20251125 {
		return ""
	}
	return r
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
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
	if s.Workload.Revision == sim.Revision20260728 {
		cmd = append(cmd, "--revision", s.Workload.Revision)
	}
	if bug != "" {
		cmd = append(cmd, "--bug", bug)
	}
	return cmd
}
