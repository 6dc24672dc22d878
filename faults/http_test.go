package faults

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/traces"
)

// sseEvents are the events of a recorded SEP-1905 streaming call: ids,
// segments with seqNr, a partial notification, a status notification, the
// final response; each as its exact bytes.
var sseEvents = func() []string {
	out := make([]string, len(recordedStream))
	for i, m := range recordedStream {
		out[i] = fmt.Sprintf("id: e%d\ndata: %s\n\n", i+1, m)
	}
	return out
}()

// ping is a keep-alive comment between events 2 and 3: no event, it
// passes wherever it is.
const ping = ": ping\n\n"

// sseStream writes the recorded stream, flushing after each event, and
// closes done when it returns.
func sseStream(done chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "9f2c")
		w.WriteHeader(http.StatusOK)
		for i, ev := range sseEvents {
			if _, err := io.WriteString(w, ev); err != nil {
				return
			}
			if i == 1 {
				io.WriteString(w, ping)
			}
			http.NewResponseController(w).Flush()
		}
	})
}

const callBody = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_text","task":{"ttl":60000}}}`

// P stands for the ping in an expected body.
const P = -1

// want builds the expected body: the events at idx in order (P: the
// ping), then tail.
func want(idx []int, tail string) string {
	var b strings.Builder
	for _, i := range idx {
		if i == P {
			b.WriteString(ping)
			continue
		}
		b.WriteString(sseEvents[i])
	}
	return b.String() + tail
}

// recordingClock fires every timer at once and keeps the durations asked.
type recordingClock struct {
	mu    sync.Mutex
	slept []time.Duration
}

func (c *recordingClock) Now() time.Time { return time.Unix(0, 0) }
func (c *recordingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	c.slept = append(c.slept, d)
	c.mu.Unlock()
	f()
	return stopped{}
}

type stopped struct{}

func (stopped) Stop() bool { return false }

// post sends the call through Handler(next) and returns the body read and
// how the read ended. A stalled response is read up to wantLen bytes, after
// next returned, then given up.
func post(t *testing.T, set *Set, opts *HTTPOptions, wantLen int, stall bool) (string, error) {
	t.Helper()
	done := make(chan struct{})
	ts := httptest.NewServer(Handler(sseStream(done), set, opts))
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(callBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if !stall {
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	<-done
	b := make([]byte, wantLen)
	_, err = io.ReadFull(resp.Body, b)
	if err != nil {
		t.Fatalf("stalled stream: read %q: %v", b, err)
	}
	cancel() // the client gives up
	more, err := io.ReadAll(resp.Body)
	return string(b) + string(more), err
}

// TestHTTPContract runs every fault that acts on an SSE stream through the
// middleware on the recorded stream: each changes exactly what it says,
// and every other byte passes unchanged, compared byte for byte.
func TestHTTPContract(t *testing.T) {
	all := []int{0, 1, P, 2, 3, 4}
	cases := []struct {
		spec  string
		want  string
		cut   bool // the client sees the connection break
		stall bool
	}{
		{spec: "", want: want(all, "")},
		{spec: "drop-sse-event:nth=2", want: want([]int{0, P, 2, 3, 4}, "")},
		{spec: "drop-sse-event:method=tools/call,nth=2", want: want([]int{0, P, 2, 3, 4}, "")},
		{spec: "drop-sse-event:stream=get", want: want(all, "")},
		{spec: "drop-partial", want: want([]int{0, P, 2, 3, 4}, "")},
		{spec: "drop-response:nth=3", want: want([]int{0, 1, P, 3, 4}, "")},
		{spec: "drop-response", want: want([]int{1, P, 3}, "")},
		{spec: "duplicate-seqnr:seqnr=2", want: want([]int{0, 1, P, 2, 2, 3, 4}, "")},
		{spec: "duplicate-seqnr:seq=0", want: want([]int{0, 1, 1, P, 2, 3, 4}, "")},
		{spec: "reorder:nth=1", want: want([]int{1, 0, P, 2, 3, 4}, "")},
		{spec: "reorder:nth=5", want: want(all, "")}, // released at the end
		{spec: "drop-sse-event:id=2,count=2", want: want([]int{1, P, 3, 4}, "")},
		{spec: "drop-sse-event:seqnr=3", want: want([]int{0, 1, P, 2, 3}, "")},
		{spec: "drop-sse-event:task=t1,nth=2", want: want([]int{0, P, 2, 3, 4}, "")},
		{spec: "disconnect:after=2", want: want([]int{0, 1}, ""), cut: true},
		{spec: "disconnect:nth=3,at=before", want: want([]int{0, 1, P}, ""), cut: true},
		{spec: "disconnect:nth=3,at=mid", want: want([]int{0, 1, P}, sseEvents[2][:len(sseEvents[2])/2]), cut: true},
		{spec: "stall:nth=4", want: want([]int{0, 1, P, 2}, ""), stall: true},
		{spec: "delay:d=1s,nth=2", want: want(all, "")},
		{spec: "server-restart:stream=post", want: want(all, "")}, // acts on what the client sends
		{spec: "http-status:stream=post", want: want(all, "")},    // acts on requests only
		{spec: "ttl-expiry", want: want(all, "")},                 // acts on requests only
		// The faults of 2026-07-28 let a stream of 2025-11-25 pass.
		{spec: "cut-request", want: want(all, "")},
		{spec: "cut-request:when=before-create", want: want(all, "")},
		{spec: "drop-task-notification", want: want(all, "")},
		{spec: "duplicate-task-notification", want: want(all, "")},
		{spec: "drop-listen-ack", want: want(all, "")},
		{spec: "wrong-replica", want: want(all, "")},
		{spec: "wrong-mcp-name", want: want(all, "")},
	}
	checkEveryFault(t, func(yield func(string) bool) {
		for _, tc := range cases {
			if !yield(tc.spec) {
				return
			}
		}
	})
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			set := setOf(t, tc.spec)
			clk := &recordingClock{}
			got, err := post(t, set, &HTTPOptions{PlaceOptions: PlaceOptions{Clock: clk}}, len(tc.want), tc.stall)
			if got != tc.want {
				t.Errorf("body differs\n got: %q\nwant: %q", got, tc.want)
			}
			if (err != nil) != (tc.cut || tc.stall) {
				t.Errorf("read ended with %v, want a broken connection: %v", err, tc.cut || tc.stall)
			}
			if strings.HasPrefix(tc.spec, "delay") && fmt.Sprint(clk.slept) != "[1s]" {
				t.Errorf("slept %v, want [1s]", clk.slept)
			}
			fired := int64(0)
			for _, c := range set.Counts() {
				fired += c.Fired
			}
			if changed := got != want(all, "") || err != nil; changed && fired == 0 {
				t.Error("the stream changed but no decision was recorded")
			}
		})
	}
}

