package recorder_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// traceRig is a trace in memory on a simulated clock, and a pipeline to
// it.
type traceRig struct {
	clk  *clock.Sim
	buf  bytes.Buffer
	w    *traces.Writer
	pipe *recorder.Pipeline
}

func newTraceRig(t *testing.T) *traceRig {
	t.Helper()
	r := &traceRig{clk: clock.NewSim(epoch)}
	var err error
	r.w, err = traces.NewWriter(&r.buf, traces.Header{Command: []string{"test"}}, &traces.WriterOptions{Now: r.clk.Now, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	r.pipe = recorder.NewPipeline(r.w, &recorder.PipelineOptions{Clock: r.clk})
	return r
}

// finish closes the pipeline and the writer, verifies the trace and reads
// it back.
func (r *traceRig) finish(t *testing.T) []traces.Record {
	t.Helper()
	if err := r.pipe.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.w.Close(); err != nil {
		t.Fatal(err)
	}
	v, err := traces.Verify(bytes.NewReader(r.buf.Bytes()))
	if err != nil || !v.OK() {
		t.Fatalf("Verify: %+v, %v", v, err)
	}
	rd, err := traces.NewReader(bytes.NewReader(r.buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var recs []traces.Record
	for rec, err := range rd.Records() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if uint64(len(recs)) != v.Records {
		t.Fatalf("read %d records, Verify counted %d", len(recs), v.Records)
	}
	return recs
}

// line is what a test checks of a record.
func line(r traces.Record) string {
	s := fmt.Sprintf("%d +%s conn=%d %s %s %s side=%s", r.Index, r.Offset, r.Conn, r.Stream, r.Dir, r.Kind, r.Side)
	if p := r.RPC; p != nil {
		s += fmt.Sprintf(" %s %s id=%s task=%s", p.Type, p.Method, p.ID, p.TaskID)
		if len(p.SeqNrs) > 0 {
			s += fmt.Sprintf(" seqNr=%v", p.SeqNrs)
		}
		if p.HasSeq {
			s += fmt.Sprintf(" seq=%d", p.Seq)
		}
		if p.Status != "" {
			s += " status=" + p.Status
		}
	}
	if r.Fault != nil {
		s += " fault: " + r.Fault.String()
	}
	if r.Note != "" {
		s += fmt.Sprintf(" %q", r.Note)
	}
	return s
}

// Records added from many goroutines keep each goroutine's order, and Add
// returns the index each record gets.
func TestPipelineOrderAndIndexes(t *testing.T) {
	rg := newTraceRig(t)
	const goroutines, each = 4, 50
	var mu sync.Mutex
	indexOf := map[string]uint64{}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				note := fmt.Sprintf("g%d.%03d", g, i)
				idx, ok := rg.pipe.Add(traces.Record{Kind: traces.KindAnnotation, Note: note})
				if !ok {
					t.Errorf("%s: index unknown", note)
				}
				mu.Lock()
				indexOf[note] = idx
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := rg.pipe.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := rg.w.Written(); n != goroutines*each {
		t.Fatalf("after Sync, %d records written", n)
	}
	recs := rg.finish(t)
	last := map[string]string{}
	for _, r := range recs {
		if indexOf[r.Note] != r.Index {
			t.Errorf("%s: Add said index %d, file has %d", r.Note, indexOf[r.Note], r.Index)
		}
		g := r.Note[:2]
		if r.Note <= last[g] {
			t.Errorf("%s after %s", r.Note, last[g])
		}
		last[g] = r.Note
	}
	if _, ok := rg.pipe.Add(traces.Record{Kind: traces.KindAnnotation}); ok {
		t.Error("Add after Close reported an index")
	}
}

// Faults and annotations added to a Proxy's pipeline land in order with
// the Proxy's own records; behind a Proxy indexes are not known.
func TestProxyPipelineKeepsOrder(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: hello\n\n")
	}))
	defer upstream.Close()
	var file bytes.Buffer
	w, err := traces.NewWriter(&file, traces.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream.URL)
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	resp, err := http.Get(front.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	front.Close() // the handler returned: the exchange's records are queued
	if _, ok := p.Pipeline().AddFault(traces.Fault{Name: "stall", Action: "stalled 1s"}, "by hand"); ok {
		t.Error("Add behind a Proxy reported an index")
	}
	p.Pipeline().Annotate("after the call")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, err := traces.NewReader(&file)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s", rec.Stream, rec.Kind, rec.Fault.String(), rec.Note))
	}
	want := []string{
		"req:1 request-head  ",
		"get:1 response-head  ",
		"get:1 sse-event  ",
		"get:1 body-end  eof",
		" fault stall: stalled 1s by hand",
		" annotation  after the call",
	}
	// conn-open first; conn-close wherever the server closed the
	// connection (before or after the additions).
	var rest []string
	for _, g := range got {
		if !strings.Contains(g, "conn-") {
			rest = append(rest, g)
		}
	}
	if diff := cmp.Diff(want, rest); diff != "" {
		t.Fatalf("records (-want +got):\n%s\nall: %q", diff, got)
	}
}
