package faults

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"testing"

	"github.com/tasksim/tasksim/mcp/sse"
)

// endless is the body of an event that never ends: "data: " and then n
// bytes without a line ending, from a repeating pattern.
type endless struct{ n, off int64 }

const endlessPattern = "0123456789abcdefghijklmnopqrstuvwxyz"

func (e *endless) Read(p []byte) (int, error) {
	if e.off >= e.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), e.n-e.off)]
	for i := range p {
		p[i] = endlessPattern[(e.off+int64(i))%int64(len(endlessPattern))]
	}
	e.off += int64(len(p))
	return len(p), nil
}

// heapMeter keeps the peak of the live heap, measured after a GC at each
// sample, above the live heap when it was made.
type heapMeter struct{ base, peak uint64 }

func newHeapMeter() *heapMeter {
	m := &heapMeter{}
	m.base = liveHeap()
	return m
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func (m *heapMeter) sample() {
	if h := liveHeap(); h > m.base && h-m.base > m.peak {
		m.peak = h - m.base
	}
}

// bodyChecker compares a body read in pieces with what it should be,
// without keeping it: a prefix, the endless event's bytes, a suffix.
type bodyChecker struct {
	t    *testing.T
	want io.Reader
	buf  []byte
	n    int64
}

func (c *bodyChecker) Write(p []byte) (int, error) {
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	w := c.buf[:len(p)]
	if _, err := io.ReadFull(c.want, w); err != nil || !bytes.Equal(w, p) {
		c.t.Fatalf("body differs from the stream sent in the %d bytes after byte %d", len(p), c.n)
	}
	c.n += int64(len(p))
	return len(p), nil
}

// TestHTTPEndlessEventBounded: a real upstream on 127.0.0.1 sends an event
// that runs 200 MiB without a line ending (then ends it) between two
// events; behind a reverse proxy with a fault that drops the first event,
// the endless one passes unchanged and unfaulted as it comes, is counted,
// and the proxy's live heap stays far below its size.
func TestHTTPEndlessEventBounded(t *testing.T) {
	const size = 200 << 20
	head, tail := "id: 1\ndata: first\n\ndata: ", "\n\nid: 2\ndata: second\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, head)
		buf := make([]byte, 64<<10)
		for src := (&endless{n: size}); ; {
			n, err := src.Read(buf)
			if _, werr := w.Write(buf[:n]); werr != nil || err != nil {
				break
			}
		}
		io.WriteString(w, tail)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	b, err := Builtin().Parse("drop-sse-event:nth=1")
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(1, b)
	proxy := httptest.NewServer(Handler(&httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		FlushInterval: -1,
	}, set, nil))
	defer proxy.Close()

	meter := newHeapMeter()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, proxy.URL+"/mcp", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The first event is dropped; the endless one and the second pass.
	want := io.MultiReader(bytes.NewReader([]byte("data: ")), &endless{n: size}, bytes.NewReader([]byte(tail)))
	check := &bodyChecker{t: t, want: want}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		n, err := io.CopyN(check, br, 16<<20)
		meter.sample()
		if err == io.EOF && n == 0 {
			break
		}
		if err != nil && err != io.EOF {
			t.Fatalf("after %d bytes: %v", check.n, err)
		}
	}
	if total := int64(len("data: ") + size + len(tail)); check.n != total {
		t.Fatalf("%d bytes through the proxy, want %d", check.n, total)
	}
	if meter.peak > 64<<20 {
		t.Errorf("the live heap grew by %d MiB passing a %d MiB event, want under 64 MiB", meter.peak>>20, size>>20)
	}
	t.Logf("live heap grew by at most %.1f MiB passing %d MiB", float64(meter.peak)/(1<<20), size>>20)
	if n := set.Oversize(); n != 1 {
		t.Errorf("Oversize() = %d, want 1", n)
	}
	if c := set.Counts(); c[0].Fired != 1 {
		t.Errorf("the drop fired %d times, want 1", c[0].Fired)
	}
}

