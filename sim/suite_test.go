package sim

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/sim/check"
)

// stdioTarget is an in-process reference server behind stdio, one server
// per connection as a command would be.
func stdioTarget(opts *server.Options) Target {
	return Target{Dial: func() mcp.Transport { return stdio.Pipe(server.New(opts), nil) }}
}

func describe(res *SuiteResult) string {
	var b strings.Builder
	for _, r := range res.Scenarios {
		b.WriteString(r.Name + " " + string(r.Status) + " " + r.Why + "\n")
		for _, o := range r.Rules {
			if o.Status != check.Pass {
				b.WriteString("    " + o.ID + " " + string(o.Status) + " " + o.Why + "\n")
				for _, f := range o.Findings {
					b.WriteString("      " + f.Message + "\n")
				}
			}
		}
	}
	return b.String()
}

// TestSuiteReferenceServer: the reference server passes every scenario,
// over HTTP and over stdio, and every rule a scenario declares is judged
// (PASS, never SKIP) where the transport allows it.
func TestSuiteReferenceServer(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			var target Target
			if tr == "http" {
				url, _ := refserver.Start(t, nil)
				target = Target{URL: url}
			} else {
				target = stdioTarget(nil)
			}
			res, err := RunSuite(context.Background(), target, &SuiteOptions{TraceDir: traceDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Scenarios {
				want := check.Pass
				if tr == "stdio" && strings.HasPrefix(r.Why, "Streamable HTTP only") {
					want = check.Skip
				}
				if r.Status != want {
					t.Errorf("%s: %s, want %s", r.Name, r.Status, want)
					continue
				}
				if want != check.Pass {
					continue
				}
				for _, o := range r.Rules {
					if o.Status != check.Pass && !(tr == "stdio" && strings.HasPrefix(o.ID, "HTTP-")) {
						t.Errorf("%s: rule %s %s (%s)", r.Name, o.ID, o.Status, o.Why)
					}
				}
			}
			if t.Failed() {
				t.Log("\n" + describe(res))
			}
		})
	}
}

// traceDir is where a test keeps its traces: $TASKSIM_TEST_TRACES (to
// look at them) or a temporary directory.
func traceDir(t *testing.T) string {
	if d := os.Getenv("TASKSIM_TEST_TRACES"); d != "" {
		return filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_"))
	}
	return t.TempDir()
}

// TestSuiteSameSeedSameDecisions: the same seed against the same target
// takes the same fault decisions and gives the same verdict.
func TestSuiteSameSeedSameDecisions(t *testing.T) {
	url, _ := refserver.Start(t, nil)
	run := func() *SuiteResult {
		res, err := RunSuite(context.Background(), Target{URL: url}, &SuiteOptions{Scenarios: []string{"sep1905-gap-fill"}, Seed: 7, TraceDir: traceDir(t)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(), run()
	ra, rb := a.Scenarios[0], b.Scenarios[0]
	if len(ra.Faults) == 0 {
		t.Fatal("no fault decision was taken")
	}
	// Which messages pass depends on timing (a gap-filling tasks/result
	// overlaps what is still streaming); each message seen by both runs
	// must get the same decision. Task ids are random per run.
	norm := func(fs []string) map[string]string {
		m := map[string]string{}
		for _, f := range fs {
			f = regexp.MustCompile(`task=\S+ `).ReplaceAllString(f, "")
			i := strings.LastIndex(f, ": ")
			m[f[:i]] = f[i+2:]
		}
		return m
	}
	na, nb := norm(ra.Faults), norm(rb.Faults)
	common := 0
	for k, v := range na {
		if w, ok := nb[k]; ok {
			common++
			if v != w {
				t.Errorf("%s: %s in one run, %s in the other", k, v, w)
			}
		}
	}
	if common == 0 {
		t.Errorf("no message in common:\n%v\n%v", ra.Faults, rb.Faults)
	}
	if ra.Status != rb.Status || strings.Join(ra.Failed(), ",") != strings.Join(rb.Failed(), ",") {
		t.Errorf("verdicts differ: %s %v vs %s %v", ra.Status, ra.Failed(), rb.Status, rb.Failed())
	}
}

// TestSuiteCoversCatalog: every rule of the catalog is exercised by at
// least one scenario, server or client.
func TestSuiteCoversCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range ServerScenarios() {
		for _, id := range sc.Rules {
			seen[id] = true
		}
	}
	for _, sc := range ClientScenarios() {
		for _, id := range sc.Rules {
			seen[id] = true
		}
	}
	for _, r := range check.Catalog {
		if !seen[r.ID] {
			t.Errorf("rule %s: no scenario exercises it", r.ID)
		}
		delete(seen, r.ID)
	}
	for id := range seen {
		t.Errorf("scenarios name %s, which is not in the catalog", id)
	}
}