// checkEveryFault fails unless every registered fault is among specs.
func checkEveryFault(t *testing.T, specs iter.Seq[string]) {
	t.Helper()
	seen := map[string]bool{}
	for s := range specs {
		name, _, _ := strings.Cut(s, ":")
		seen[name] = true
	}
	for _, k := range Builtin().Kinds() {
		if !seen[k.Name] {
			t.Errorf("fault %s is not in the contract table", k.Name)
		}
	}
}

// setOf is a set of the fault spec, seeded 1; with spec "", a set of no
// faults.
func setOf(tb testing.TB, spec string) *Set {
	tb.Helper()
	if spec == "" {
		return NewSet(1)
	}
	b, err := Builtin().Parse(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return NewSet(1, b)
}

// TestHTTPSplitsAnyWrites: events written in odd pieces, with CRLF and CR
// line endings, pass byte-exact and are acted on whole.
func TestHTTPSplitsAnyWrites(t *testing.T) {
	stream := "id: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\r\n\r\n" +
		": c\n\n" +
		"id: 2\rdata: {\"jsonrpc\":\"2.0\",\"method\":\"b\"}\r\r" +
		"\nid: 3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"c\"}\n\n" +
		"data: unfinished"
	for _, tc := range []struct{ spec, want string }{
		{"delay:d=0s", stream},
		{"drop-sse-event:nth=2", strings.Replace(stream, "id: 2\rdata: {\"jsonrpc\":\"2.0\",\"method\":\"b\"}\r\r\n", "", 1)},
		{"drop-sse-event:method=a", strings.Replace(stream, "id: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\r\n\r\n", "", 1)},
	} {
		for _, size := range []int{1, 2, 3, 7, 64, len(stream)} {
			t.Run(fmt.Sprintf("%s/%d", tc.spec, size), func(t *testing.T) {
				next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					for s := stream; s != ""; {
						n := min(size, len(s))
						io.WriteString(w, s[:n])
						s = s[n:]
					}
				})
				b, _ := Builtin().Parse(tc.spec)
				rec := httptest.NewRecorder()
				Handler(next, NewSet(1, b), nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil))
				if got := rec.Body.String(); got != tc.want {
					t.Errorf("got  %q\nwant %q", got, tc.want)
				}
			})
		}
	}
}

