package cli

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// record2026 records a 2026-07-28 exchange with the reference server in
// memory through the recording proxy: a tools/call of instant that the
// server runs as a task, then tasks/get of that task. It returns the
// trace's path and the task id.
func record2026(t *testing.T) (string, string) {
	t.Helper()
	srv := server.New(nil)
	h := streamhttp.NewHandler(srv, &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() {
		h.Close()
		srv.Close()
	}()
	path := filepath.Join(t.TempDir(), "run.trace")
	w, err := traces.Create(path, traces.Header{Command: []string{"test"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := recorder.NewProxy(&url.URL{Scheme: "http", Host: streamhttp.MemoryHost}, w, &recorder.ProxyOptions{Transport: streamhttp.NewMemoryTransport(h)})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: streamhttp.NewMemoryTransport(p)}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + tasks.ExtensionID + `":{}}}}`
	send := func(id, method, fields string) json.RawMessage {
		t.Helper()
		params := json.RawMessage(`{` + fields + `,` + meta + `}`)
		req, _ := http.NewRequest(http.MethodPost, "http://"+streamhttp.MemoryHost+streamhttp.DefaultPath,
			strings.NewReader(`{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+string(params)+`}`))
		if err := rev.SetHeaders(req.Header, method, params, rev.ProtocolVersion, rev.CoreNameRules().With(tasks.NameRules())); err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		m, err := mcp.DecodeMessage(raw)
		if err != nil || m.Error != nil {
			t.Fatalf("%s: %s %v", method, raw, err)
		}
		return m.Result
	}
	var created tasks.CreateTaskResult
	if err := json.Unmarshal(send("1", mcp.MethodToolsCall, `"name":"instant","arguments":{}`), &created); err != nil || created.TaskID == "" {
		t.Fatalf("tools/call: %+v %v, want a task", created, err)
	}
	send("2", tasks.MethodGet, `"taskId":"`+created.TaskID+`"`)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, created.TaskID
}

// TestTraceShow2026 shows a recorded 2026-07-28 exchange: the routing
// headers on the request heads, resultType and the task id on the answers,
// the revision on every record of an exchange; --json carries them too.
func TestTraceShow2026(t *testing.T) {
	path, task := record2026(t)
	code, stdout, stderr := run(t, "", "trace", "show", path)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var heads, answers []string
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) < 5 || strings.HasPrefix(line, "#") || f[0] == "TIME":
		case f[4] == "request-head":
			heads = append(heads, line)
		case f[4] == "message" && f[3] == "s>c":
			answers = append(answers, line)
		}
		if len(f) > 1 && f[1] != "-" && f[0] != "TIME" && !strings.HasPrefix(line, "#") && !strings.Contains(line, " rev=2026-07-28") && f[4] != "conn-open" && f[4] != "conn-close" {
			t.Errorf("line without the revision: %q", line)
		}
	}
	want := func(lines []string, i int, words ...string) {
		t.Helper()
		if i >= len(lines) {
			t.Errorf("no line %d of %q", i, lines)
			return
		}
		for _, w := range words {
			if !strings.Contains(" "+strings.Join(strings.Fields(lines[i]), " ")+" ", " "+w+" ") {
				t.Errorf("line %q lacks %q", lines[i], w)
			}
		}
	}
	want(heads, 0, "POST", "/mcp", "mcp-method=tools/call", "mcp-name=instant", "rev=2026-07-28")
	want(heads, 1, "POST", "/mcp", "mcp-method=tasks/get", "mcp-name="+task, "rev=2026-07-28")
	want(answers, 0, "(response)", "1", task, "working", "resultType=task", "rev=2026-07-28")
	want(answers, 1, "(response)", "2", task, "resultType=complete", "rev=2026-07-28")

	code, stdout, _ = run(t, "", "trace", "show", path, "--json", "--kind", "message")
	if code != ExitOK {
		t.Fatalf("--json: exit %d", code)
	}
	var doc struct {
		Records []struct {
			Revision string `json:"revision"`
			RPC      struct {
				ID, TaskID, ResultType string
			} `json:"rpc"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range doc.Records {
		got = append(got, r.Revision+" "+r.RPC.ID+" "+r.RPC.TaskID+" "+r.RPC.ResultType)
	}
	wantJSON := []string{"2026-07-28 1  ", "2026-07-28 1 " + task + " task", "2026-07-28 2 " + task + " ", "2026-07-28 2 " + task + " complete"}
	if strings.Join(got, "|") != strings.Join(wantJSON, "|") {
		t.Errorf("--json messages %q, want %q", got, wantJSON)
	}
}
