package client

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tasksim/tasksim/mcp"
)

func seg(n int64) mcp.Segment {
	return mcp.Segment{SeqNr: n, ContentBlock: mcp.TextBlock(fmt.Sprint("s", n))}
}

func TestSegmentTracker(t *testing.T) {
	for _, tc := range []struct {
		name                string
		in                  []int64
		contiguous, highest int64
		duplicates, invalid int
		missing             []int64
		content             string
	}{
		{"in order", []int64{1, 2, 3}, 3, 3, 0, 0, nil, "s1 s2 s3"},
		{"out of order", []int64{2, 1, 3}, 3, 3, 0, 0, nil, "s1 s2 s3"},
		{"duplicates", []int64{1, 1, 2, 1, 2}, 2, 2, 3, 0, nil, "s1 s2"},
		{"gaps", []int64{1, 3, 5}, 1, 5, 0, 0, []int64{2, 4}, "s1 s3 s5"},
		{"missing first", []int64{2, 3}, 0, 3, 0, 0, []int64{1}, "s2 s3"},
		{"invalid seqNr", []int64{0, -1, 1}, 1, 1, 0, 2, nil, "s1"},
		{"gap filled", []int64{1, 3, 2}, 3, 3, 0, 0, nil, "s1 s2 s3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newSegmentTracker()
			for _, n := range tc.in {
				tr.add(seg(n))
			}
			var texts []string
			for _, b := range tr.content() {
				texts = append(texts, b.Text)
			}
			got := fmt.Sprint(texts)
			if tr.contiguous != tc.contiguous || tr.highest != tc.highest || tr.duplicates != tc.duplicates || tr.invalid != tc.invalid ||
				!slices.Equal(tr.missing(), tc.missing) || got != "["+tc.content+"]" || tr.hasGap() != (len(tc.missing) > 0) {
				t.Errorf("contiguous %d highest %d duplicates %d invalid %d missing %v content %s",
					tr.contiguous, tr.highest, tr.duplicates, tr.invalid, tr.missing(), got)
			}
		})
	}
}

func TestPartialTracker(t *testing.T) {
	type step struct {
		seq      int64
		terminal bool // the task is seen terminal before this partial
		want     partialOutcome
	}
	for _, tc := range []struct {
		name                  string
		steps                 []step
		accepted, dups, after int
		lost                  int64
	}{
		{"in order", []step{{0, false, partialAccepted}, {1, false, partialAccepted}, {2, false, partialAccepted}}, 3, 0, 0, 0},
		{"duplicate and lower", []step{{0, false, partialAccepted}, {1, false, partialAccepted}, {1, false, partialDuplicate}, {0, false, partialDuplicate}}, 2, 2, 0, 0},
		{"gap", []step{{0, false, partialAccepted}, {3, false, partialGap}, {4, false, partialAccepted}}, 3, 0, 0, 2},
		{"first is not 0", []step{{2, false, partialGap}}, 1, 0, 0, 2},
		{"after terminal", []step{{0, false, partialAccepted}, {1, true, partialAfterTerminal}}, 1, 0, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p partialTracker
			for _, s := range tc.steps {
				if s.terminal {
					p.terminal = true
				}
				if got := p.add(mcp.TaskPartialParams{Seq: s.seq, Content: []mcp.ContentBlock{mcp.TextBlock("x")}}); got != s.want {
					t.Errorf("seq %d: outcome %d, want %d", s.seq, got, s.want)
				}
			}
			if p.accepted != tc.accepted || p.duplicates != tc.dups || p.afterTerminal != tc.after || p.lost != tc.lost || len(p.content) != tc.accepted {
				t.Errorf("accepted %d dups %d after %d lost %d content %d", p.accepted, p.duplicates, p.afterTerminal, p.lost, len(p.content))
			}
		})
	}
}
