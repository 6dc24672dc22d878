package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/traces"
)

// misbehave is a front for the reference server of 2026-07-28 that
// misbehaves as the client rules need to be shown: it breaks the stream
// of the first tools/call whose arguments carry the label "cut" after its
// head, before any answer (the client must re-issue it with a new id),
// and gives the multi round-trip answer of test_tool_with_task a
// resultType the revision does not define (the client must not act on
// it). Everything else passes through.
func misbehave(t *testing.T, upstream string) *httptest.Server {
	t.Helper()
	u, _ := url.Parse(upstream)
	u.Path = "" // the front is asked the same path
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Header.Get("X-Test-Unknown") == "" {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body.Close()
		body = bytes.Replace(body, []byte(`"resultType":"input_required"`), []byte(`"resultType":"x-needs-input"`), 1)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	var cut atomic.Bool
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		switch {
		case bytes.Contains(body, []byte(`"label":"cut"`)) && cut.CompareAndSwap(false, true):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			// A keep-alive comment, so that the head passes every hop
			// before the stream breaks.
			_, _ = io.WriteString(w, ":\n\n")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case bytes.Contains(body, []byte(`"name":"`+server.ToolWithTask+`"`)) && !bytes.Contains(body, []byte(`"inputResponses"`)):
			r.Header.Set("X-Test-Unknown", "1")
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// recordClient2026 records the reference client of 2026-07-28 through the
// recording proxy, against misbehave in front of the reference server: a
// call whose stream breaks (re-issued with a new id, then its task polled
// to completed), a call whose task fails with a JSON-RPC error (its error
// read with tasks/get), a call whose multi round-trip answer has an
// unknown resultType (the call ends invalid), and a call cancelled once
// its task exists.
func recordClient2026(t *testing.T) []traces.Record {
	t.Helper()
	srv := listen2026(t)
	front := misbehave(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	proxyURL, stop := recordVia(t, ctx, front.URL+streamhttp.DefaultPath)
	conn, err := client.New(nil).ConnectStateless(ctx, &streamhttp.ClientTransport{URL: proxyURL, Revision: mcp.Revision20260728})
	if err != nil {
		t.Fatal(err)
	}
	var reissued int
	res, err := conn.CallTool(ctx, client.StatelessCallOptions{Name: server.ToolSlowCompute, Args: map[string]any{"seconds": 0.05, "label": "cut"},
		OnEvent: func(e client.Event) {
			if e.Kind == client.EventReissued {
				reissued++
			}
		}})
	if err != nil || res.TaskID == "" || reissued != 1 {
		t.Fatalf("cut call: %+v, %v, re-issued %d times; want a task after one re-issue", res, err, reissued)
	}
	if res, err := conn.CallTool(ctx, client.StatelessCallOptions{Name: server.ToolProtocolErrorJob, Args: map[string]any{}}); err == nil || res == nil || res.TaskID == "" {
		t.Fatalf("failing call: %+v, %v; want a task that failed", res, err)
	}
	_, err = conn.CallTool(ctx, client.StatelessCallOptions{Name: server.ToolWithTask, Args: map[string]any{}, Answer: func(string, rev.InputRequest) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
	}})
	if !errors.Is(err, client.ErrInvalidResult) {
		t.Fatalf("call answered with an unknown resultType: %v, want ErrInvalidResult", err)
	}
	cancelOnceCreated(t, ctx, conn)
	conn.Close()
	return stop()
}

// TestLive2026ClientTrace: the reference client of 2026-07-28, recorded
// over HTTP against a front that breaks a stream and sends an unknown
// resultType, passes every client rule of the revision, and the trace
// fails no rule at all.
func TestLive2026ClientTrace(t *testing.T) {
	recs := recordClient2026(t)
	v, err := Check(recordSeq(recs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs := failures(v); len(fs) > 0 {
		t.Errorf("the reference client fails %v:\n%s", fs, verdictText(v))
	}
	for _, id := range rules2026(Client) {
		// Its tasks end before a second tasks/get: the pace of polling
		// is judged on TestLive2026Trace's.
		if r, _ := v.Result(id); r.Status != Pass && (id != RuleClient2663PollInterval.String() || r.Status != Skip) {
			t.Errorf("%s is %s, want PASS (%s)", id, r.Status, r.Why)
		}
	}
	if t.Failed() {
		t.Log(verdictText(v))
	}
	if *update {
		writeLive2026(t, "TestLive2026ClientTrace", "rev2026-client", "the reference client of 2026-07-28 over HTTP against a misbehaving front (recordClient2026 in rev2026_client_live_test.go): a stream broken before its answer and the call re-issued, a task failed with a JSON-RPC error, an unknown resultType, a task cancelled", recs)
	}
}
