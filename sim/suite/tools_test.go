package suite

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/traces"
)

// httpTarget serves ep over Streamable HTTP for the test's life.
func httpTarget(t *testing.T, ep mcp.Endpoint) Target {
	t.Helper()
	hs := httptest.NewServer(streamhttp.NewHandler(ep, nil))
	t.Cleanup(hs.Close)
	return Target{URL: hs.URL + "/mcp"}
}

// slowScenarios need a tool that works as long as asked, or one that
// fails: once they ran only with tasksim's slow_text.
var slowScenarios = []string{"task-lifecycle", "task-ttl", "sep1905-ttl-streaming", "sep1905-cancel-streaming", "sep1905-failure-streaming", "task-survives-stream", "sep1905-fallback"}

// TestSuiteForeignTools: against a server whose tools are not slow_text
// (plant.ForeignTools: other names, required arguments the suite does not
// know), the cancel, ttl, outlive-the-stream, failure and lifecycle
// scenarios run with the tools named by --slow-tool and --fail-tool and
// their templates, and pass; task-lifecycle cancels a working task.
// Without those flags they are SKIP, and task-lifecycle says which step
// it left out, never a silent PASS.
func TestSuiteForeignTools(t *testing.T) {
	target := httpTarget(t, server.New(&server.Options{Tools: plant.ForeignTools()}))
	t.Run("named", func(t *testing.T) {
		got := runOne(t, target, SuiteOptions{
			Scenarios: slowScenarios,
			Slow:      ToolSpec{Name: plant.ToolLongJob, Args: `{"steps":{{chunks}},"totalMs":{{durationMs}}}`},
			Fail:      ToolSpec{Name: plant.ToolBrokenJob, Args: `{"afterMs":40}`},
		})
		for _, name := range slowScenarios {
			r := got[name]
			if r.Status != check.Pass || len(r.LeftOut) > 0 {
				t.Errorf("%s: %s (%s), left out %q; want PASS, every step done\n%s", name, r.Status, r.Why, r.LeftOut, describe(&SuiteResult{Scenarios: []*ScenarioResult{r}}))
			}
		}
		// The terminal cancel, then the working one: its answer and a
		// tasks/get after.
		if o, _ := got["task-lifecycle"].Rule("TASK-CANCEL-TERMINAL"); o.Status != check.Pass || o.Checked < 3 {
			t.Errorf("task-lifecycle TASK-CANCEL-TERMINAL %s with %d checked, want PASS with the working task's cancel judged", o.Status, o.Checked)
		}
		for _, name := range []string{"sep1905-cancel-streaming", "sep1905-failure-streaming", "task-survives-stream"} {
			if o := got[name].Rules; !slices.ContainsFunc(o, func(o RuleOutcome) bool { return o.Status == check.Pass && o.Checked > 0 }) {
				t.Errorf("%s judged no rule: %+v", name, o)
			}
		}
	})
	t.Run("not named", func(t *testing.T) {
		got := runOne(t, target, SuiteOptions{Scenarios: slowScenarios})
		for _, name := range []string{"sep1905-ttl-streaming", "sep1905-cancel-streaming", "sep1905-fallback"} {
			if r := got[name]; r.Status != check.Skip || !strings.Contains(r.Why, "--slow-tool") {
				t.Errorf("%s: %s (%s), want SKIP naming --slow-tool", name, r.Status, r.Why)
			}
		}
		if r := got["sep1905-failure-streaming"]; r.Status != check.Skip || !strings.Contains(r.Why, "--fail-tool") {
			t.Errorf("sep1905-failure-streaming: %s (%s), want SKIP naming --fail-tool", r.Status, r.Why)
		}
		r := got["task-lifecycle"]
		if r.Status != check.Pass || len(r.LeftOut) != 1 || !strings.HasPrefix(r.LeftOut[0], "cancel a working task: ") || !strings.Contains(r.Why, "partial") {
			t.Errorf("task-lifecycle: %s (%s), left out %q; want PASS, partial, the working cancel left out with the reason", r.Status, r.Why, r.LeftOut)
		}
	})
}

// TestSuiteNoTasksCapability: a server that declares no
// tasks.requests.tools.call (plant.NoTasks, as the TypeScript SDK v2
// server) gets no task-augmented tools/call, with or without --tool: every
// scenario that would send one is SKIP with the reason, and no rule about
// tasks passes.
func TestSuiteNoTasksCapability(t *testing.T) {
	target := httpTarget(t, plant.NoTasks(server.New(nil)))
	for _, tc := range []struct {
		name string
		o    SuiteOptions
	}{
		{"tools picked", SuiteOptions{}},
		{"--tool", SuiteOptions{Tool: server.ToolSlowText, Args: `{"chunks":5}`}},
		{"every role named", SuiteOptions{Tool: server.ToolSlowText, Slow: ToolSpec{Name: server.ToolSleep}, Fail: ToolSpec{Name: server.ToolSlowText}, Stream: ToolSpec{Name: server.ToolSlowText}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.o.TraceDir = dir
			res, err := RunSuite(t.Context(), target, &tc.o)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Scenarios {
				switch r.Name {
				case "http-origin", "http-session", "http-resume":
					// They need no task (http-resume may stream a plain call).
				default:
					if r.Status != check.Skip || !strings.Contains(r.Why, "declares no tasks capability for tools/call") {
						t.Errorf("%s: %s (%s), want SKIP: the server declares no tasks capability for tools/call", r.Name, r.Status, r.Why)
					}
				}
				for _, o := range r.Rules {
					if o.Status == check.Pass && (strings.HasPrefix(o.ID, "TASK-") || strings.HasPrefix(o.ID, "S1905-") || strings.HasPrefix(o.ID, "S2679-")) {
						t.Errorf("%s: %s PASS without a task", r.Name, o.ID)
					}
				}
			}
			if n := taskAugmentedCalls(t, dir); n > 0 {
				t.Errorf("the traces hold %d tools/call with a task field", n)
			}
		})
	}
}