// TestHTTPRequests: faults on requests act before the server sees them.
func TestHTTPRequests(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		status   int
		cut      bool
		reached  bool
		body     string // what the server got
		restarts int
	}{
		{spec: "http-status", status: 503},
		{spec: "http-status:code=429,method=tools/call", status: 429},
		{spec: "http-status:method=tasks/get", status: 200, reached: true, body: callBody},
		{spec: "disconnect:stream=request", cut: true},
		{spec: "ttl-expiry:ttl=5ms", status: 200, reached: true, body: `{"id":2,"jsonrpc":"2.0","method":"tools/call","params":{"name":"slow_text","task":{"ttl":5}}}`},
		{spec: "server-restart:stream=request", status: 200, reached: true, body: callBody, restarts: 1},
		{spec: "delay:stream=request,d=3s", status: 200, reached: true, body: callBody},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			var got atomic.Value
			reached := false
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got.Store(string(b))
				reached = true
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{}}`)
			})
			b, err := Builtin().Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			restarts := 0
			ts := httptest.NewServer(Handler(next, NewSet(1, b), &HTTPOptions{PlaceOptions: PlaceOptions{Clock: &recordingClock{}, Restart: func() { restarts++ }}}))
			defer ts.Close()
			resp, err := ts.Client().Post(ts.URL, "application/json", strings.NewReader(callBody))
			if tc.cut {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("got %d, want a broken connection", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || reached != tc.reached || restarts != tc.restarts {
				t.Fatalf("status %d reached %v restarts %d, want %d %v %d", resp.StatusCode, reached, restarts, tc.status, tc.reached, tc.restarts)
			}
			if s, _ := got.Load().(string); s != tc.body {
				t.Errorf("server got %s\nwant %s", s, tc.body)
			}
		})
	}
}

// TestHTTPJSONBody: a JSON answer is one message.
func TestHTTPJSONBody(t *testing.T) {
	const answer = `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`
	for _, tc := range []struct {
		spec, want string
		cut        bool
	}{
		{"delay:d=1s", answer, false},
		{"drop-response", "", false},
		{"duplicate-seqnr:method=tools/call", answer, false}, // no seqNr in it
		{"reorder", answer, false},
		{"disconnect", "", true},
		{"disconnect:at=before,stream=post", "", true},
		{"disconnect:at=mid,stream=post", answer[:len(answer)/2], true},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
				io.WriteString(w, answer)
			})
			b, _ := Builtin().Parse(tc.spec)
			ts := httptest.NewServer(Handler(next, NewSet(1, b), &HTTPOptions{PlaceOptions: PlaceOptions{Clock: &recordingClock{}}}))
			defer ts.Close()
			resp, err := ts.Client().Post(ts.URL, "application/json", strings.NewReader(callBody))
			var body []byte
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if string(body) != tc.want || (err != nil) != tc.cut {
				t.Fatalf("body %q err %v, want %q cut %v", body, err, tc.want, tc.cut)
			}
		})
	}
}

// TestHTTPSameSeedSameDecisions: a probabilistic fault on the recorded
// stream takes the same decisions for the same seed across 100 runs.
func TestHTTPSameSeedSameDecisions(t *testing.T) {
	run := func(seed uint64) string {
		b, _ := Builtin().Parse("drop-sse-event:p=0.5")
		set := NewSet(seed, b)
		got, err := post(t, set, nil, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		return got + fmt.Sprint(set.Applied())
	}
	first := run(7)
	if first == want([]int{0, 1, P, 2, 3, 4}, "") {
		t.Fatal("p=0.5 dropped nothing of 5 events for seed 7")
	}
	for range 100 {
		if got := run(7); got != first {
			t.Fatalf("seed 7 decided differently:\n%s\n%s", first, got)
		}
	}
	seen := map[string]bool{}
	for s := uint64(1); s <= 8; s++ {
		seen[run(s)] = true
	}
	if len(seen) < 2 {
		t.Fatal("eight seeds took the same decisions")
	}
}

// TestHTTPSplitRequests: with SplitRequests, a request is numbered within
// its logical stream, not among all the session's requests, so its
// decisions do not depend on the order requests of one session arrive in.
func TestHTTPSplitRequests(t *testing.T) {
	b, err := Builtin().Parse("http-status:code=503,nth=1")
	if err != nil {
		t.Fatal(err)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	for _, tc := range []struct {
		name  string
		split func(*traces.RPCFields) string
		want  string // statuses of the requests, in order
	}{
		{"one stream per session", nil, "503 200 200"},
		{"a stream per request id", func(rpc *traces.RPCFields) string { return "id:" + rpc.ID }, "503 503 503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := NewSet(1, b)
			h := Handler(next, set, &HTTPOptions{SplitRequests: tc.split})
			var got []string
			for id := 1; id <= 3; id++ {
				rec := httptest.NewRecorder()
				body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tasks/get","params":{"taskId":"t"}}`
				req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				req.Header.Set("Mcp-Session-Id", "abc")
				h.ServeHTTP(rec, req)
				got = append(got, strconv.Itoa(rec.Code))
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("statuses %s, want %s", g, tc.want)
			}
			if tc.split != nil {
				if a := set.Applied(); len(a) != 3 || a[1].Target.Stream != "request:s1/id:2" || a[1].Target.N != 1 {
					t.Errorf("decisions %+v, want request:s1/id:2 #1 second", a)
				}
			}
		})
	}
}
