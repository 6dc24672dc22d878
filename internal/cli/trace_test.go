package cli

import (
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

func TestTraceNeedsSubcommand(t *testing.T) {
	code, _, stderr := run(t, "", "trace")
	if code != ExitUsage {
		t.Errorf("exit %d", code)
	}
	oneErrorLine(t, stderr, "subcommand")
}
