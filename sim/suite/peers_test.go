package suite

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// Tests of what real peers taught the suite (docs/interop.md, "tasksim
// check against real peers"): each case here once misjudged a peer, or
// could not see what a peer got wrong.

// runOne runs the scenarios named against target and returns the results
// by name.
func runOne(t *testing.T, target Target, o SuiteOptions) map[string]*ScenarioResult {
	t.Helper()
	o.TraceDir = traceDir(t)
	res, err := RunSuite(context.Background(), target, &o)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ScenarioResult{}
	for _, r := range res.Scenarios {
		out[r.Name] = r
	}
	return out
}

// TestSuiteTaskSurvivesWithoutStreaming: against a server without
// SEP-1905, task-survives-stream judges the task whose creating request
// was answered with its CreateTaskResult: PASS on the reference server,
// WARN (that rule only: "Disconnection SHOULD NOT be interpreted as the
// client cancelling its request") when the task dies with the request.
func TestSuiteTaskSurvivesWithoutStreaming(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(http.Handler) http.Handler
		want check.Status
		// foreign: a server whose tools are not slow_text, the slow one
		// named as check --slow-tool does.
		foreign bool
	}{
		{"task outlives its request", func(h http.Handler) http.Handler { return h }, check.Pass, false},
		{"task cancelled with its request", plant.CancelWithRequest, check.Warn, false},
		{"task of another tool outlives its request", func(h http.Handler) http.Handler { return h }, check.Pass, true},
		{"task of another tool cancelled with its request", plant.CancelWithRequest, check.Warn, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &server.Options{NoModes: true, NoPartial: true}
			so := SuiteOptions{Scenarios: []string{"task-survives-stream"}}
			if tc.foreign {
				opts.Tools = plant.ForeignTools()
				so.Slow = ToolSpec{Name: plant.ToolLongJob, Args: `{"steps":{{chunks}},"totalMs":{{durationMs}}}`}
			}
			h := streamhttp.NewHandler(server.New(opts), nil)
			hs := httptest.NewServer(tc.wrap(h))
			t.Cleanup(hs.Close)
			got := runOne(t, Target{URL: hs.URL + "/mcp"}, so)["task-survives-stream"]
			o, _ := got.Rule("TASK-SURVIVES-REQUEST")
			if got.Status != tc.want || o.Status != tc.want || o.Checked == 0 {
				t.Fatalf("%s (%s), TASK-SURVIVES-REQUEST %s with %d checked, want %s", got.Status, got.Why, o.Status, o.Checked, tc.want)
			}
			if warned := got.Warned(); tc.want == check.Warn && (!slices.Equal(warned, []string{"TASK-SURVIVES-REQUEST"}) || len(got.Failed()) > 0) {
				t.Errorf("warned rules %v, failed %v, want only TASK-SURVIVES-REQUEST warned", warned, got.Failed())
			}
		})
	}
}

// TestSuiteTaskIDEntropySlowTool: the ids of six tasks do not wait for six
// results. The tool sleeps far longer than the scenario may last; had the
// scenario waited for the tasks, it would time out and fail.
func TestSuiteTaskIDEntropySlowTool(t *testing.T) {
	url, _ := refserver.Start(t, nil)
	got := runOne(t, Target{URL: url}, SuiteOptions{
		Scenarios: []string{"task-id-entropy"}, Tool: server.ToolSleep, Args: `{"durationMs":3600000}`, Timeout: time.Minute,
	})["task-id-entropy"]
	if o, _ := got.Rule("TASK-ID-ENTROPY"); got.Status != check.Pass || o.Checked < 6 {
		t.Fatalf("%s (%s), TASK-ID-ENTROPY %+v", got.Status, got.Why, o)
	}
}

// TestSuiteTTLKeptLonger: a server that still has a task past its ttl
// breaks no rule (a receiver MAY delete it): task-ttl is SKIP, not FAIL.
// The server's clock stands still, so its tasks never reach their ttl.
func TestSuiteTTLKeptLonger(t *testing.T) {
	frozen := clock.NewSim(time.Now())
	got := runOne(t, stdioTarget(&server.Options{Clock: frozen}), SuiteOptions{Scenarios: []string{"task-ttl"}, Tool: server.ToolSleep, Args: `{"durationMs":0}`})["task-ttl"]
	if got.Status != check.Skip || !strings.Contains(got.Why, "past its ttl") {
		t.Fatalf("%s (%s), want SKIP: the task is still there past its ttl", got.Status, got.Why)
	}
}

// TestTextNoContent: a result without content and one with an empty
// content list compare equal (a cancelled task's result, read twice).
func TestTextNoContent(t *testing.T) {
	if a, b := text(nil), text([]mcp.ContentBlock{}); a != b {
		t.Errorf("text(nil) %q, text([]) %q", a, b)
	}
	one := []mcp.ContentBlock{{Type: "text", Text: "x"}}
	if text(one) == text(nil) {
		t.Errorf("one block compares equal to none")
	}
}

// TestRequiredArgs: the arguments the suite makes for a tool whose input
// schema requires some, and the tools it cannot make them for.
func TestRequiredArgs(t *testing.T) {
	cases := []struct {
		name, schema, want, err string
	}{
		{"none required", `{"type":"object","properties":{"a":{"type":"string"}}}`, ``, ``},
		{"no schema", ``, ``, ``},
		{"server-everything's research query", `{"type":"object","properties":{"topic":{"type":"string"},"ambiguous":{"type":"boolean","default":false}},"required":["topic"]}`, `{"topic":"tasksim check"}`, ``},
		{"every simple kind", `{"properties":{"s":{"type":"string"},"i":{"type":"integer","minimum":3},"n":{"type":"number","maximum":0.5},"b":{"type":"boolean"},"e":{"enum":["x","y"]},"c":{"const":7},"d":{"type":"string","default":"dd"},"a":{"type":"array"},"o":{"type":["null","integer"]}},"required":["s","i","n","b","e","c","d","a","o"]}`,
			`{"a":[],"b":false,"c":7,"d":"dd","e":"x","i":3,"n":0.5,"o":1,"s":"tasksim check"}`, ``},
		{"what it cannot make", `{"properties":{"o":{"type":"object"},"p":{"type":"string","pattern":"^[0-9]+$"},"f":{"type":"string","format":"uri"},"l":{"type":"array","minItems":1},"x":{}},"required":["o","p","f","l","x","missing"]}`, ``, `o, p, f, l, x, missing`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := requiredArgs(json.RawMessage(c.schema))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if string(got) != c.want || gotErr != c.err {
				t.Errorf("got %s, error %q; want %s, error %q", got, gotErr, c.want, c.err)
			}
		})
	}
}

// TestSuitePicksRequiredArgs: a task tool with a required argument is
// called with one the suite made from its schema, not with {}, which the
// server would rightly refuse.
func TestSuitePicksRequiredArgs(t *testing.T) {
	p := &probeInfo{tools: []mcp.Tool{
		{Name: "needs_object", InputSchema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"object"}},"required":["o"]}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}},
		{Name: "research", InputSchema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
	}}
	ts := pickTools(p, &SuiteOptions{})
	if ts.task.name != "research" || string(ts.task.args) != `{"topic":"tasksim check"}` {
		t.Errorf("picked %q with %s, want research with a topic", ts.task.name, ts.task.args)
	}
	only := pickTools(&probeInfo{tools: p.tools[:1]}, &SuiteOptions{})
	if only.task.name != "" || !strings.Contains(only.task.why, "cannot make up (o)") {
		t.Errorf("picked %q (%s), want none: its argument o cannot be made up", only.task.name, only.task.why)
	}
}
