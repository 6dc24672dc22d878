package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// oneChannel is the live side of a replay over one channel: the live
// messages are pushed into it up front.
type oneChannel struct{ lc *liveChan }

func (c oneChannel) send(context.Context, step) error { return nil }
func (c oneChannel) channel(step) *liveChan           { return c.lc }

// part is a streaming answer to request 2 of task t1 (in the recording)
// carrying segs as "seqNr:text"; initial adds the task object.
func part(initial, complete bool, segs ...string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":2,"result":{`)
	if initial {
		b.WriteString(`"task":{"taskId":"t1","status":"working","pollInterval":500},`)
	}
	b.WriteString(`"partial-content":[`)
	for i, s := range segs {
		nr, text, _ := strings.Cut(s, ":")
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"seqNr":%s,"type":"text","text":%q}`, nr, text)
	}
	fmt.Fprintf(&b, `],"isComplete":%v,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}}`, complete)
	return b.String()
}

// TestReplayStreamSplit: a streamed task's segments are compared merged
// by seqNr, however the two sides split them over messages; what a server
// must produce (seqNr from 1, each segment's content, every segment) is
// still the divergence, at the recorded message that carried it.
func TestReplayStreamSplit(t *testing.T) {
	cases := []struct {
		name     string
		rec      []string
		live     []string
		wantAt   int // index in rec of the diverging message; -1 none
		wantPath string
	}{
		{"same split", []string{part(true, false), part(false, false, "1:a"), part(false, true, "2:b")},
			[]string{part(true, false), part(false, false, "1:a"), part(false, true, "2:b")}, -1, ""},
		{"live sooner: a segment in the initial response",
			[]string{part(true, false), part(false, false, "1:a"), part(false, false, "2:b"), part(false, true, "3:c")},
			[]string{part(true, false, "1:a"), part(false, false, "2:b"), part(false, true, "3:c")}, -1, ""},
		{"live later: more messages",
			[]string{part(true, false, "1:a"), part(false, true, "2:b", "3:c")},
			[]string{part(true, false), part(false, false, "1:a"), part(false, false, "2:b"), part(false, true, "3:c")}, -1, ""},
		{"live completes while the recording had more",
			[]string{part(true, false), part(false, false, "1:a"), part(false, false, "2:b"), part(false, true)},
			[]string{part(true, false, "1:a"), part(false, true, "2:b")}, -1, ""},
		{"seqNr from 0", []string{part(true, false), part(false, false, "0:a"), part(false, true, "1:b")},
			[]string{part(true, false, "1:a"), part(false, true, "2:b")}, 1, "[0].seqNr"},
		{"wrong content", []string{part(true, false), part(false, false, "1:a"), part(false, true, "2:b")},
			[]string{part(true, false, "1:a", "2:x"), part(false, true)}, 2, "[1].text"},
		{"a missing segment", []string{part(true, false), part(false, false, "1:a"), part(false, true, "2:b")},
			[]string{part(true, false), part(false, true, "1:a")}, 2, "$.result.partial-content"},
		{"an extra segment", []string{part(true, false), part(false, true, "1:a")},
			[]string{part(true, false), part(false, true, "1:a", "2:b")}, 1, "$.result.partial-content"},
		{"an error where a result was", []string{part(true, false), part(false, true, "1:a")},
			[]string{part(true, false), `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}`}, 1, "$.error"},
		{"a completing answer that is not", []string{part(true, false), part(false, true, "1:a")},
			[]string{part(true, false), strings.Replace(part(false, true, "1:a"), `"isComplete":true`, `"isComplete":true,"isError":true`, 1)}, 1, "$.result.isError"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lc := newLiveChan()
			for i, m := range tc.live {
				lc.push(liveItem{sse: true, id: fmt.Sprintf("L%d", i), hasID: true, data: []byte(m)})
			}
			lc.end(nil)
			r := &replayer{conn: oneChannel{lc}, ids: newIDMap(), wait: time.Second, res: &ReplayResult{}, methods: map[string]string{"2": "tools/call"}}
			var d *Divergence
			at := -1
			for i, m := range tc.rec {
				st := step{kind: stepItem, ch: 1, rec: traces.Record{Index: uint64(100 + i), Kind: traces.KindSSEEvent, Stream: "post:1",
					SSE: &traces.SSEFields{ID: fmt.Sprintf("R%d", i), HasID: true, Data: m}}}
				if d = r.item(context.Background(), st); d != nil {
					at = i
					break
				}
			}
			if d == nil {
				d = r.end(context.Background(), step{kind: stepEnd, ch: 1, rec: traces.Record{Index: 200, Kind: traces.KindBodyEnd}})
				if d != nil {
					at = len(tc.rec)
				}
			}
			if tc.wantAt < 0 {
				if d != nil {
					t.Fatalf("divergence:\n%s", d)
				}
				// A recorded event whose segments the live side sent
				// sooner maps to the live event that carried them: a
				// resumption after it asks for what follows.
				if tc.name == "live sooner: a segment in the initial response" {
					if got, _ := r.ids.lookup(r.ids.event, "R1"); got != "L0" {
						t.Errorf("recorded event R1 maps to %q, want L0", got)
					}
				}
				return
			}
			if d == nil {
				t.Fatalf("no divergence, want one at recorded message %d", tc.wantAt)
			}
			if want := uint64(100 + tc.wantAt); d.Record != want || !strings.HasSuffix(d.Path, tc.wantPath) {
				t.Fatalf("divergence at record %d (step %d) path %q, want record %d path …%q:\n%s", d.Record, at, d.Path, want, tc.wantPath, d)
			}
		})
	}
}
