package cli

import (
	"context"
	"encoding/json"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/plant"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/sim/suite"
	"github.com/tasksim/tasksim/traces"
)

// bugTrace is a trace of the corpus (sim/replay/testdata/bugs).
func bugTrace(name string) string {
	return filepath.Join("..", "..", "sim", "replay", "testdata", "bugs", name+".trace")
}

// oneLine reports whether an error output is one line.
func singleLine(s string) bool {
	return strings.Count(strings.TrimSpace(s), "\n") == 0 && strings.TrimSpace(s) != ""
}

func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	notTrace := filepath.Join(dir, "notes.txt")
	os.WriteFile(notTrace, []byte("hello, not a trace\n"), 0o644)
	good := bugTrace("any-origin")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"not a trace", []string{"replay", notTrace, "--server", "http://127.0.0.1:1/mcp"}, ExitUsage, "not a tasksim trace"},
		{"missing file", []string{"replay", filepath.Join(dir, "nope.trace"), "--server", "http://127.0.0.1:1/mcp"}, ExitUsage, "no such file"},
		{"no target", []string{"replay", good}, ExitUsage, "give one of --server"},
		{"two targets", []string{"replay", good, "--server", "http://x/mcp", "--server-cmd", "x"}, ExitUsage, "give one of --server"},
		{"bad speed", []string{"replay", good, "--server", "http://127.0.0.1:1/mcp", "--speed", "fast"}, ExitUsage, "--speed"},
		{"bad fault", []string{"replay", good, "--server", "http://127.0.0.1:1/mcp", "--fault", "gremlins"}, ExitUsage, "--fault"},
		{"HTTP trace to a stdio server", []string{"replay", good, "--server-cmd", "true"}, ExitUsage, "replay it against --server URL"},
		{"unreachable server", []string{"replay", good, "--server", "http://127.0.0.1:1/mcp"}, ExitRuntime, "cannot reach the target"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) || !singleLine(stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d, one line with %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

// TestReplayBugTraceNamesFirstDifference: the corpus trace of a server
// numbering seqNr from 0, replayed against the reference server over
// HTTP, reports the first message with a seqNr as the divergence, with
// both sides, and exits 1; --record keeps the replay's trace, in which
// the fixed server passes S1905-SEQNR.
func TestReplayBugTraceNamesFirstDifference(t *testing.T) {
	path := bugTrace("seqnr-from-zero")
	first := firstRecord(t, path, func(r traces.Record) bool { return r.RPC != nil && slices.Contains(r.RPC.SeqNrs, 0) })
	s := refserver.StartHTTP(t, &refserver.Options{})
	rec := filepath.Join(t.TempDir(), "replay.trace")
	js := filepath.Join(t.TempDir(), "replay.json")
	code, stdout, stderr := run(t, "", "replay", path, "--server", s.URL, "--speed", "max", "--record", rec, "--json", js)
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	var doc struct {
		Schema string `json:"schema"`
		Result struct {
			Trace      string `json:"trace"`
			Divergence struct {
				Record uint64 `json:"record"`
				Path   string `json:"path"`
			} `json:"divergence"`
		} `json:"result"`
	}
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("--json: %v\n%s", err, b)
	}
	var v any
	json.Unmarshal(b, &v)
	var bad []string
	snakeKeys(v, "$", &bad)
	if doc.Schema != "tasksim.replay/v1" || doc.Result.Trace != rec || doc.Result.Divergence.Record != first || len(bad) > 0 {
		t.Errorf("--json: schema %q, trace %q, divergence at %d (want %d), snake_case keys %v", doc.Schema, doc.Result.Trace, doc.Result.Divergence.Record, first, bad)
	}
	want := "first divergence at record " + strconv.FormatUint(first, 10) + " "
	for _, w := range []string{want, "seqNr: recorded 0, live 1", "recorded: {", "live:     {"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	if code, out, _ := run(t, "", "trace", "check", "--rule", "S1905-SEQNR", rec); code != 0 || !strings.Contains(out, "PASS  S1905-SEQNR") {
		t.Errorf("the replay's trace: trace check exit %d\n%s", code, out)
	}
}

func firstRecord(t *testing.T, path string, match func(traces.Record) bool) uint64 {
	t.Helper()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if match(rec) {
			return rec.Index
		}
	}
	t.Fatal("no such record")
	return 0
}

