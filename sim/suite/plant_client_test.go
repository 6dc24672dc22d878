package suite

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// plantedClient is the reference client with bug planted from outside
// (internal/plant), calling slow_text as inProcessClient does.
func plantedClient(bug plant.ClientBug, overStdio bool) ClientTarget {
	return ClientTarget{Stdio: overStdio, Run: func(ctx context.Context, server, _ string) (string, error) {
		var tr mcp.Transport
		if overStdio {
			c, err := DialRelay(ctx, server)
			if err != nil {
				return "", err
			}
			tr = &stdio.IOTransport{Reader: c, Writer: c}
		}
		return bug.Run(ctx, server, tr, slowTextCall(client.ModeStreaming))
	}}
}

func slowTextCall(mode client.Mode) client.CallOptions {
	return client.CallOptions{Name: "slow_text", Args: map[string]any{"chunks": 5, "intervalMs": 60, "chunkSize": 12}, Mode: mode}
}

// TestClientSuiteFaultDidNotAct: a client that never asks for a streamed
// result (task mode) gives the scripted server no segment to drop or
// repeat and no SSE answer to cut: those scenarios are SKIP with the
// reason, never PASS; the one that needs no fault still passes.
func TestClientSuiteFaultDidNotAct(t *testing.T) {
	want := map[string]string{
		"client-duplicates": "did not negotiate SEP-1905 streaming: no segment to duplicate",
		"client-gap":        "did not negotiate SEP-1905 streaming: no segment to drop",
		"client-cut-stream": "nothing to cut",
	}
	for _, tr := range []string{"http", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			target := ClientTarget{Stdio: tr == "stdio", Run: func(ctx context.Context, server, _ string) (string, error) {
				var t mcp.Transport = &streamhttp.ClientTransport{URL: server}
				if tr == "stdio" {
					c, err := DialRelay(ctx, server)
					if err != nil {
						return "", err
					}
					t = &stdio.IOTransport{Reader: c, Writer: c}
				}
				s, err := client.New(nil).Connect(ctx, t)
				if err != nil {
					return "", err
				}
				defer s.Close()
				res, err := s.CallTool(ctx, slowTextCall(client.ModeTask))
				if res == nil {
					return "", err
				}
				return blocksText(res.Content), err
			}}
			res, err := RunClientSuite(context.Background(), target, &SuiteOptions{TraceDir: traceDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Scenarios {
				why, faulted := want[r.Name]
				switch {
				case tr == "stdio" && r.Name == "client-cut-stream":
					why = "Streamable HTTP only"
				case !faulted:
					if r.Status != check.Pass {
						t.Errorf("%s: %s %q, want PASS", r.Name, r.Status, r.Why)
					}
					continue
				}
				if r.Status != check.Skip || !strings.Contains(r.Why, why) {
					t.Errorf("%s: %s %q, want SKIP saying %q", r.Name, r.Status, r.Why, why)
				}
				for _, o := range r.Rules {
					if o.Status != check.Skip {
						t.Errorf("%s: rule %s %s, want SKIP", r.Name, o.ID, o.Status)
					}
				}
			}
		})
	}
}

// TestClientSuitePlantedDecorators runs the client suite against each
// client bug planted from outside the reference client, over HTTP and,
// where the bug can act there, over stdio: exactly the rule naming the
// bug fails, no other.
func TestClientSuitePlantedDecorators(t *testing.T) {
	for _, bug := range plant.ClientBugs() {
		for _, tr := range []string{"http", "stdio"} {
			if tr == "stdio" && bug.HTTPOnly {
				continue
			}
			t.Run(tr+": "+bug.Name, func(t *testing.T) {
				t.Parallel()
				res, err := RunClientSuite(context.Background(), plantedClient(bug, tr == "stdio"), &SuiteOptions{TraceDir: traceDir(t)})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.FailedRules(); !slices.Equal(got, []string{bug.Rule}) {
					t.Errorf("failed rules %v, want exactly [%s]\n%s", got, bug.Rule, describe(res))
				}
			})
		}
	}
}

// TestClientSuiteCompleteDefersToResume: a client that gives up after a
// cut and deletes its session fails CLIENT-RESUME with the cut and the
// DELETE as evidence; CLIENT-COMPLETE leaves the loss to it.
func TestClientSuiteCompleteDefersToResume(t *testing.T) {
	var bug plant.ClientBug
	for _, b := range plant.ClientBugs() {
		if b.HTTPOnly {
			bug = b
		}
	}
	res, err := RunClientSuite(context.Background(), plantedClient(bug, false), &SuiteOptions{TraceDir: traceDir(t), Scenarios: []string{"client-cut-stream"}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Scenarios[0]
	for _, o := range r.Rules {
		switch o.ID {
		case "CLIENT-RESUME":
			if o.Status != check.Fail || len(o.Findings) == 0 || len(o.Findings[0].Records) < 2 || !strings.Contains(o.Findings[0].Message, "deleted its session") {
				t.Errorf("CLIENT-RESUME %s %+v, want FAIL naming the cut and the DELETE", o.Status, o.Findings)
			}
		case "CLIENT-COMPLETE":
			if o.Status != check.Skip || !strings.Contains(o.Why, "CLIENT-RESUME") {
				t.Errorf("CLIENT-COMPLETE %s %q, want SKIP deferring to CLIENT-RESUME", o.Status, o.Why)
			}
		}
	}
}
