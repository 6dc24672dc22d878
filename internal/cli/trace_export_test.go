package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
