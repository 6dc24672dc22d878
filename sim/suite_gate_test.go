package sim

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
			upstream, stopUp, err := serveLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
			path := filepath.Join(t.TempDir(), "gate.trace")
			w, err := traces.Create(path, traces.Header{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(upstream + "/")
			base, _, stop, err := startRecordingProxy(u, w)
			if err != nil {
				t.Fatal(err)
			}
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