// TestReplayStdioReference: a trace of the reference pair over stdio (the
// tasksim binary's serve --stdio as a child), replayed against another
// such child, shows no divergence; a command that does not exist, or one
// that writes no message (true), cannot be reached (exit 3).
func TestReplayStdioReference(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asTasksimEnv, "1") // inherited by the children
	dir := t.TempDir()
	cmd := []string{exe, "serve", "--stdio"}
	if _, err := suite.RunSuite(context.Background(), suite.Target{Command: cmd}, &suite.SuiteOptions{Scenarios: []string{"sep1905-streaming"}, TraceDir: dir}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sep1905-streaming.trace")
	code, stdout, stderr := run(t, "", "replay", path, "--server-cmd", exe+" serve --stdio", "--speed", "max")
	if code != 0 || !strings.Contains(stdout, "no divergence") || strings.Contains(stdout, "compared 0 ") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, bad := range []string{filepath.Join(dir, "no-such-server"), "true"} {
		code, _, stderr = run(t, "", "replay", path, "--server-cmd", bad, "--wait", "2s")
		if code != ExitRuntime || !singleLine(stderr) || !strings.Contains(stderr, "cannot reach") {
			t.Errorf("--server-cmd %s: exit %d, %q", bad, code, stderr)
		}
	}
}