// taskAugmentedCalls counts the tools/call requests with a task field in
// the traces of dir.
func taskAugmentedCalls(t *testing.T, dir string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.trace"))
	if len(files) == 0 {
		t.Fatal("no trace kept")
	}
	n := 0
	for _, f := range files {
		r, err := traces.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range r.Records() {
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if rec.Kind != traces.KindMessage || rec.RPC == nil || rec.RPC.Method != mcp.MethodToolsCall {
				continue
			}
			var m struct {
				Params struct {
					Task json.RawMessage `json:"task"`
				} `json:"params"`
			}
			if json.Unmarshal(rec.Raw, &m) == nil && m.Params.Task != nil {
				n++
			}
		}
		r.Close()
	}
	return n
}

// TestSuiteIsolationNeedsATask: a server that declares tasks but answers
// a task-augmented call as a plain one made no task; the other session's
// errors about task "" show no isolation, so TASK-ISOLATION must not
// pass.
func TestSuiteIsolationNeedsATask(t *testing.T) {
	target := httpTarget(t, plant.IgnoreTaskField(server.New(nil)))
	r := runOne(t, target, SuiteOptions{Scenarios: []string{"task-isolation"}})["task-isolation"]
	if o, _ := r.Rule("TASK-ISOLATION"); o.Status == check.Pass || r.Status == check.Pass {
		t.Fatalf("%s (%s), TASK-ISOLATION %s with %d checked: passed with no task created", r.Status, r.Why, o.Status, o.Checked)
	}
	if !strings.Contains(r.Why, "answered without a task") {
		t.Errorf("why %q, want it to say no task was created", r.Why)
	}
}

// TestPickToolsForbidden: a tool named with --tool that declares no
// execution.taskSupport is never called as a task: every role that would
// is a skip naming it.
func TestPickToolsForbidden(t *testing.T) {
	p := &probeInfo{
		init: mcp.InitializeResult{Capabilities: server.New(nil).Capabilities()},
		tools: []mcp.Tool{
			{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "forbidden", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportForbidden}},
		},
	}
	for _, name := range []string{"plain", "forbidden"} {
		e := &Env{probe: p, tools: pickTools(p, &SuiteOptions{Tool: name, Args: `{"ms":{{durationMs}}}`, Slow: ToolSpec{Name: name}, Fail: ToolSpec{Name: name}})}
		for role, need := range map[string]func() (toolChoice, error){
			"task":   e.needTask,
			"stream": e.needStream,
			"slow":   func() (toolChoice, error) { return e.need(needs{slow: "x"}) },
			"fail":   func() (toolChoice, error) { return e.need(needs{fail: "x"}) },
		} {
			_, err := need()
			var skip *skipError
			if !errors.As(err, &skip) || !strings.Contains(skip.why, "tool "+name+" declares no execution.taskSupport") {
				t.Errorf("%s as %s: %v, want a skip naming its taskSupport", name, role, err)
			}
		}
	}
}

// TestPickSlowBySchema: without --slow-tool or slow_text, a task tool
// whose input schema has a duration in ms becomes the slow tool, its
// duration the template's {{durationMs}}; one capped below a minute, or
// not callable as a task, does not.
func TestPickSlowBySchema(t *testing.T) {
	task := &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	caps := server.New(nil).Capabilities()
	cases := []struct {
		name  string
		tools []mcp.Tool
		want  string // the slow tool's args for 2 chunks of 500 ms; "" none
	}{
		{"TypeScript SDK style", []mcp.Tool{{Name: "ts_slow", Execution: task, InputSchema: json.RawMessage(`{"type":"object","properties":{"delayMs":{"type":"number"},"text":{"type":"string"}},"required":["text"]}`)}}, `{"delayMs":1000,"text":"tasksim check"}`},
		{"capped", []mcp.Tool{{Name: "short", Execution: task, InputSchema: json.RawMessage(`{"properties":{"durationMs":{"type":"integer","maximum":5000}}}`)}}, ""},
		{"not a task tool", []mcp.Tool{{Name: "plain", InputSchema: json.RawMessage(`{"properties":{"durationMs":{"type":"integer"}}}`)}}, ""},
		{"a duration of another unit", []mcp.Tool{{Name: "secs", Execution: task, InputSchema: json.RawMessage(`{"properties":{"seconds":{"type":"integer"}}}`)}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := pickTools(&probeInfo{init: mcp.InitializeResult{Capabilities: caps}, tools: c.tools}, &SuiteOptions{})
			got := ""
			if ts.slow.why == "" {
				b, _ := json.Marshal(ts.slow.argsFor(2, 500, -1))
				got = string(b)
			}
			if got != c.want {
				t.Errorf("slow tool %q with %s (%s), want %s", ts.slow.name, got, ts.slow.why, c.want)
			}
		})
	}
}
