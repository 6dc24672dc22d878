package replay

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// recording2026 records, through the recording proxy in front of a
// reference server, the 2026-07-28 requests a test sends.
type recording2026 struct {
	t     *testing.T
	path  string
	w     *traces.Writer
	p     *recorder.Proxy
	front *httptest.Server
	mcp   string // the endpoint's path
}

// startRecording2026 records in front of upstream, a fresh reference
// server when "".
func startRecording2026(t *testing.T, upstream string) *recording2026 {
	t.Helper()
	if upstream == "" {
		upstream = refserver.StartHTTP(t, &refserver.Options{}).URL
	}
	path := filepath.Join(t.TempDir(), "run.trace")
	w, err := traces.Create(path, traces.Header{Command: []string{"test"}, Protocol: rev.ProtocolVersion}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream)
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &recording2026{t: t, path: path, w: w, p: p, front: httptest.NewServer(p), mcp: u.Path}
}

// send sends one request, with the per-request _meta of a client that
// declares elicitation and the tasks extension, and returns its result.
func (r *recording2026) send(id, method, fields string) json.RawMessage {
	t := r.t
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"` + tasks.ExtensionID + `":{}}}}`
	params := json.RawMessage(`{` + fields + `,` + meta + `}`)
	req, _ := http.NewRequest(http.MethodPost, r.front.URL+r.mcp,
		strings.NewReader(`{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+string(params)+`}`))
	if err := rev.SetHeaders(req.Header, method, params, rev.ProtocolVersion, rev.CoreNameRules().With(tasks.NameRules())); err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
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

// finish ends the recording and returns the trace's path.
func (r *recording2026) finish() string {
	r.t.Helper()
	r.front.Close()
	if err := r.p.Close(); err != nil {
		r.t.Fatal(err)
	}
	if err := r.w.Close(); err != nil {
		r.t.Fatal(err)
	}
	return r.path
}

// record2026 records a 2026-07-28 task: a tools/call of sleep for an hour
// that the server runs as a task, then tasks/get of it (working, whenever
// it is asked), its task id in the body and in Mcp-Name. It returns the
// trace's path and the recorded task id.
func record2026(t *testing.T) (string, string) {
	t.Helper()
	rc := startRecording2026(t, "")
	var created tasks.CreateTaskResult
	if err := json.Unmarshal(rc.send("1", mcp.MethodToolsCall, `"name":"sleep","arguments":{"durationMs":3600000}`), &created); err != nil || created.TaskID == "" {
		t.Fatalf("tools/call: %+v %v, want a task", created, err)
	}
	rc.send("2", tasks.MethodGet, `"taskId":"`+created.TaskID+`"`)
	return rc.finish(), created.TaskID
}

// TestReplay2026MapsTaskIDs: a recorded 2026-07-28 task, replayed against
// a fresh reference server, which names its task otherwise, does not
// diverge: the task id binds from the flat CreateTaskResult's taskId, and
// tasks/get carries the live id in its body and in its Mcp-Name header,
// which the server checks against each other (-32020 otherwise).
func TestReplay2026MapsTaskIDs(t *testing.T) {
	path, recorded := record2026(t)
	s := refserver.StartHTTP(t, &refserver.Options{})
	o := &ReplayOptions{Speed: 1, Record: filepath.Join(t.TempDir(), "replay.trace")}
	res := replayFile(t, path, Target{URL: s.URL}, o)
	if res.Divergence != nil {
		t.Fatalf("divergence against the reference:\n%s", res.Divergence)
	}
	if res.Sent != 2 || res.Compared == 0 {
		t.Fatalf("sent %d, compared %d", res.Sent, res.Compared)
	}
	// The live tasks/get named the live task, in the body and the header.
	r, err := traces.Open(o.Record)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var live string
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.RPC != nil && rec.RPC.Type == "response" && rec.RPC.ResultType == "task":
			live = rec.RPC.TaskID
		case rec.Kind == traces.KindRequestHead:
			if m, _ := rec.HTTP.Get(rev.HeaderMethod); m == tasks.MethodGet {
				if name, _ := rec.HTTP.Get(rev.HeaderName); name != live || live == "" || live == recorded {
					t.Errorf("tasks/get Mcp-Name %q; live task %q, recorded %q", name, live, recorded)
				}
			}
		}
	}
}

func TestHeaderTask(t *testing.T) {
	m := newIDMap()
	m.bind(m.task, "t-1", "t-2")
	m.bind(m.task, "t-é", "t-3")
	m.bind(m.task, "a", "b c ")
	for _, tc := range []struct{ in, want string }{
		{"t-1", "t-2"},
		{"=?base64?dC3DqQ==?=", "t-3"},       // sent encoded: decoded, mapped
		{"a", "=?base64?YiBjIA==?="},         // the live id needs the encoding
		{"other", "other"},                   // not a task: as sent
		{"=?base64?%%%?=", "=?base64?%%%?="}, // malformed: as sent
	} {
		if got := m.headerTask(tc.in); got != tc.want {
			t.Errorf("headerTask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
