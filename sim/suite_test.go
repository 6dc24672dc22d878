package sim

import (
	"context"
	"os"
	"path/filepath"
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
