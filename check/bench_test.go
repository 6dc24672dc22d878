package check

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// bigTrace repeats the records of the pass fixtures (real traffic) until
// there are at least n, each copy with its own connections, exchanges,
// session ids and task ids, so that the checker holds as many sessions and
// tasks as a long recording would.
func bigTrace(tb testing.TB, n int) []traces.Record {
	files, _ := filepath.Glob(filepath.Join("testdata", "pass", "*.jsonl"))
	// Each fixture is its own recording: its records shifted past the
	// previous one's connections, exchanges and time, and its ids (the
	// fixtures cut from one recording share a session) renewed apart.
	type part struct {
		recs []traces.Record
		ids  []string
	}
	var parts []part
	var conns, exchanges uint64
	var span time.Duration
	for _, f := range files {
		var p part
		var maxConn, maxEx uint64
		var last time.Duration
		seen := map[string]bool{}
		for _, r := range readFixture(tb, f) {
			maxConn, maxEx, last = max(maxConn, r.Conn), max(maxEx, r.Exchange), max(last, r.Offset)
			r.Conn += conns
			r.Exchange += exchanges
			r.Offset += span
			p.recs = append(p.recs, r)
			id, _ := r.HTTP.Get("Mcp-Session-Id")
			for _, id := range []string{id, taskIDOfRPC(r)} {
				if id != "" && !seen[id] {
					seen[id] = true
					p.ids = append(p.ids, id)
				}
			}
		}
		parts = append(parts, p)
		conns, exchanges, span = conns+maxConn, exchanges+maxEx, span+last+time.Millisecond
	}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]traces.Record, 0, n+1000)
	for k := uint64(0); len(out) < n; k++ {
		for _, p := range parts {
			var pairs []string
			for _, id := range p.ids {
				fresh := []byte(id)
				for i := range fresh {
					if fresh[i] != '-' {
						fresh[i] = "0123456789ABCDEF"[rng.IntN(16)]
					}
				}
				pairs = append(pairs, id, string(fresh))
			}
			rep := strings.NewReplacer(pairs...)
			for _, r := range p.recs {
				r = r.Clone()
				r.Index = uint64(len(out))
				r.Conn += k * conns
				if r.Exchange != 0 {
					r.Exchange += k * exchanges
				}
				r.Offset += time.Duration(k) * span
				if r.Raw != nil {
					r.Raw = []byte(rep.Replace(string(r.Raw)))
				}
				if r.SSE != nil {
					r.SSE.Data = rep.Replace(r.SSE.Data)
				}
				if r.HTTP != nil {
					for i := range r.HTTP.Header {
						r.HTTP.Header[i].Value = rep.Replace(r.HTTP.Header[i].Value)
					}
				}
				if r.RPC != nil {
					r.RPC.TaskID = rep.Replace(r.RPC.TaskID)
				}
				out = append(out, r)
			}
		}
	}
	return out
}

func taskIDOfRPC(r traces.Record) string {
	if r.RPC == nil {
		return ""
	}
	return r.RPC.TaskID
}

func records(recs []traces.Record) func(func(traces.Record, error) bool) {
	return func(yield func(traces.Record, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// BenchmarkCheck judges a trace of about 100,000 records of real traffic;
// records/s is the figure to watch (target: 500,000).
func BenchmarkCheck(b *testing.B) {
	benchCheck(b, bigTrace(b, 100_000), false)
}

// benchCheck judges recs b.N times; sides: the trace holds both sides.
func benchCheck(b *testing.B, recs []traces.Record, sides bool) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v, err := Check(records(recs), nil)
		if err != nil {
			b.Fatal(err)
		}
		if v.Records != uint64(len(recs)) || v.Sides != sides {
			b.Fatal(fmt.Sprint(v.Records, " records judged, want ", len(recs), "; sides ", v.Sides))
		}
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// TestBigTraceJudgedAlike: the benchmark's trace is real traffic many
// times over, so it fails no rule either.
func TestBigTraceJudgedAlike(t *testing.T) {
	recs := bigTrace(t, 2_000)
	v, err := Check(records(recs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs := failures(v); len(fs) > 0 {
		t.Errorf("the repeated pass fixtures fail %v:\n%s", fs, verdictText(v))
	}
}

// BenchmarkCheckSides judges the same traffic recorded on both sides of a
// fault layer (twoSided: every record twice, an SSE event in 100 dropped
// toward the client): the checker keeps the server's view and the
// client's. records/s counts the records of the two-sided trace.
func BenchmarkCheckSides(b *testing.B) {
	n := 0
	recs := twoSided(bigTrace(b, 50_000), func(r traces.Record) *traces.Fault {
		if r.Kind != traces.KindSSEEvent {
			return nil
		}
		if n++; n%100 != 0 {
			return nil
		}
		return &traces.Fault{Name: "drop-sse-event", Action: "dropped", Target: traces.Target{Conn: r.Conn, Exchange: r.Exchange, Stream: r.Stream}}
	})
	benchCheck(b, recs, true)
}