// TestHTTPOversizeEvent: an event over sse.MaxBlock that comes whole in
// one write is oversize too, and passes unfaulted; the events around it
// are messages 1 and 2.
func TestHTTPOversizeEvent(t *testing.T) {
	big := "data: " + string(bytes.Repeat([]byte("y"), sse.MaxBlock)) + "\r\n\r\n"
	stream := "id: 1\ndata: a\n\n" + big + "id: 2\ndata: b\n\n"
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	})
	b, err := Builtin().Parse("drop-sse-event:nth=2")
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(1, b)
	rec := httptest.NewRecorder()
	Handler(next, set, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil))
	if got, want := rec.Body.String(), "id: 1\ndata: a\n\n"+big; got != want {
		t.Errorf("body of %d bytes, want %d: the big event and the first", len(got), len(want))
	}
	if set.Oversize() != 1 || set.Counts()[0].Fired != 1 {
		t.Errorf("oversize %d, fired %d; want 1, 1", set.Oversize(), set.Counts()[0].Fired)
	}
}

// meteredWriter passes writes to w and samples the heap every 16 MiB.
type meteredWriter struct {
	w     io.Writer
	meter *heapMeter
	n     int64
}

func (m *meteredWriter) Write(p []byte) (int, error) {
	before := m.n
	m.n += int64(len(p))
	if before>>24 != m.n>>24 {
		m.meter.sample()
	}
	return m.w.Write(p)
}

// TestLinesEndlessLineBounded: a line of 200 MiB between two messages
// passes unchanged, in pieces as it comes, unseen by a fault that holds
// the first message back past the next; the live heap stays far below the
// line's size.
func TestLinesEndlessLineBounded(t *testing.T) {
	const size = 200 << 20
	src := io.MultiReader(bytes.NewReader([]byte("a\n")), &endless{n: size}, bytes.NewReader([]byte("\nb\n")))
	want := io.MultiReader(&endless{n: size}, bytes.NewReader([]byte("\nb\na\n")))
	b, err := Builtin().Parse("reorder:nth=1")
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(1, b)
	check := &bodyChecker{t: t, want: want}
	dst := &meteredWriter{w: check, meter: newHeapMeter()}
	if err := Lines(context.Background(), dst, src, set, StreamStdout, nil); err != nil {
		t.Fatal(err)
	}
	if total := int64(size + len("\nb\na\n")); check.n != total {
		t.Fatalf("%d bytes passed, want %d", check.n, total)
	}
	if dst.meter.peak > 64<<20 {
		t.Errorf("the live heap grew by %d MiB passing a %d MiB line, want under 64 MiB", dst.meter.peak>>20, size>>20)
	}
	if set.Oversize() != 1 || set.Counts()[0].Fired != 1 {
		t.Errorf("oversize %d, fired %d; want 1, 1", set.Oversize(), set.Counts()[0].Fired)
	}
}

// TestLinesOversize: a line just over the bound is no message, whether it
// ends in the read that passes the bound or later, and all of it passes:
// the message after it is the second, which the fault cuts before.
func TestLinesOversize(t *testing.T) {
	for _, extra := range []int{1, 100 << 10} {
		big := string(bytes.Repeat([]byte("x"), maxLineLen+extra)) + "\r\n"
		b, err := Builtin().Parse("disconnect:nth=2,at=before")
		if err != nil {
			t.Fatal(err)
		}
		set := NewSet(1, b)
		var dst closeBuffer
		err = Lines(context.Background(), &dst, bytes.NewReader([]byte("a\n"+big+"b\n")), set, StreamStdout, nil)
		if err != ErrCut || dst.String() != "a\n"+big || !dst.closed {
			t.Errorf("%d over: %v, %d bytes out, closed %v; want ErrCut, %d bytes", extra, err, dst.Len(), dst.closed, len("a\n"+big))
		}
		if set.Oversize() != 1 {
			t.Errorf("%d over: Oversize() = %d, want 1", extra, set.Oversize())
		}
	}
	// At the bound, the line is a message.
	line := string(bytes.Repeat([]byte("x"), maxLineLen)) + "\n"
	b, _ := Builtin().Parse("disconnect:nth=2,at=before")
	set := NewSet(1, b)
	var dst closeBuffer
	err := Lines(context.Background(), &dst, bytes.NewReader([]byte("a\n"+line+"b\n")), set, StreamStdout, nil)
	if err != ErrCut || dst.String() != "a\n" || set.Oversize() != 0 {
		t.Errorf("at the bound: %v, %d bytes out, oversize %d; want ErrCut, 2 bytes, 0", err, dst.Len(), set.Oversize())
	}
}
