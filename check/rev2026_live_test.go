package check

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// record2026 records the reference pair of the 2026-07-28 revision over
// Streamable HTTP on 127.0.0.1, through the recording proxy: the
// reference client's calls (a task polled to completed, one asking for
// input through tasks/get and tasks/update, one failing with a JSON-RPC
// error, one completed with isError, one cancelled), and requests the
// client never makes on its own, sent as a conforming client would (a
// tasks/get of the completed task, of an unknown task, tasks/result and
// tasks/list, an Mcp-Name that disagrees with the body, GET and DELETE);
// then a call without the tasks extension, one followed by
// subscriptions/listen, a tasks/get without the extension, and a call
// asked for input by a multi round-trip request before its task.
// Nothing waits on time but the tools themselves: each call runs to its
// end, however slow the machine.
func record2026(t *testing.T) []traces.Record {
	t.Helper()
	srv := listen2026(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	proxyURL, stop := recordVia(t, ctx, srv.URL)

	conn, err := client.New(nil).ConnectStateless(ctx, &streamhttp.ClientTransport{URL: proxyURL, Revision: mcp.Revision20260728})
	if err != nil {
		t.Fatal(err)
	}
	// call runs a call to its end; fails says it ends with an error (a
	// failed task, a cancelled call).
	call := func(o client.StatelessCallOptions, fails bool) *client.StatelessResult {
		t.Helper()
		res, err := conn.CallTool(ctx, o)
		if (err != nil) != fails || res == nil || (res.TaskID == "") != o.NoTasks {
			t.Fatalf("%s: %+v, %v; want a task, error %v", o.Name, res, err, fails)
		}
		return res
	}
	raw := func(id int, method, fields string, edit func(http.Header)) {
		t.Helper()
		body, h := request2026(t, id, method, fields)
		if edit != nil {
			edit(h)
		}
		send(t, ctx, http.MethodPost, proxyURL, body, h)
	}
	// The input is answered after one more look at the task, so that it
	// is seen input_required twice.
	var asking string
	noteTask := func(e client.Event) {
		if e.Kind == client.EventTaskCreated {
			asking = e.TaskID
		}
	}
	accept := func(string, rev.InputRequest) (json.RawMessage, error) {
		raw(900, tasks.MethodGet, `"taskId":"`+asking+`"`, nil)
		return json.RawMessage(`{"action":"accept","content":{"confirm":true,"name":"Ada"}}`), nil
	}
	done := call(client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 0.05, "label": "x"}}, false)
	call(client.StatelessCallOptions{Name: server.ToolConfirmDelete, Args: map[string]any{}, Answer: accept, OnEvent: noteTask}, false)
	call(client.StatelessCallOptions{Name: server.ToolProtocolErrorJob, Args: map[string]any{}}, true)
	call(client.StatelessCallOptions{Name: server.ToolFailingJob, Args: map[string]any{}}, false)
	// A long task cancelled as soon as it exists.
	cancelOnceCreated(t, ctx, conn)

	raw(901, tasks.MethodGet, `"taskId":"`+done.TaskID+`"`, nil)
	raw(902, tasks.MethodGet, `"taskId":"00000000-0000-4000-8000-000000000000"`, nil)
	raw(903, "tasks/result", `"taskId":"`+done.TaskID+`"`, nil)
	raw(904, "tasks/list", ``, nil)
	raw(905, tasks.MethodGet, `"taskId":"`+done.TaskID+`"`, func(h http.Header) { h.Set(rev.HeaderName, "someone-else") })
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		h := http.Header{}
		h.Set(rev.HeaderProtocolVersion, string(mcp.Revision20260728))
		send(t, ctx, m, proxyURL, "", h)
	}
	// A call that does not declare the tasks extension, one followed by
	// push (subscriptions/listen, notifications/tasks), and a tasks/get
	// that does not declare the extension either.
	call(client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 0.01}, NoTasks: true}, false)
	call(client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 0.05}, Listen: true}, false)
	body, h := request2026(t, 906, tasks.MethodGet, `"taskId":"`+done.TaskID+`"`)
	send(t, ctx, http.MethodPost, proxyURL, strings.Replace(body, `"extensions":{"io.modelcontextprotocol/tasks":{}}`, `"elicitation":{"form":{}}`, 1), h)
	// A call whose input is asked by a multi round-trip request
	// (resultType input_required) before its task is made.
	call(client.StatelessCallOptions{Name: server.ToolWithTask, Args: map[string]any{}, Answer: func(string, rev.InputRequest) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
	}}, false)
	conn.Close()
	return stop()
}

