package sim

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/sim/check"
)

// inProcessClient is the reference client as a client under test, with
// bugs planted; it prints the result as tasksim call does.
func inProcessClient(bugs client.Bugs) ClientTarget {
	return ClientTarget{Run: func(ctx context.Context, url, _ string) (string, error) {
		tr := &streamhttp.ClientTransport{URL: url, NoResume: bugs.NoResume}
		s, err := client.New(&client.Options{Bugs: bugs}).Connect(ctx, tr)
		if err != nil {
			return "", err
		}
		defer s.Close()
		res, err := s.CallTool(ctx, client.CallOptions{Name: "slow_text", Args: map[string]any{"chunks": 5, "intervalMs": 60, "chunkSize": 12}, Mode: client.ModeStreaming})
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

func TestClientSuiteReferenceClient(t *testing.T) {
	res, err := RunClientSuite(context.Background(), inProcessClient(client.Bugs{}), &SuiteOptions{TraceDir: traceDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Scenarios {
		if r.Status != check.Pass {
			t.Errorf("%s: %s %s", r.Name, r.Status, r.Why)
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
}

func TestClientSuitePlantedBugs(t *testing.T) {
	cases := []struct {
		name string
		bugs client.Bugs
		want string
	}{
		{"no dedup", client.Bugs{NoDedup: true}, "CLIENT-DEDUP"},
		{"no resume", client.Bugs{NoResume: true}, "CLIENT-RESUME"},
		{"polls faster than pollInterval", client.Bugs{IgnorePollInterval: true}, "CLIENT-POLL-INTERVAL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := RunClientSuite(context.Background(), inProcessClient(tc.bugs), &SuiteOptions{TraceDir: traceDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.FailedRules(); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("failed rules %v, want exactly [%s]\n%s", got, tc.want, describe(res))
			}
		})
	}
}

// TestClientSuiteNeverConnects: a client that never connects fails every
// scenario with that reason, never passes.
func TestClientSuiteNeverConnects(t *testing.T) {
	res, err := RunClientSuite(context.Background(), ClientTarget{Command: []string{"true"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Scenarios {
		if r.Status != check.Fail || !strings.Contains(r.Why, "never connected") {
			t.Errorf("%s: %s %q, want FAIL: never connected", r.Name, r.Status, r.Why)
		}
	}
}
