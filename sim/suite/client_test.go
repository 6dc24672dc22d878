package suite

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/leaktest"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// inProcessClient is the reference client as a client under test, with
// bugs planted; it prints the result as tasksim call does. Over stdio it
// reaches the scripted server through the relay's connection, as a
// client whose stdio server is the relay would.
func inProcessClient(bugs plant.ClientFlaws, overStdio bool) ClientTarget {
	return ClientTarget{Stdio: overStdio, Run: func(ctx context.Context, server, _ string) (string, error) {
		var tr mcp.Transport = &streamhttp.ClientTransport{URL: server, MaxReconnects: bugs.MaxReconnects()}
		if overStdio {
			c, err := DialRelay(ctx, server)
			if err != nil {
				return "", err
			}
			tr = &stdio.IOTransport{Reader: c, Writer: c}
		}
		s, err := client.New(&client.Options{PollPolicy: bugs.PollPolicy()}).Connect(ctx, bugs.Transport(tr))
		if err != nil {
			return "", err
		}
		defer s.Close()
		res, err := bugs.CallTool(ctx, s, client.CallOptions{Name: "slow_text", Args: map[string]any{"chunks": 5, "intervalMs": 60, "chunkSize": 12}, Mode: client.ModeStreaming})
		if res == nil {
			return "", err
		}
		out := blocksText(res.Content)
		if err == nil && !res.Complete {
			err = errors.New("incomplete result")
		}
		return out, err
	}}
}

// TestClientSuiteReferenceClient: the reference client passes every
// client scenario over HTTP, and over stdio every one that applies there
// (the others are SKIP with the reason).
func TestClientSuiteReferenceClient(t *testing.T) {
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			res, err := RunClientSuite(context.Background(), inProcessClient(plant.ClientFlaws{}, tr == "stdio"), &SuiteOptions{TraceDir: traceDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Scenarios {
				want := check.Pass
				if tr == "stdio" && slices.ContainsFunc(ClientScenarios(), func(c *ClientScenario) bool { return c.Name == r.Name && c.HTTPOnly }) {
					want = check.Skip
				}
				if r.Status != want {
					t.Errorf("%s: %s %s, want %s", r.Name, r.Status, r.Why, want)
					continue
				}
				if want == check.Skip {
					if !strings.Contains(r.Why, "Streamable HTTP only") {
						t.Errorf("%s: skipped for %q", r.Name, r.Why)
					}
					continue
				}
				for _, o := range r.Rules {
					if o.Status != check.Pass {
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

// TestClientSuitePlantedBugs breaks the reference client one bug at a
// time, over HTTP and over stdio: exactly the rule naming the bug fails.
// Over stdio a lost stream cannot happen, so there is no resume to skip.
func TestClientSuitePlantedBugs(t *testing.T) {
	cases := []struct {
		name  string
		bugs  plant.ClientFlaws
		want  string
		stdio bool
	}{
		{"no dedup", plant.ClientFlaws{NoDedup: true}, "CLIENT-DEDUP", false},
		{"no resume", plant.ClientFlaws{NoResume: true}, "CLIENT-RESUME", false},
		{"polls faster than pollInterval", plant.ClientFlaws{IgnorePollInterval: true}, "CLIENT-TASKS-GET-INTERVAL", false},
		{"stdio: no dedup", plant.ClientFlaws{NoDedup: true}, "CLIENT-DEDUP", true},
		{"stdio: polls faster than pollInterval", plant.ClientFlaws{IgnorePollInterval: true}, "CLIENT-TASKS-GET-INTERVAL", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := RunClientSuite(context.Background(), inProcessClient(tc.bugs, tc.stdio), &SuiteOptions{TraceDir: traceDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			wantBrokenOnly(t, res, tc.want)
		})
	}
}

// TestClientSuiteNeverConnects: a client that does not start, or starts
// and never connects, fails every scenario with that reason, never passes,
// over HTTP and over stdio.
func TestClientSuiteNeverConnects(t *testing.T) {
	relay := func(spec string) string { return "relay " + spec }
	cases := []struct {
		name    string
		target  ClientTarget
		timeout time.Duration
		want    []string
	}{
		{"exits at once", ClientTarget{Command: []string{"true"}}, 0, []string{"never connected"}},
		{"not found", ClientTarget{Command: []string{"/nonexistent/tasksim-no-such-client"}}, 0, []string{"never connected", "no such file"}},
		{"hangs", ClientTarget{Command: []string{"sh", "-c", "exec sleep 60", "sh"}}, 200 * time.Millisecond, []string{"never connected", "did not finish in time"}},
		{"stdio: exits at once", ClientTarget{Command: []string{"true"}, Stdio: true, RelayCommand: relay}, 0, []string{"never connected"}},
		{"stdio: not found", ClientTarget{Command: []string{"/nonexistent/tasksim-no-such-client"}, Stdio: true, RelayCommand: relay}, 0, []string{"never connected", "no such file"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := RunClientSuite(context.Background(), tc.target, &SuiteOptions{Timeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Scenarios {
				if r.Status == check.Skip && tc.target.Stdio {
					continue // HTTP only
				}
				if r.Status != check.Fail {
					t.Errorf("%s: %s %q, want FAIL", r.Name, r.Status, r.Why)
				}
				for _, w := range tc.want {
					if !strings.Contains(r.Why, w) {
						t.Errorf("%s: %q does not say %q", r.Name, r.Why, w)
					}
				}
			}
		})
	}
}

// TestClientSuiteStdioLeavesNoGoroutines: the stdio endpoint, its relay
// connections and the scripted server's sessions all end with the suite.
func TestClientSuiteStdioLeavesNoGoroutines(t *testing.T) {
	leaktest.Check(t)
	if _, err := RunClientSuite(context.Background(), inProcessClient(plant.ClientFlaws{}, true), &SuiteOptions{TraceDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
}