// recordCall records the reference client (tasksim call, a child
// process) calling the reference server through the HTTP recorder.
func recordCall(t *testing.T, exe string, callArgs ...string) string {
	t.Helper()
	s := refserver.StartHTTP(t, &refserver.Options{})
	path := filepath.Join(t.TempDir(), "call.trace")
	w, err := traces.Create(path, traces.Header{Command: []string{"tasksim", "call"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(s.URL)
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: p, ConnState: p.ConnState, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(ln) }()
	args := append(append([]string{"call"}, callArgs...), "--server", "http://"+ln.Addr().String()+"/mcp")
	c := exec.Command(exe, args...)
	c.Env = append(os.Environ(), asTasksimEnv+"=1")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("call: %v\n%s", err, out)
	}
	hs.Close()
	<-done
	p.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayClientCmd: the server half of a recorded call, served to the
// same client (tasksim call as a child, URL last), shows no divergence;
// served to a client that asks for something else, the divergence names
// the request and the parameter that differs.
func TestReplayClientCmd(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asTasksimEnv, "1")
	callArgs := []string{"--tool", "slow_text", "--args", `{"chunks":3,"intervalMs":20}`, "--mode", "streaming"}
	path := recordCall(t, exe, callArgs...)
	client := exe + " call --tool slow_text --args '{\"chunks\":3,\"intervalMs\":20}' --mode streaming --server"
	tmp := t.TempDir()
	code, stdout, stderr := run(t, "", "replay", path, "--client-cmd", client, "--record", filepath.Join(tmp, "same.trace"))
	if code != 0 || !strings.Contains(stdout, "no divergence") {
		_, show, _ := run(t, "", "trace", "show", path)
		t.Fatalf("same client: exit %d\n%s\n%s\nrecorded:\n%s", code, stdout, stderr, show)
	}
	other := exe + " call --tool slow_text --args '{\"chunks\":4,\"intervalMs\":20}' --mode streaming --server"
	code, stdout, stderr = run(t, "", "replay", path, "--client-cmd", other, "--speed", "max", "--record", filepath.Join(tmp, "other.trace"))
	if code != ExitFindings || !strings.Contains(stdout, "params.arguments.chunks: recorded 3, live 4") {
		t.Fatalf("other client: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestReplayHTML: replay --html draws the replay's own trace: against the
// reference, the divergence from the buggy recording is a note; against a
// server with the bug planted again, no divergence, and the rule the
// replay's trace fails is highlighted on its records.
func TestReplayHTML(t *testing.T) {
	path := bugTrace("seqnr-from-zero")
	ref := refserver.StartHTTP(t, &refserver.Options{})
	out := filepath.Join(t.TempDir(), "replay.html")
	code, stdout, stderr := run(t, "", "replay", path, "--server", ref.URL, "--speed", "max", "--html", out)
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	first := regexp.MustCompile(`first divergence at record \d+ \([^)]*\)`).FindString(stdout)
	if first == "" {
		t.Fatalf("no divergence in\n%s", stdout)
	}
	page, titles, viol := htmlRuns(t, out)
	if want := "replay of " + path + " against " + ref.URL; len(titles) != 1 || titles[0] != want {
		t.Fatalf("runs %q, want one, %q", titles, want)
	}
	if !strings.Contains(page, `<p class="tl-note">`+html.EscapeString(first)) || len(viol[0]) != 0 {
		t.Errorf("the page should note %q and highlight nothing (highlighted %v)", first, viol[0])
	}
	if !strings.Contains(page, `<tr class="tl-status-PASS"><td>S1905-SEQNR</td>`) {
		t.Error("the verdict table does not pass S1905-SEQNR")
	}

	// Task ids are mapped: a server that numbers them in sequence again
	// replays the sequential-ids trace with no divergence, but fails
	// TASK-ID-ENTROPY, on records the page highlights.
	buggy := refserver.StartHTTP(t, plant.MustNamed("sequential-ids").RefServer(nil))
	code, stdout, stderr = run(t, "", "replay", bugTrace("sequential-ids"), "--server", buggy.URL, "--speed", "max", "--html", out)
	if code != ExitFindings || !strings.Contains(stdout, "no divergence") {
		t.Fatalf("exit %d, want 1 with no divergence\n%s\n%s", code, stdout, stderr)
	}
	page, _, viol = htmlRuns(t, out)
	if !strings.Contains(page, `<p class="tl-note">no divergence</p>`) || len(viol) != 1 || len(viol[0]) == 0 {
		t.Errorf("want the note \"no divergence\" and the TASK-ID-ENTROPY findings highlighted, got highlighted %v", viol)
	}
	if !strings.Contains(page, `<tr class="tl-status-FAIL"><td>TASK-ID-ENTROPY</td>`) {
		t.Error("the verdict table does not fail TASK-ID-ENTROPY")
	}

	code, _, stderr = run(t, "", "replay", path, "--server", ref.URL, "--speed", "max", "--html", filepath.Join(t.TempDir(), "no", "such", "dir", "x.html"))
	if code != ExitRuntime || !singleLine(stderr) || !strings.Contains(stderr, "--html") {
		t.Errorf("unwritable --html: exit %d, stderr %q; want %d and one line", code, stderr, ExitRuntime)
	}
}

// TestReplayRecordNeverDestroys: replay --record FILE leaves an existing
// FILE as it was when the replay does not run (a target that cannot be
// reached, a client that never connects, bad flags), and replaces it,
// through a file beside it, once the target answered. No .partial file is
// left behind either way.
func TestReplayRecordNeverDestroys(t *testing.T) {
	good := bugTrace("any-origin")
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.trace")
	old := []byte("data\n")
	leftovers := func(t *testing.T) {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() != "keep.trace" {
				t.Errorf("left behind: %s", e.Name())
			}
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"unreachable server", []string{"--server", "http://127.0.0.1:1/mcp"}, ExitRuntime},
		{"client never connects", []string{"--client-cmd", "false"}, ExitRuntime},
		{"bad fault", []string{"--server", "http://127.0.0.1:1/mcp", "--fault", "gremlins"}, ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(keep, old, 0o600); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"replay", good, "--record", keep}, tc.args...)
			code, _, stderr := run(t, "", args...)
			if code != tc.code || !singleLine(stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d, one line", code, stderr, tc.code)
			}
			got, err := os.ReadFile(keep)
			if err != nil || string(got) != string(old) {
				t.Fatalf("%s after the replay: %q, %v; want it untouched", keep, got, err)
			}
			leftovers(t)
		})
	}
	t.Run("reached", func(t *testing.T) {
		if err := os.WriteFile(keep, old, 0o600); err != nil {
			t.Fatal(err)
		}
		s := refserver.StartHTTP(t, &refserver.Options{})
		code, stdout, stderr := run(t, "", "replay", good, "--server", s.URL, "--speed", "max", "--record", keep)
		if code != ExitOK && code != ExitFindings {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		r, err := traces.Open(keep)
		if err != nil {
			t.Fatalf("%s is not the replay's trace: %v", keep, err)
		}
		r.Close()
		if fi, err := os.Stat(keep); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want the mode it had, 0600", keep, fi.Mode(), err)
		}
		if !strings.Contains(stdout, "(trace "+keep+")") {
			t.Errorf("the report does not name %s:\n%s", keep, stdout)
		}
		leftovers(t)
	})
	t.Run("directory", func(t *testing.T) {
		code, _, stderr := run(t, "", "replay", good, "--server", "http://127.0.0.1:1/mcp", "--record", dir)
		if code != ExitUsage || !strings.Contains(stderr, "is a directory") || !singleLine(stderr) {
			t.Fatalf("exit %d, stderr %q; want exit 2, one line", code, stderr)
		}
	})
}
