package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// endlessData is n bytes of event data without a line ending.
type endlessData struct{ n, off int64 }

func (e *endlessData) Read(p []byte) (int, error) {
	if e.off >= e.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), e.n-e.off)]
	for i := range p {
		p[i] = 'a' + byte((e.off+int64(i))%26)
	}
	e.off += int64(len(p))
	return len(p), nil
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestProxyEndlessSSEEvent: a real upstream on 127.0.0.1 sends an SSE
// event that runs 200 MiB without a line ending (then ends it), between
// two events, through tasksim proxy with a fault and --record. The event
// passes byte for byte as it comes, unfaulted; the proxy's live heap stays
// far below its size; stderr counts it, and the trace marks its bytes
// Oversize.
func TestProxyEndlessSSEEvent(t *testing.T) {
	const size = 200 << 20
	head, tail := "id: 1\ndata: first\n\ndata: ", "\n\nid: 2\ndata: second\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, head)
		_, _ = io.Copy(w, &endlessData{n: size})
		io.WriteString(w, tail)
	}))
	defer up.Close()
	out := filepath.Join(t.TempDir(), "proxy.trace")
	u, stop, stderr := startProxy(t, "--upstream", up.URL+"/mcp", "--fault", "drop-sse-event:nth=1", "--seed", "1", "--record", out)

	base := liveHeap()
	var peak uint64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The first event is dropped; the endless one and the second pass.
	want := bufio.NewReader(io.MultiReader(strings.NewReader("data: "), &endlessData{n: size}, strings.NewReader(tail)))
	got := bufio.NewReaderSize(resp.Body, 64<<10)
	var n int64
	a, b := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		k, err := io.ReadFull(got, a)
		if _, werr := io.ReadFull(want, b[:k]); werr != nil || !bytes.Equal(a[:k], b[:k]) {
			t.Fatalf("the body differs from the stream sent in the %d bytes after byte %d", k, n)
		}
		n += int64(k)
		if n%(16<<20) == 0 || err != nil {
			if h := liveHeap(); h > base && h-base > peak {
				peak = h - base
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", n, err)
		}
	}
	resp.Body.Close()
	if total := int64(len("data: ") + size + len(tail)); n != total {
		t.Fatalf("%d bytes through the proxy, want %d", n, total)
	}
	t.Logf("live heap grew by at most %.1f MiB passing %d MiB", float64(peak)/(1<<20), size>>20)
	if peak > 64<<20 {
		t.Errorf("the live heap grew by %d MiB passing a %d MiB event, want under 64 MiB", peak>>20, size>>20)
	}
	if code := stop(); code != ExitOK {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	for _, s := range []string{"fault drop-sse-event:nth=1 fired 1 times", "1 messages too long to take whole passed unfaulted"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("stderr lacks %q: %s", s, stderr.String())
		}
	}

	// The trace: the endless event's bytes are body chunks marked
	// Oversize, and no sse-event record holds them.
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := traces.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var over int64
	var events []string
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Oversize:
			over += int64(len(rec.Raw))
		case rec.Kind == traces.KindSSEEvent:
			events = append(events, rec.SSE.ID)
		}
	}
	if want := int64(len("data: ") + size + 2); over != want {
		t.Errorf("oversize records hold %d bytes, want %d", over, want)
	}
	if len(events) != 1 || events[0] != "2" {
		t.Errorf("sse-event records %q, want the second event only", events)
	}
}
