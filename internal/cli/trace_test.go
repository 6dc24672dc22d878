package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/traces"
)

const (
	tCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_text","arguments":{"password":"hunter2"},"task":{"ttl":60000}}}`
	tSeg  = `{"jsonrpc":"2.0","id":1,"result":{"partial-content":[{"seqNr":1,"type":"text","text":"a"}],"isComplete":true,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-77"}}}}`
)

// writeSampleTrace writes a small HTTP trace and returns its path.
func writeSampleTrace(t *testing.T, stdioOnly bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.trace")
	start := time.Date(2026, 5, 3, 10, 30, 0, 0, time.UTC)
	w, err := traces.Create(path, traces.Header{TasksimVersion: "test", Command: []string{"tasksim", "record"},
		Protocol: "2025-11-25", Seed: 7, Labels: []traces.Label{{Key: "upstream", Value: "http://127.0.0.1:7070/mcp"}}},
		&traces.WriterOptions{Now: func() time.Time { return start }})
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
	sse := "id: 9\nevent: message\ndata: " + tSeg + "\n\n"
	recs := []traces.Record{
		{Offset: at(1), Conn: 1, Exchange: 1, Stream: "req:1", Dir: traces.DirClientToServer, Kind: traces.KindRequestHead,
			HTTP: &traces.HTTPHead{Method: "POST", URL: "/mcp", Proto: "HTTP/1.1", Header: []traces.HeaderField{
				{Name: "Authorization", Value: "Bearer tok-secret"}, {Name: "Content-Type", Value: "application/json"}}}},
		{Offset: at(2), Conn: 1, Exchange: 1, Stream: "req:1", Dir: traces.DirClientToServer, Kind: traces.KindBodyChunk, Raw: []byte(tCall)},
		{Offset: at(2), Conn: 1, Exchange: 1, Stream: "req:1", Dir: traces.DirClientToServer, Kind: traces.KindMessage, Raw: []byte(tCall)},
		{Offset: at(5), Conn: 1, Exchange: 1, Stream: "post:1", Dir: traces.DirServerToClient, Kind: traces.KindResponseHead,
			HTTP: &traces.HTTPHead{Proto: "HTTP/1.1", Status: 200, Header: []traces.HeaderField{{Name: "Content-Type", Value: "text/event-stream"}}}},
		{Offset: at(9), Conn: 1, Exchange: 1, Stream: "post:1", Dir: traces.DirServerToClient, Kind: traces.KindSSEEvent, Raw: []byte(sse),
			SSE: &traces.SSEFields{ID: "9", HasID: true, Event: "message", Data: tSeg}},
		{Offset: at(10), Conn: 1, Exchange: 1, Stream: "post:1", Dir: traces.DirServerToClient, Kind: traces.KindBodyEnd, Note: "eof"},
	}
	if stdioOnly {
		recs = []traces.Record{
			{Offset: at(1), Conn: 1, Stream: "stdin", Dir: traces.DirClientToServer, Kind: traces.KindStdioLine, Raw: []byte(tCall)},
			{Offset: at(3), Conn: 1, Stream: "stdout", Dir: traces.DirServerToClient, Kind: traces.KindStdioLine, Raw: []byte(tSeg)},
		}
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// variant writes a changed copy of the trace at path.
func variant(t *testing.T, path string, change func([]byte) []byte) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "variant.trace")
	if err := os.WriteFile(out, change(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func oneErrorLine(t *testing.T, stderr, want string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tasksim: ") || !strings.Contains(stderr, want) {
		t.Errorf("stderr %q: want one line mentioning %q", stderr, want)
	}
}

func TestTraceShow(t *testing.T) {
	path := writeSampleTrace(t, false)
	code, stdout, stderr := run(t, "", "trace", "show", path)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	if len(lines) != 3+1+6 {
		t.Fatalf("%d lines:\n%s", len(lines), stdout)
	}
	if !strings.Contains(lines[0], fmt.Sprintf("trace format %d · tasksim test", traces.FormatVersion)) || !strings.Contains(lines[0], "seed 7") {
		t.Errorf("header line %q", lines[0])
	}
	wantFields := map[int][]string{
		4: {"+0.001s", "1", "req:1", "c>s", "request-head", "POST", "/mcp"},
		6: {"+0.002s", "message", "tools/call", "1", "-", "-"},
		7: {"+0.005s", "post:1", "s>c", "response-head", "200", "text/event-stream"},
		8: {"+0.009s", "sse-event", "(response)", "1", "t-77", "seqNr=1", "complete=true", "event-id=9"},
		9: {"body-end", `"eof"`},
	}
	for i, want := range wantFields {
		got := strings.Fields(lines[i])
		for _, w := range want {
			if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+w+" ") {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	// Filters.
	code, stdout, _ = run(t, "", "trace", "show", path, "--kind", "sse-event,message")
	if code != ExitOK || strings.Count(stdout, "\n") != 3+1+2 {
		t.Errorf("--kind: exit %d\n%s", code, stdout)
	}
	code, _, stderr = run(t, "", "trace", "show", path, "--kind", "telepathy")
	if code != ExitUsage {
		t.Errorf("bad --kind: exit %d", code)
	}
	oneErrorLine(t, stderr, "telepathy")
	// stdin.
	data, _ := os.ReadFile(path)
	if code, stdout, _ = run(t, string(data), "trace", "show", "-"); code != ExitOK || !strings.Contains(stdout, "tools/call") {
		t.Errorf("show -: exit %d\n%s", code, stdout)
	}
}

func TestTraceShowJSON(t *testing.T) {
	path := writeSampleTrace(t, false)
	code, stdout, stderr := run(t, "", "trace", "show", path, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Header struct {
			Seed int64 `json:"seed"`
		} `json:"header"`
		Records []struct {
			Index uint64 `json:"index"`
			Kind  string `json:"kind"`
			RPC   *struct {
				TaskID string  `json:"taskId"`
				SeqNrs []int64 `json:"seqNrs"`
			} `json:"rpc"`
		} `json:"records"`
		Truncated any `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if got.Header.Seed != 7 || len(got.Records) != 6 || got.Records[4].Kind != "sse-event" ||
		got.Records[4].RPC.TaskID != "t-77" || got.Records[4].RPC.SeqNrs[0] != 1 || got.Truncated != nil {
		t.Errorf("%+v", got)
	}
}

func TestTraceStats(t *testing.T) {
	path := writeSampleTrace(t, false)
	code, stdout, stderr := run(t, "", "trace", "stats", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"records    6 over 10ms", "1 conns, 1 HTTP exchanges, 2 streams, 1 tasks",
		"methods    tools/call 1", "http       200 1", "1 seqNr segments"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stats lack %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = run(t, "", "trace", "stats", path, "--json")
	var got struct {
		Stats traces.Stats `json:"stats"`
	}
	if code != ExitOK || json.Unmarshal([]byte(stdout), &got) != nil || got.Stats.Records != 6 || got.Stats.Kinds["sse-event"] != 1 ||
		got.Stats.Statuses[200] != 1 || got.Stats.Tasks != 1 {
		t.Errorf("exit %d, %+v\n%s", code, got, stdout)
	}
}

func TestTraceVerify(t *testing.T) {
	path := writeSampleTrace(t, false)
	data, _ := os.ReadFile(path)
	v, _ := traces.Verify(strings.NewReader(string(data)))
	if !v.OK() {
		t.Fatal("sample trace is not whole")
	}
	code, stdout, _ := run(t, "", "trace", "verify", path)
	if code != ExitOK || !strings.Contains(stdout, ": ok; 6 whole records") {
		t.Errorf("whole: exit %d, %q", code, stdout)
	}

	// Cut in the middle of the last record (a killed recorder).
	cut := variant(t, path, func(b []byte) []byte { return b[:len(b)-5] })
	code, stdout, stderr := run(t, "", "trace", "verify", cut)
	if code != ExitFindings || !strings.Contains(stdout, "trace cut at record 5 (byte ") || !strings.Contains(stdout, "5 whole records") {
		t.Errorf("cut: exit %d, stdout %q", code, stdout)
	}
	oneErrorLine(t, stderr, "trace cut at record 5")
	code, stdout, _ = run(t, "", "trace", "verify", cut, "--json")
	var rep struct {
		OK        bool `json:"ok"`
		Records   int  `json:"records"`
		Truncated *struct {
			Index  int   `json:"index"`
			Offset int64 `json:"offset"`
		} `json:"truncated"`
	}
	if code != ExitFindings || json.Unmarshal([]byte(stdout), &rep) != nil || rep.OK || rep.Records != 5 || rep.Truncated == nil ||
		rep.Truncated.Index != 5 || rep.Truncated.Offset != v.Size-lastFrameSize(t, data) {
		t.Errorf("cut --json: exit %d, %+v\n%s", code, rep, stdout)
	}

	// A damaged checksum.
	bad := variant(t, path, func(b []byte) []byte { b[len(b)-3] ^= 1; return b })
	code, stdout, stderr = run(t, "", "trace", "verify", bad)
	if code != ExitFindings || !strings.Contains(stdout, "corrupt trace at record 5") || !strings.Contains(stdout, "checksum mismatch") {
		t.Errorf("corrupt: exit %d, %q", code, stdout)
	}
	oneErrorLine(t, stderr, "checksum mismatch")
}

// lastFrameSize is the size of the trace's last frame.
func lastFrameSize(t *testing.T, data []byte) int64 {
	t.Helper()
	v, err := traces.Verify(strings.NewReader(string(data[:len(data)-1])))
	if err != nil || v.Truncated == nil {
		t.Fatal(err)
	}
	return int64(len(data)) - v.Truncated.Offset
}

// Input that is not a readable trace is exit 2, one line, for every
// command that reads traces.
func TestTraceBadInput(t *testing.T) {
	path := writeSampleTrace(t, false)
	notTrace := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notTrace, []byte("these are my notes, not a trace\n"), 0o644)
	newer := variant(t, path, func(b []byte) []byte { b[len(traces.Magic)+1] = traces.FormatVersion + 1; return b })
	corrupt := variant(t, path, func(b []byte) []byte { b[len(b)-3] ^= 1; return b })
	inputs := []struct{ name, path, want string }{
		{"not a trace", notTrace, "not a tasksim trace"},
		{"newer version", newer, fmt.Sprintf("trace format version %d is newer", traces.FormatVersion+1)},
		{"missing", filepath.Join(t.TempDir(), "nope.trace"), "no such file"},
	}
	for _, in := range inputs {
		for _, cmd := range [][]string{{"show"}, {"stats"}, {"verify"}, {"export", "--format", "jsonl"}, {"redact", "-o", filepath.Join(t.TempDir(), "o.trace")}} {
			t.Run(in.name+"/"+cmd[0], func(t *testing.T) {
				args := append([]string{"trace", cmd[0], in.path}, cmd[1:]...)
				code, _, stderr := run(t, "", args...)
				if code != ExitUsage {
					t.Errorf("exit %d, want %d", code, ExitUsage)
				}
				oneErrorLine(t, stderr, in.want)
			})
		}
	}
	// A corrupt checksum: the readers stop with exit 2 (verify reports
	// it as a finding: TestTraceVerify).
	for _, cmd := range []string{"show", "stats", "export"} {
		t.Run("corrupt/"+cmd, func(t *testing.T) {
			code, _, stderr := run(t, "", "trace", cmd, corrupt)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			oneErrorLine(t, stderr, "corrupt trace at record 5")
		})
	}
}

// A cut trace is shown up to its last whole record, with a warning.
func TestTraceShowCut(t *testing.T) {
	path := writeSampleTrace(t, false)
	cut := variant(t, path, func(b []byte) []byte { return b[:len(b)-5] })
	code, stdout, stderr := run(t, "", "trace", "show", cut)
	if code != ExitOK || strings.Count(stdout, "\n") != 3+1+5 {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	if !strings.Contains(stderr, "warning: trace cut at record 5") {
		t.Errorf("stderr %q", stderr)
	}
}

func TestTraceExportImport(t *testing.T) {
	path := writeSampleTrace(t, false)
	dir := t.TempDir()
	jsonl1 := filepath.Join(dir, "a.jsonl")
	if code, _, stderr := run(t, "", "trace", "export", path, "--format", "jsonl", "-o", jsonl1); code != ExitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	back := filepath.Join(dir, "back.trace")
	code, _, stderr := run(t, "", "trace", "import", jsonl1, "-o", back)
	if code != ExitOK || !strings.Contains(stderr, "imported 6 records") {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(back)
	if string(a) != string(b) {
		t.Error("trace -> jsonl -> trace changed the trace")
	}
	// From stdin, then to stdout.
	data, _ := os.ReadFile(jsonl1)
	back2 := filepath.Join(dir, "back2.trace")
	if code, _, stderr := run(t, string(data), "trace", "import", "-o", back2); code != ExitOK {
		t.Fatalf("import from stdin: exit %d: %s", code, stderr)
	}
	code, stdout, _ := run(t, "", "trace", "export", back2)
	if code != ExitOK || stdout != string(data) {
		t.Errorf("export to stdout: exit %d\n%s", code, stdout)
	}

	// Bad JSONL: exit 2 naming the line.
	code, _, stderr = run(t, string(data)+"{\"kind\":\"nope\",\"dir\":\"-\"}\n", "trace", "import", "-o", filepath.Join(dir, "bad.trace"))
	if code != ExitUsage {
		t.Errorf("bad jsonl: exit %d", code)
	}
	oneErrorLine(t, stderr, "JSONL line 8: unknown kind")
	if _, err := os.Stat(filepath.Join(dir, "bad.trace")); err == nil {
		t.Error("a failed import left its output")
	}
	code, _, stderr = run(t, "", "trace", "import", jsonl1)
	if code != ExitUsage {
		t.Errorf("no -o: exit %d", code)
	}
	oneErrorLine(t, stderr, "-o FILE is required")
}

func TestTraceExportHAR(t *testing.T) {
	path := writeSampleTrace(t, false)
	code, stdout, stderr := run(t, "", "trace", "export", path, "--format", "har")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var har struct {
		Log struct {
			Version string `json:"version"`
			Entries []struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
				Response struct {
					Status  int `json:"status"`
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"response"`
				SSE []struct {
					Time float64 `json:"time"`
					ID   string  `json:"id"`
				} `json:"_sseEvents"`
			} `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal([]byte(stdout), &har); err != nil {
		t.Fatal(err)
	}
	if har.Log.Version != "1.2" || len(har.Log.Entries) != 1 {
		t.Fatalf("%+v", har)
	}
	e := har.Log.Entries[0]
	if e.Request.URL != "http://127.0.0.1:7070/mcp" || e.Response.Status != 200 || !strings.HasPrefix(e.Response.Content.Text, "id: 9\n") ||
		len(e.SSE) != 1 || e.SSE[0].ID != "9" || e.SSE[0].Time != 8 {
		t.Errorf("%+v", e)
	}
	code, _, stderr = run(t, "", "trace", "export", writeSampleTrace(t, true), "--format", "har")
	if code != ExitUsage {
		t.Errorf("stdio trace as HAR: exit %d", code)
	}
	oneErrorLine(t, stderr, "no HTTP exchanges")
	code, _, stderr = run(t, "", "trace", "export", path, "--format", "pcap")
	if code != ExitUsage {
		t.Errorf("bad format: exit %d", code)
	}
	oneErrorLine(t, stderr, `--format "pcap"`)
}

func TestTraceRedact(t *testing.T) {
	path := writeSampleTrace(t, false)
	out := filepath.Join(t.TempDir(), "shared.trace")
	code, _, stderr := run(t, "", "trace", "redact", path, "-o", out, "--json-path", "params.arguments.password", "--pattern", `t-(\d+)`)
	if code != ExitOK || !strings.Contains(stderr, "redacted 6 records") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, _ := run(t, "", "trace", "export", out)
	if code != ExitOK {
		t.Fatal(code)
	}
	for _, secret := range []string{"tok-secret", "hunter2", "t-77"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("%q survived redaction", secret)
		}
	}
	for _, want := range []string{`["Authorization","[redacted:1]"]`, `\"password\":\"[redacted:2]\"`, `"taskId":"t-[redacted:3]"`, `["redacted","tasksim trace redact"]`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("export lacks %s:\n%s", want, stdout)
		}
	}
	// Redacting again keeps the tokens and numbers new secrets after them.
	out2 := filepath.Join(t.TempDir(), "again.trace")
	if code, _, stderr := run(t, "", "trace", "redact", out, "-o", out2, "--pattern", "slow_text"); code != ExitOK {
		t.Fatalf("again: exit %d: %s", code, stderr)
	}
	_, stdout, _ = run(t, "", "trace", "export", out2)
	if !strings.Contains(stdout, `\"name\":\"[redacted:4]\"`) || !strings.Contains(stdout, `\"password\":\"[redacted:2]\"`) ||
		strings.Count(stdout, `["redacted","tasksim trace redact"]`) != 1 {
		t.Errorf("second redaction:\n%s", stdout)
	}

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no output", []string{"trace", "redact", path}, "-o FILE is required"},
		{"output is input", []string{"trace", "redact", path, "-o", path}, "is the input file"},
		{"bad pattern", []string{"trace", "redact", path, "-o", out2, "--pattern", "("}, "pattern"},
		{"bad path", []string{"trace", "redact", path, "-o", out2, "--json-path", "a[x]"}, "JSON path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != ExitUsage {
				t.Errorf("exit %d", code)
			}
			oneErrorLine(t, stderr, tc.want)
		})
	}
}

func TestTraceNeedsSubcommand(t *testing.T) {
	code, _, stderr := run(t, "", "trace")
	if code != ExitUsage {
		t.Errorf("exit %d", code)
	}
	oneErrorLine(t, stderr, "subcommand")
}
