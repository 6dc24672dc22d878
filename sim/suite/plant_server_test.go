package suite

import (
	"context"
	"slices"
	"testing"

	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
)

// TestSuitePlantedServerDecorators breaks the reference server from
// outside, one decorator of internal/plant at a time: the suite must fail
// exactly the rule that names the bug, and nothing else.
func TestSuitePlantedServerDecorators(t *testing.T) {
	cases := []struct {
		name      string
		wrap      func(mcp.Endpoint) mcp.Endpoint
		scenarios []string
		want      string
	}{
		{name: "task notifications leaked to every session", wrap: plant.LeakTaskNotifications, want: "TASK-ISOLATION"},
		{name: "seqNr repeated", wrap: plant.RepeatSeqNr, want: "S1905-SEQNR"},
		{name: "isComplete never sent", wrap: plant.NoIsComplete, want: "S1905-COMPLETE"},
		{name: "completed before the last segment", wrap: plant.CompleteEarly, want: "S1905-COMPLETE"},
		{name: "mode order ignored", wrap: plant.LastModeOnly, want: "S1905-MODE-SELECT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := refserver.StartHTTP(t, &refserver.Options{Endpoint: tc.wrap})
			res, err := RunSuite(context.Background(), Target{URL: s.URL}, &SuiteOptions{Scenarios: tc.scenarios, TraceDir: traceDir(t)})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.FailedRules(); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("failed rules %v, want exactly [%s]\n%s", got, tc.want, describe(res))
			}
		})
	}
}

// TestSuiteLateStatus: a correct server whose task status moves to
// completed a while after its response with isComplete: true (legal:
// SEP-1905 Case 3, "after which it MUST transition to completed") fails
// no rule. The suite must wait for the status the spec guarantees, not
// assume it moved with the stream, whatever the machine's speed.
func TestSuiteLateStatus(t *testing.T) {
	s := refserver.StartHTTP(t, &refserver.Options{Endpoint: plant.LateStatus})
	res, err := RunSuite(context.Background(), Target{URL: s.URL}, &SuiteOptions{Scenarios: []string{"sep1905-*", "http-resume"}, TraceDir: traceDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.FailedRules(); len(got) > 0 {
		t.Errorf("failed rules %v on a correct server, want none\n%s", got, describe(res))
	}
}
