package recorder_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// inProcessProxy is a Proxy on a simulated clock in front of upstream,
// served in memory.
func inProcessProxy(t *testing.T, upstream http.Handler) *recorder.Proxy {
	t.Helper()
	sim := clock.NewSim(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w, err := traces.NewWriter(io.Discard, traces.Header{Command: []string{"test"}}, &traces.WriterOptions{Now: sim.Now, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := recorder.NewProxy(&url.URL{Scheme: "http", Host: streamhttp.MemoryHost}, w, &recorder.ProxyOptions{Transport: streamhttp.NewMemoryTransport(upstream), Clock: sim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(); _ = w.Close() })
	return p
}

// scopeWriter is the client side's http.ResponseWriter: it notes every
// call made from a goroutine outside the caller's clock.Confine scope,
// and closes flushed at the first flush.
type scopeWriter struct {
	h       http.Header
	mu      sync.Mutex
	outside []string
	flushed chan struct{}
	once    sync.Once
}

func (w *scopeWriter) note(call string) {
	buf := make([]byte, 1024)
	head, _, _ := bytes.Cut(buf[:runtime.Stack(buf, false)], []byte("\n"))
	if !bytes.Contains(head, []byte("tasksim.clock.scope")) {
		w.mu.Lock()
		w.outside = append(w.outside, call+" from "+string(head))
		w.mu.Unlock()
	}
}

func (w *scopeWriter) Header() http.Header         { return w.h }
func (w *scopeWriter) WriteHeader(int)             { w.note("WriteHeader") }
func (w *scopeWriter) Write(p []byte) (int, error) { w.note("Write"); return len(p), nil }
func (w *scopeWriter) Flush() {
	w.note("Flush")
	w.once.Do(func() { close(w.flushed) })
}

// TestProxyInProcessStaysInScope: on a simulated clock, the Proxy passes
// the head of an event stream with no event yet (a standalone GET) to the
// client from the handler's goroutine, inside the run's clock.Confine
// scope. Passed from a goroutine outside it (a wall-clock timer's, as
// httputil.ReverseProxy flushes), the head could reach the client while
// clock.Idle finds the run waiting, and the clock would move first at one
// run and not at the next.
func TestProxyInProcessStaysInScope(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	})
	p := inProcessProxy(t, upstream)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx, release := clock.Confine(ctx)
	defer release()
	rw := &scopeWriter{h: make(http.Header), flushed: make(chan struct{})}
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://"+streamhttp.MemoryHost+"/mcp", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.ServeHTTP(rw, req)
	}()
	<-rw.flushed
	cancel()
	<-done
	if len(rw.outside) > 0 {
		t.Errorf("the client's writer was called from outside the scope:\n%s", strings.Join(rw.outside, "\n"))
	}
	if got := rw.h.Get("Content-Type"); got != "text/event-stream" {
		t.Errorf("Content-Type %q", got)
	}
}

// TestProxyInProcessForwards: what a Proxy on a simulated clock passes
// each way: the request without its hop-by-hop headers, with the client's
// forwarding headers and query, for the upstream's host; the response without its
// hop-by-hop headers, with its body.
func TestProxyInProcessForwards(t *testing.T) {
	type seen struct {
		Method, Host, Query, Body string
		Header                    http.Header
	}
	var got seen
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h := r.Header.Clone()
		got = seen{Method: r.Method, Host: r.Host, Query: r.URL.RawQuery, Body: string(b), Header: h}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Connection", "X-Hop")
		w.Header().Set("X-Hop", "dropped")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("Mcp-Session-Id", "s1")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	p := inProcessProxy(t, upstream)
	hc := &http.Client{Transport: streamhttp.NewMemoryTransport(p)}
	req, err := http.NewRequest(http.MethodPost, "http://client.example/mcp?x=1", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connection", "X-Private")
	req.Header.Set("X-Private", "dropped")
	req.Header.Set("Proxy-Authorization", "Basic Zm9vOmJhcg==")
	req.Header.Set("X-Forwarded-For", "192.0.2.1")
	req.Header.Set("Mcp-Session-Id", "s1")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := seen{
		Method: http.MethodPost, Host: streamhttp.MemoryHost, Query: "x=1", Body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		Header: http.Header{
			"Content-Type":    {"application/json"},
			"X-Forwarded-For": {"192.0.2.1"},
			"Mcp-Session-Id":  {"s1"},
			"User-Agent":      {""},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("upstream saw (-want +got):\n%s", d)
	}
	if resp.StatusCode != http.StatusAccepted || string(body) != `{"ok":true}` {
		t.Errorf("client got %d %q", resp.StatusCode, body)
	}
	for _, k := range []string{"X-Hop", "Keep-Alive", "Connection"} {
		if v, ok := resp.Header[k]; ok {
			t.Errorf("client got hop-by-hop header %s: %q", k, v)
		}
	}
	if resp.Header.Get("Mcp-Session-Id") != "s1" {
		t.Errorf("client's header: %v", resp.Header)
	}
}
