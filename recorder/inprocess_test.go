package recorder_test

import (
	"bufio"
	"bytes"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// TestProxyInProcess: a Proxy with a Clock, serving an upstream in
// memory, stamps every record with that clock, and records an SSE event
// before the client can read it: an event the client read is in the trace
// even when the client acts on it before the proxy's write returned.
func TestProxyInProcess(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sim := clock.NewSim(start)
	written := make(chan struct{})
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range []string{"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n", "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"} {
			_, _ = w.Write([]byte(ev))
			http.NewResponseController(w).Flush()
		}
		close(written)
	})
	var buf bytes.Buffer
	w, err := traces.NewWriter(&buf, traces.Header{Command: []string{"test"}}, &traces.WriterOptions{Now: sim.Now, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := recorder.NewProxy(&url.URL{Scheme: "http", Host: streamhttp.MemoryHost}, w, &recorder.ProxyOptions{Transport: streamhttp.NewMemoryTransport(upstream), Clock: sim})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: streamhttp.NewMemoryTransport(p)}
	resp, err := hc.Post("http://"+streamhttp.MemoryHost+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	// The first event read, the proxy has recorded it already: hand the
	// pipeline a marker now, and the event must come before it.
	br := bufio.NewReader(resp.Body)
	for line, err := br.ReadString('\n'); line != "\n"; line, err = br.ReadString('\n') {
		if err != nil {
			t.Fatal(err)
		}
	}
	p.Pipeline().Annotate("the client read event 1")
	_, _ = br.WriteTo(new(bytes.Buffer))
	resp.Body.Close()
	<-written
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := traces.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for rec, err := range rd.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Wall.Equal(start) || rec.Offset != 0 {
			t.Errorf("record %d (%s) at %v, offset %v: want the simulated clock's %v", rec.Index, rec.Kind, rec.Wall, rec.Offset, start)
		}
		switch {
		case rec.Kind == traces.KindSSEEvent:
			order = append(order, "event "+rec.SSE.ID)
		case rec.Kind == traces.KindAnnotation:
			order = append(order, "read")
		}
	}
	if i, j := slices.Index(order, "event 1"), slices.Index(order, "read"); i < 0 || j < i {
		t.Errorf("records in order %v: want event 1 recorded before the client read it", order)
	}
}
