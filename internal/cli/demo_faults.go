package cli

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/load"
	"github.com/tasksim/tasksim/sim"
	"github.com/tasksim/tasksim/timeline"
)

// The demo's fault half: a short simulation of the reference client and
// server under drawn fault schedules (tasksim sim), after the benchmark.
const (
	// demoSimSeeds is how many seeds it runs: each draws its workload and
	// faults from the whole in-process catalog.
	demoSimSeeds = 200
	// demoSimBudget bounds its wall time: on a busy machine it runs the
	// seeds it can in that time, and says how many.
	demoSimBudget = 15 * time.Second
)

// demoFaults runs the fault half: seeds 1..seeds under drawn faults, the
// summary and a verdict table per rule printed to w, and the timeline of
// the most interesting run (faults acted, calls recovered after them) as
// a section of the HTML report.
func demoFaults(ctx context.Context, w io.Writer, seeds int, budget time.Duration) ([]load.HTMLSection, error) {
	fmt.Fprintf(w, "\nFaults: tasksim sim --seeds %d, the reference client and server in one process, each seed a workload and fault schedule drawn from every in-process fault\n", seeds)
	var sum sim.Summary
	var pick simPick
	pick.ignoreFailures = true
	table := newRuleTable()
	start := time.Now()
	opts := &sim.RunOptions{Version: Version}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		if time.Since(start) > budget {
			fmt.Fprintf(w, "stopped after %d of %d seeds: past the %v budget (a busy machine)\n", sum.Runs, seeds, budget)
			break
		}
		s := sim.Draw(seed, nil, nil)
		opts.Command = simCommand(s, "")
		res, err := sim.Run(ctx, s, opts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &InterruptedError{What: "demo", Detail: fmt.Sprintf("in the fault half, after %d seeds", sum.Runs)}
			}
			return nil, fmt.Errorf("fault half: seed %d: %w", seed, err)
		}
		sum.Add(res)
		table.add(res)
		pick.offer(res)
		if rules := res.FailedRules(); len(rules) > 0 {
			fmt.Fprintf(w, "seed %d: FAIL %s: %s (reproduce: tasksim sim --seed %d)\n", seed, strings.Join(rules, ","), res.Finding(rules[0]), seed)
		}
	}
	sum.Wall = time.Since(start)
	var summary strings.Builder
	if err := sum.WriteText(&summary); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(w, summary.String()); err != nil {
		return nil, err
	}
	if err := table.write(w); err != nil {
		return nil, err
	}
	if pick.best == nil {
		return nil, nil
	}
	title := fmt.Sprintf("tasksim sim --seed %d", pick.best.Schedule.Seed)
	run, err := simRunTimeline(pick.best, title)
	if err != nil {
		return nil, fmt.Errorf("fault half: seed %d: %w", pick.best.Schedule.Seed, err)
	}
	fmt.Fprintf(w, "timeline of seed %d in the report: %s\n", pick.best.Schedule.Seed, pick.why())
	// The section is paragraphs and a table, not preformatted text, so
	// that it wraps to the page: a summary line is wider than a window.
	var buf bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(summary.String()), "\n") {
		fmt.Fprintf(&buf, "<p>%s</p>\n", template.HTMLEscapeString(line))
	}
	table.writeHTML(&buf)
	fmt.Fprintf(&buf, "<p>The timeline of seed %d, %s:</p>\n", pick.best.Schedule.Seed, template.HTMLEscapeString(pick.why()))
	if err := timeline.WriteSection(&buf, run); err != nil {
		return nil, err
	}
	return []load.HTMLSection{{Title: "Faults: the simulator", HTML: template.HTML(buf.String())}}, nil
}

// ruleTable counts, per rule, the runs that passed, failed or did not
// show what it needs: the checker's rules and the simulator's own.
type ruleTable struct {
	ids    []string
	counts map[string]*[3]int
}

func newRuleTable() *ruleTable {
	t := &ruleTable{counts: map[string]*[3]int{}}
	for _, r := range check.Catalog() {
		t.ids = append(t.ids, r.ID)
		t.counts[r.ID] = new([3]int)
	}
	for _, id := range []string{sim.RuleLiveness, sim.RuleResult} {
		t.ids = append(t.ids, id)
		t.counts[id] = new([3]int)
	}
	return t
}

func (t *ruleTable) add(res *sim.Result) {
	for _, r := range res.Verdict.Rules {
		c := t.counts[r.Rule.ID]
		if c == nil {
			continue
		}
		switch r.Status {
		case check.Pass:
			c[0]++
		case check.Fail:
			c[1]++
		default:
			c[2]++
		}
	}
	for _, id := range []string{sim.RuleLiveness, sim.RuleResult} {
		if res.Fails(id) {
			t.counts[id][1]++
		} else {
			t.counts[id][0]++
		}
	}
}

// judged returns the rules that some run judged.
func (t *ruleTable) judged() []string {
	var out []string
	for _, id := range t.ids {
		if c := t.counts[id]; c[0]+c[1] > 0 {
			out = append(out, id)
		}
	}
	return out
}

// write prints the rules that some run judged: pass, fail, and the runs
// that did not show what the rule needs.
func (t *ruleTable) write(w io.Writer) error {
	ids := t.judged()
	width := len("rule")
	for _, id := range ids {
		width = max(width, len(id))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s %5s %5s %13s\n", width, "rule", "pass", "fail", "not observed")
	for _, id := range ids {
		c := t.counts[id]
		fmt.Fprintf(&b, "%-*s %5d %5d %13d\n", width, id, c[0], c[1], c[2])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHTML writes the same as an HTML table.
func (t *ruleTable) writeHTML(b *bytes.Buffer) {
	b.WriteString("<table class=\"rules\">\n<thead><tr><th>rule</th><th>pass</th><th>fail</th><th>not observed</th></tr></thead>\n<tbody>\n")
	for _, id := range t.judged() {
		c := t.counts[id]
		fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%d</td></tr>\n", template.HTMLEscapeString(id), c[0], c[1], c[2])
	}
	b.WriteString("</tbody>\n</table>\n")
}
