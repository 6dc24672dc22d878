package load

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/refserver"
)

// referenceServer serves the reference server in-process.
func referenceServer(t *testing.T) string {
	t.Helper()
	url, _ := refserver.Start(t, nil)
	return url
}

func mustModes(t *testing.T, s string) []ModeSpec {
	t.Helper()
	m, err := ParseModes(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunModes: a short open-model run of every mode against the
// in-process reference server: counts per mode, answers, requests
// attributed per call, the interval log.
//
// The run is on the wall clock, so the test asserts only what holds
// however slow the machine is: counts, answers, causal lower bounds (a
// task of 4 chunks at least 20 ms apart ends no sooner than 80 ms after
// its start; a polled task needs the call, a poll and tasks/result). How
// soon a poll finds a result, how late a task starts and how many
// progress reports a run makes depend on the scheduler; pacing is tested
// without a clock in pacer_test.go.
func TestRunModes(t *testing.T) {
	url := referenceServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var hlog bytes.Buffer
	cfg := Config{
		Modes: mustModes(t, "poll:100ms,sse,partial,immediate"),
		Rate:  20, Tasks: 10, Sessions: 2, Seed: 7, Interval: Duration(100 * time.Millisecond),
		// A busy machine may start tasks late; that is not what this
		// test is about, so lateness must not stop the run.
		MaxLag: Duration(time.Hour),
		Shape:  Shape{Chunks: FixedInt(4), ChunkSize: FixedInt(16), Interval: mustDurationDist(t, "20ms..80ms")},
	}
	res, err := Run(ctx, cfg, Options{Targets: []Target{{URL: url, Label: "in-process"}}, Hlog: &hlog})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != StopCompleted || len(res.Modes) != 4 {
		t.Fatalf("stopped %q, %d modes", res.Stopped, len(res.Modes))
	}
	want := map[string]string{"poll:100ms": "task", "sse": "streaming", "partial": "task"}
	for _, m := range res.Modes {
		if m.Started != 10 || m.Completed != 10 || m.Failed != 0 {
			t.Errorf("%s: started %d, completed %d, failed %d (%v); want 10, 10, 0", m.Name, m.Started, m.Completed, m.Failed, m.Errors)
		}
		if w, ok := want[m.Name]; ok && m.Answers[w] != 10 {
			t.Errorf("%s: answers %v, want 10 %s", m.Name, m.Answers, w)
		}
		if m.Name == "immediate" && m.Answers["task"]+m.Answers["immediate"] != 10 {
			// slow_text is rarely done within the server's immediate
			// window (real time, 20 ms), so the server falls back to task
			// mode; but a server goroutine that waits past the task's end
			// answers immediate, rightly.
			t.Errorf("immediate: answers %v, want 10 task or immediate", m.Answers)
		}
		if m.TTR.Count != 10 || m.TTR.P50 < 80 {
			t.Errorf("%s: ttr %+v", m.Name, m.TTR)
		}
		if m.Discovery.Count != 10 {
			t.Errorf("%s: discovery count %d", m.Name, m.Discovery.Count)
		}
		if m.Wire.BytesPerTask <= 0 || m.Requests.Mean < 1 {
			t.Errorf("%s: wire %+v, requests %+v", m.Name, m.Wire, m.Requests)
		}
	}
	poll := res.Mode("poll:100ms")
	// Each poll:100ms task: tools/call, 1 + polls, tasks/result; no
	// notification stream.
	if poll.Requests.Mean < 3 || math.Abs(float64(poll.Wire.HTTPRequests)-poll.Requests.Mean*10) > 0.01 {
		t.Errorf("poll:100ms requests %+v, wire %+v: every request of the mode's sessions is a call's", poll.Requests, poll.Wire)
	}
	if part := res.Mode("partial"); part.Partials != 40 {
		t.Errorf("partial: %d partials, want 40", part.Partials)
	}
	if sse := res.Mode("sse"); sse.Segments != 40 {
		t.Errorf("sse: %d segments, want 40", sse.Segments)
	}
	if len(res.Intervals) == 0 {
		t.Error("no interval: the run's last one is always kept")
	}
	totals, err := HlogTotals(&hlog)
	if err != nil {
		t.Fatal(err)
	}
	if h := totals["sse.ttr"]; h == nil || h.TotalCount() != 10 {
		t.Errorf("hlog sse.ttr: %v", h)
	}
	var table bytes.Buffer
	if err := TableReporter(res)(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	if !strings.Contains(table.String(), "poll:100ms") {
		t.Errorf("table:\n%s", table.String())
	}
}

func mustDurationDist(t *testing.T, s string) DurationDist {
	t.Helper()
	d, err := ParseDurationDist(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRunNotMCP: a server that is not MCP is a TargetError before
// anything starts.
func TestRunNotMCP(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>hello</html>"))
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Run(ctx, Config{Modes: mustModes(t, "sse"), Rate: 10, Tasks: 1}, Options{Targets: []Target{{URL: ts.URL}}})
	var te *TargetError
	if res != nil || !errors.As(err, &te) {
		t.Fatalf("result %v, error %v: want a *TargetError", res, err)
	}
	t.Log(err)
}

// TestRunErrorSamples: a server that drops the connection of every
// tools/call fails each task with a transport error, and the result keeps
// the first one's message beside the count, in the JSON and the table.
func TestRunErrorSamples(t *testing.T) {
	target, err := neturl.Parse(referenceServer(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&neturl.URL{Scheme: target.Scheme, Host: target.Host})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			_ = conn.Close()
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := Config{Modes: mustModes(t, "sse"), Rate: 20, Tasks: 3, Sessions: 1, MaxLag: Duration(time.Hour),
		Shape: Shape{Chunks: FixedInt(2), ChunkSize: FixedInt(16), Interval: mustDurationDist(t, "10ms")}}
	res, err := Run(ctx, cfg, Options{Targets: []Target{{URL: ts.URL + target.Path}}})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Mode("sse")
	if m.Failed != 3 || m.Errors[ErrKindTransport] != 3 {
		t.Fatalf("failed %d, errors %v; want 3 transport errors", m.Failed, m.Errors)
	}
	sample := m.ErrorSamples[ErrKindTransport]
	if !strings.Contains(sample, "EOF") {
		t.Errorf("transport error sample %q: want the dropped connection's EOF", sample)
	}
	var table bytes.Buffer
	if err := TableReporter(res)(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "first transport error: "+sample) {
		t.Errorf("table without the error sample:\n%s", table.String())
	}
}
