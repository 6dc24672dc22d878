package recorder

import (
	"bytes"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// TestLineTeeOversize: a line over maxLine is recorded in parts marked
// Oversize, its end too, with no RPC fields; the bytes passed on are the
// bytes written; the lines around it are recorded as lines.
func TestLineTeeOversize(t *testing.T) {
	var buf bytes.Buffer
	w, err := traces.NewWriter(&buf, traces.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPipeline(w, nil)
	rec := &stdioRecorder{p: p, opened: make(chan struct{})}
	rec.open(traces.Record{Kind: traces.KindConnOpen})
	var out bytes.Buffer
	tee := &lineTee{dst: &out, rec: rec, stream: "stdin", dir: traces.DirClientToServer, rpc: true, recordFirst: true}
	big := bytes.Repeat([]byte(`{"x":1}`), maxLine/7+2) // over maxLine
	stream := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), big...), "\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"...)
	for s := stream; len(s) > 0; {
		k := min(len(s), 1<<20+3)
		if _, err := tee.Write(s[:k]); err != nil {
			t.Fatal(err)
		}
		s = s[k:]
	}
	tee.flush()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), stream) {
		t.Fatalf("%d bytes passed on, want the %d written", out.Len(), len(stream))
	}
	r, err := traces.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var over []byte
	var lines []string
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Kind != traces.KindStdioLine:
		case rec.Oversize:
			if rec.RPC != nil {
				t.Errorf("oversize record %d described as %+v", rec.Index, rec.RPC)
			}
			over = append(over, rec.Raw...)
		default:
			lines = append(lines, rec.RPC.ID)
		}
	}
	if !bytes.Equal(over, big) {
		t.Errorf("oversize records hold %d bytes, want the %d of the line", len(over), len(big))
	}
	if len(lines) != 2 || lines[0] != "1" || lines[1] != "2" {
		t.Errorf("lines %q, want ids 1 and 2", lines)
	}
}