// listen2026 starts the reference server of 2026-07-28 over HTTP on
// 127.0.0.1, with pollIntervalMs 100, until the test ends.
func listen2026(t *testing.T) *refserver.HTTP {
	t.Helper()
	srv, err := refserver.Listen(&refserver.Options{
		Server: &server.Options{PollInterval: 100 * time.Millisecond},
		HTTP:   &streamhttp.Options{Logger: slog.New(slog.DiscardHandler)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// cancelOnceCreated makes a long call and cancels it as soon as its task
// exists: the call's context ends when the client has the task's id, and
// the client cancels it with tasks/cancel (no timer: the task exists
// before it is cancelled, however slow the machine).
func cancelOnceCreated(t *testing.T, ctx context.Context, conn *client.Stateless) {
	t.Helper()
	cctx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	cancelled, err := conn.CallTool(cctx, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 60},
		OnEvent: func(e client.Event) {
			if e.Kind == client.EventTaskCreated {
				cancelCall()
			}
		}})
	if cancelled == nil || cancelled.TaskID == "" || !cancelled.Cancelled {
		t.Fatalf("cancelled call: %+v, %v; want a task the client cancelled", cancelled, err)
	}
}

// recordVia starts the recording proxy in front of upstream, on
// 127.0.0.1, and returns its URL and stop, which ends the recording and
// returns its records.
func recordVia(t *testing.T, ctx context.Context, upstream string) (string, func() []traces.Record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.trace")
	w, err := traces.Create(path, traces.Header{Command: []string{"test"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream)
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pctx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- p.Serve(pctx, ln) }()
	return "http://" + ln.Addr().String() + streamhttp.DefaultPath, func() []traces.Record {
		t.Helper()
		stopServe()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		tr, err := traces.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		var recs []traces.Record
		for rec, err := range tr.Records() {
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rec)
		}
		return recs
	}
}

// meta2026 is the per-request _meta of a client that declares the tasks
// extension.
const meta2026 = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// request2026 builds a 2026-07-28 request and its headers as a conforming
// client sets them.
func request2026(t *testing.T, id int, method, fields string) (string, http.Header) {
	t.Helper()
	params := `{` + fields
	if fields != "" {
		params += ","
	}
	params += `"_meta":` + meta2026 + `}`
	h := http.Header{}
	if err := rev.SetHeaders(h, method, json.RawMessage(params), rev.ProtocolVersion, rev.CoreNameRules().With(tasks.NameRules())); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": json.RawMessage(params)})
	return string(body), h
}

// send sends one HTTP request and reads its answer to the end.
func send(t *testing.T, ctx context.Context, method, u, body string, h http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
}

// rules2026 are the rules of the 2026-07-28 revision, of sides (every
// side when none is named).
func rules2026(sides ...Side) []string {
	var ids []string
	for _, r := range Catalog() {
		if r.Revision == Revision20260728 && (len(sides) == 0 || slices.Contains(sides, r.Side)) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// TestLive2026Trace: a trace of the reference pair of 2026-07-28, recorded
// over HTTP, passes every rule of that revision, and no rule of 2025-11-25
// judges its records: each is SKIP, saying the trace holds none of its
// revision.
func TestLive2026Trace(t *testing.T) {
	recs := record2026(t)
	v, err := Check(recordSeq(recs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs := failures(v); len(fs) > 0 {
		t.Errorf("the reference pair fails %v:\n%s", fs, verdictText(v))
	}
	// The reference server never breaks a stream nor sends an unknown
	// resultType: the client rules that need one are shown by
	// TestLive2026ClientTrace.
	misbehaved := map[string]bool{RuleClient2663NewID.String(): true, RuleClient2663ResultType.String(): true}
	for _, r := range v.Rules {
		switch {
		case misbehaved[r.Rule.ID] && r.Status == Skip:
		case r.Rule.Revision == Revision20260728 && r.Status != Pass:
			t.Errorf("%s is %s, want PASS (%s)", r.Rule.ID, r.Status, r.Why)
		case r.Rule.Revision != Revision20260728 && (r.Status != Skip || !strings.Contains(r.Why, "the trace holds only 2026-07-28 records")):
			t.Errorf("%s (of %s) is %s (%s), want SKIP: the trace holds only 2026-07-28 records", r.Rule.ID, r.Rule.Revision, r.Status, r.Why)
		}
	}
	if r, _ := v.Result(RuleS2663AckEmpty.String()); r.Checked < 2 {
		t.Errorf("S2663-ACK-EMPTY judged %d acknowledgements, want the tasks/update's and the tasks/cancel's", r.Checked)
	}
	if t.Failed() {
		t.Log(verdictText(v))
	}
	if *update {
		writeLive2026(t, "TestLive2026Trace", "rev2026", "the reference pair of 2026-07-28 over HTTP (record2026 in rev2026_live_test.go): tasks polled to completed, input_required, failed, completed with isError, cancelled; tasks/get after the end and of an unknown id, tasks/result, tasks/list, an Mcp-Name that disagrees, GET and DELETE; a call without the extension, one followed by subscriptions/listen, a tasks/get without the extension, a multi round-trip before a task", recs)
	}
}

// writeLive2026 writes the records of a live test, trimmed, as the pass
// fixture testdata/pass/NAME.jsonl, saying in its header what it shows.
func writeLive2026(t *testing.T, test, name, purpose string, recs []traces.Record) {
	h := traces.Header{FormatVersion: 3, TasksimVersion: "dev", Command: []string{"go", "test", "./check", "-run", test, "-update"},
		Protocol: Revision20260728, Labels: []traces.Label{{Key: "recorder", Value: "http"}, {Key: "purpose", Value: purpose},
			{Key: "trimmed", Value: "trimmed to the records the checker reads (trim2026)"}}}
	writeFixture(t, filepath.Join("testdata", "pass", name+".jsonl"), h, trim2026(recs))
}

// trim2026 keeps what the checker reads of a recorded trace, as trim.py
// does for the older fixtures: no connection open and close, no wall
// clock, no request body ends, only the protocol's headers, SSE events
// without their raw bytes; offsets from the first record kept.
func trim2026(recs []traces.Record) []traces.Record {
	keep := map[string]bool{"host": true, "content-type": true, "mcp-session-id": true, "mcp-method": true, "mcp-name": true, "mcp-protocol-version": true, "allow": true}
	var out []traces.Record
	var t0 time.Duration
	for _, r := range recs {
		switch {
		case r.Kind == traces.KindConnOpen, r.Kind == traces.KindConnClose, r.Kind == traces.KindBodyEnd && r.Dir == traces.DirClientToServer:
			continue
		}
		r = r.Clone()
		if len(out) == 0 {
			t0 = r.Offset
		}
		r.Offset -= t0
		r.Wall = time.Time{}
		if r.HTTP != nil {
			var hs []traces.HeaderField
			for _, f := range r.HTTP.Header {
				if keep[strings.ToLower(f.Name)] {
					hs = append(hs, f)
				}
			}
			r.HTTP.Header, r.HTTP.Proto = hs, ""
		}
		if r.Kind == traces.KindSSEEvent {
			r.Raw = nil
		}
		out = append(out, r)
	}
	return out
}

// TestRevisionsApart: the rules of one revision never judge the records
// of the other. A trace of 2025-11-25 leaves every rule of 2026-07-28
// SKIP, and the committed trace of the 2026-07-28 pair every rule of
// 2025-11-25, each saying the trace holds none of its revision; records
// that name no revision are of Options.Revision.
func TestRevisionsApart(t *testing.T) {
	for _, tc := range []struct {
		fixture, rev, other string
		opts                *Options
	}{
		{"poll", Revision20260728, Revision20251125, nil},
		{"rev2026", Revision20251125, Revision20260728, nil},
	} {
		v, err := Check(fixtureSeq(t, tc.fixture, ""), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.Rules {
			if r.Rule.Revision != tc.rev {
				continue
			}
			if want := "(a rule of " + tc.rev + "; the trace holds only " + tc.other + " records)"; r.Status != Skip || !strings.HasSuffix(r.Why, want) {
				t.Errorf("%s: %s is %s (%s), want SKIP ending %q", tc.fixture, r.Rule.ID, r.Status, r.Why, want)
			}
		}
	}
	// The records of rev2026 without their revision are 2025-11-25's by
	// default, and 2026-07-28's with Options.Revision, as a header of
	// that protocol gives it.
	if got := RevisionOf(traces.Header{Protocol: "2025-06-18"}); got != "" {
		t.Errorf("RevisionOf(2025-06-18) = %q, want \"\"", got)
	}
	v, err := Check(fixtureSeq(t, "rev2026", "strip"), &Options{Revision: RevisionOf(traces.Header{Protocol: Revision20260728})})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := v.Result(RuleS2663ResultType.String()); r.Status != Pass {
		t.Errorf("records without a revision, Options.Revision 2026-07-28: %s is %s, want PASS", r.Rule.ID, r.Status)
	}
	v, err = Check(fixtureSeq(t, "rev2026", "strip"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := v.Result(RuleS2663ResultType.String()); r.Status != Skip {
		t.Errorf("records without a revision, no Options.Revision: %s is %s, want SKIP", r.Rule.ID, r.Status)
	}
}

// fixtureSeq returns the records of testdata/pass/NAME.jsonl; "strip"
// takes their revision away.
func fixtureSeq(t *testing.T, name, how string) iter.Seq2[traces.Record, error] {
	recs := readFixture(t, filepath.Join("testdata", "pass", name+".jsonl"))
	if how == "strip" {
		for i := range recs {
			recs[i].Revision = ""
		}
	}
	return recordSeq(recs)
}

// TestRevisionsMixed: a trace of a dual-era endpoint holds both
// revisions; each record is judged by the rules of its own. The records
// of a 2025-11-25 session and those of the 2026-07-28 pair, interleaved
// on connections of their own, give the verdicts each gives alone.
func TestRevisionsMixed(t *testing.T) {
	legacy := readFixture(t, filepath.Join("testdata", "pass", "poll.jsonl"))
	modern := readFixture(t, filepath.Join("testdata", "pass", "rev2026.jsonl"))
	var mixed []traces.Record
	for i := range max(len(legacy), len(modern)) {
		if i < len(legacy) {
			mixed = append(mixed, legacy[i])
		}
		if i < len(modern) {
			r := modern[i]
			r.Conn, r.Exchange = r.Conn+1000, r.Exchange+1000
			mixed = append(mixed, r)
		}
	}
	v, err := Check(recordSeq(mixed), nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs := failures(v); len(fs) > 0 {
		t.Errorf("the mixed trace fails %v:\n%s", fs, verdictText(v))
	}
	for _, id := range append(passFixtures["poll"], passFixtures["rev2026"]...) {
		if r, _ := v.Result(id); r.Status != Pass {
			t.Errorf("%s is %s in the mixed trace, want PASS (%s)", id, r.Status, r.Why)
		}
	}
}

// TestRev2026KeepsOnlyOpen: once every request of a trace is answered,
// nothing of them is kept; what stays is the tasks.
func TestRev2026KeepsOnlyOpen(t *testing.T) {
	c := New(nil)
	for _, r := range readFixture(t, filepath.Join("testdata", "pass", "rev2026.jsonl")) {
		c.Add(r)
	}
	v := c.rev26
	if len(v.reqs) != 0 || len(v.heads) != 0 || len(v.exReq) != 0 || len(v.listens) != 0 {
		t.Errorf("after the last answer %d requests, %d heads, %d exchanges, %d listens are kept, want none", len(v.reqs), len(v.heads), len(v.exReq), len(v.listens))
	}
	if len(v.tasks) == 0 {
		t.Error("no task kept")
	}
}
