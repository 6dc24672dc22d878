package harness

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// TestRecordGateOrder: a client that sends its next request, on a new
// connection, as soon as it read an answer (a JSON body, or the first
// event of an SSE stream the server keeps open) finds that answer recorded
// before its next request, every time.
func TestRecordGateOrder(t *testing.T) {
	for _, kind := range []string{"json", "sse"} {
		t.Run(kind, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			upstream, stopUp, err := ServeLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := r.URL.Query().Get("n")
				if kind == "json" {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"n":`+n+`}`)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "id: %s\ndata: {\"n\":%s}\n\n", n, n)
				w.(http.Flusher).Flush()
				select { // the stream stays open: nothing ends the exchange
				case <-release:
				case <-r.Context().Done():
				}
			}), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer stopUp()
			path, w, base, stop := recordTo(t, upstream, "gate.trace")
			const rounds = 60
			hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			for i := range rounds {
				resp, err := hc.Get(fmt.Sprintf("%s/?n=%d", base, i))
				if err != nil {
					t.Fatal(err)
				}
				line, err := bufio.NewReader(resp.Body).ReadString('}')
				if err != nil || !strings.Contains(line, fmt.Sprintf(`{"n":%d}`, i)) {
					t.Fatalf("round %d: read %q: %v", i, line, err)
				}
				if kind == "json" {
					resp.Body.Close()
				}
				// An SSE body stays open: the next request goes at once.
				defer resp.Body.Close()
			}
			stop()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			tr, err := traces.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			answered := map[uint64]bool{}
			for rec, err := range tr.Records() {
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case rec.Kind == traces.KindRequestHead && rec.Exchange > 1 && !answered[rec.Exchange-1]:
					t.Errorf("request %d recorded before the answer to request %d (record %d)", rec.Exchange, rec.Exchange-1, rec.Index)
				case rec.Dir == traces.DirServerToClient && (rec.Kind == traces.KindSSEEvent || rec.Kind == traces.KindMessage || rec.Kind == traces.KindBodyChunk):
					answered[rec.Exchange] = true
				}
			}
			if len(answered) != rounds {
				t.Errorf("%d answers recorded, want %d", len(answered), rounds)
			}
		})
	}
}

// TestRecordingProxyStopRecordsAll: stopping the recording proxy while
// streams are open, just after their clients read an event, loses nothing
// of them: each stream's event and its end are in the trace. A scenario
// ends as soon as it read what it waited for, and the proxy stops at
// once; what the proxy's handlers record after the client saw the bytes
// (an event's hand-over, the end of the exchange) must still land.
func TestRecordingProxyStopRecordsAll(t *testing.T) {
	upstream, stopUp, err := ServeLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: 1\ndata: {\"n\":%s}\n\n", r.URL.Query().Get("n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the stream stays open until the proxy stops
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stopUp()
	path, w, base, stop := recordTo(t, upstream, "stop.trace")
	const streams = 20
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range streams {
		resp, err := hc.Get(fmt.Sprintf("%s/?n=%d", base, i))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if line, err := bufio.NewReader(resp.Body).ReadString('}'); err != nil || !strings.Contains(line, fmt.Sprintf(`{"n":%d}`, i)) {
			t.Fatalf("stream %d: read %q: %v", i, line, err)
		}
	}
	stop()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	events, ends := map[uint64]bool{}, map[uint64]bool{}
	for rec, err := range tr.Records() {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Kind == traces.KindSSEEvent:
			events[rec.Exchange] = true
		case rec.Kind == traces.KindBodyEnd && rec.Dir == traces.DirServerToClient:
			ends[rec.Exchange] = true
		}
	}
	if len(events) != streams || len(ends) != streams {
		t.Errorf("%d events and %d stream ends recorded, want %d of each", len(events), len(ends), streams)
	}
}

// recordTo starts a recording proxy to upstream writing the trace file
// name in a temporary directory: the file's path, its writer, the
// proxy's base URL and its stop.
func recordTo(t *testing.T, upstream, name string) (path string, w *traces.Writer, base string, stop func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), name)
	w, err := traces.Create(path, traces.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream + "/")
	base, _, stop, err = StartRecordingProxy(u, w)
	if err != nil {
		t.Fatal(err)
	}
	return path, w, base, stop
}
