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
		// NoContent keeps the same books without the segments.
		for _, noContent := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/noContent=%v", tc.name, noContent), func(t *testing.T) {
				tr := newSegmentTracker(noContent)
				distinct := map[int64]bool{}
				for _, n := range tc.in {
					tr.add(seg(n))
					if n >= 1 {
						distinct[n] = true
					}
				}
				var texts []string
				for _, b := range tr.content() {
					texts = append(texts, b.Text)
				}
				got, want := fmt.Sprint(texts), "["+tc.content+"]"
				if noContent {
					want = "[]"
				}
				if tr.contiguous != tc.contiguous || tr.highest != tc.highest || tr.duplicates != tc.duplicates || tr.invalid != tc.invalid ||
					!slices.Equal(tr.missing(), tc.missing) || got != want || tr.hasGap() != (len(tc.missing) > 0) || tr.received != len(distinct) {
					t.Errorf("contiguous %d highest %d duplicates %d invalid %d missing %v content %s received %d",
						tr.contiguous, tr.highest, tr.duplicates, tr.invalid, tr.missing(), got, tr.received)
				}
				if noContent && len(tr.ahead) != int(max(0, int64(len(distinct))-tr.contiguous)) {
					t.Errorf("ahead holds %d seqNrs, want only those above contiguous %d", len(tr.ahead), tr.contiguous)
				}
			})
		}
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
			var p, q partialTracker
			q.noContent = true
			for _, s := range tc.steps {
				if s.terminal {
					q.terminal = true
				}
				q.add(mcp.TaskPartialParams{Seq: s.seq, Content: []mcp.ContentBlock{mcp.TextBlock("x")}})
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
			if len(q.content) != 0 || q.accepted != p.accepted || q.duplicates != p.duplicates || q.afterTerminal != p.afterTerminal || q.lost != p.lost || q.next != p.next {
				t.Errorf("noContent: %+v, want the books of %+v without content", q, p)
			}
		})
	}
}

// The status tracker's transitions (2025-11-25 Tasks, "Task Status
// Lifecycle"), one table row per rule: each report in order, with the
// verdict it gets; then the status known at the end.
func TestStatusTracker(t *testing.T) {
	type report struct {
		status  mcp.TaskStatus
		updated string // lastUpdatedAt; "" for none
		want    statusVerdict
	}
	const (
		t1 = "2025-11-25T10:30:01.000Z"
		t2 = "2025-11-25T10:30:02.000Z"
		t3 = "2025-11-25T10:30:03.000Z"
	)
	var (
		working   = mcp.StatusWorking
		input     = mcp.StatusInputRequired
		completed = mcp.StatusCompleted
		failed    = mcp.StatusFailed
		cancelled = mcp.StatusCancelled
	)
	for _, tc := range []struct {
		name    string
		reports []report
		want    mcp.TaskStatus
		phase   taskPhase
	}{
		{"nothing reported", nil, "", taskUnknown},
		{"first report, whatever it is", []report{{completed, t2, statusTaken}}, completed, taskTerminal},
		{"working to input_required to working", []report{{working, t1, statusTaken}, {input, t2, statusTaken}, {working, t3, statusTaken}}, working, taskActive},
		{"working to completed", []report{{working, t1, statusTaken}, {completed, t2, statusTaken}}, completed, taskTerminal},
		{"late working after cancelled (the tasks/get race)", []report{{working, t1, statusTaken}, {cancelled, t2, statusTaken}, {working, t1, statusAfterTerminal}}, cancelled, taskTerminal},
		{"late working after cancelled, same lastUpdatedAt", []report{{cancelled, t2, statusTaken}, {working, t2, statusAfterTerminal}}, cancelled, taskTerminal},
		{"late working after cancelled, newer lastUpdatedAt", []report{{cancelled, t2, statusTaken}, {working, t3, statusAfterTerminal}}, cancelled, taskTerminal},
		{"late working after cancelled, no lastUpdatedAt", []report{{cancelled, "", statusTaken}, {working, "", statusAfterTerminal}}, cancelled, taskTerminal},
		{"late input_required after failed", []report{{failed, t2, statusTaken}, {input, t3, statusAfterTerminal}}, failed, taskTerminal},
		{"another terminal status after a terminal one", []report{{completed, t2, statusTaken}, {cancelled, t3, statusAfterTerminal}}, completed, taskTerminal},
		{"the terminal status again, refreshed", []report{{cancelled, t2, statusTaken}, {cancelled, t3, statusTaken}}, cancelled, taskTerminal},
		{"the terminal status again, older: the newer report kept", []report{{cancelled, t3, statusTaken}, {cancelled, t2, statusTaken}}, cancelled, taskTerminal},
		{"older non-terminal report", []report{{working, t1, statusTaken}, {input, t3, statusTaken}, {working, t2, statusStale}}, input, taskActive},
		{"same lastUpdatedAt: arrival order", []report{{working, t2, statusTaken}, {input, t2, statusTaken}}, input, taskActive},
		{"no lastUpdatedAt: arrival order", []report{{input, t3, statusTaken}, {working, "", statusTaken}, {input, t1, statusTaken}}, input, taskActive},
		{"unreadable lastUpdatedAt: arrival order", []report{{input, t3, statusTaken}, {working, "yesterday", statusTaken}}, working, taskActive},
		{"terminal with an older lastUpdatedAt still ends it", []report{{input, t3, statusTaken}, {completed, t1, statusTaken}, {working, t3, statusAfterTerminal}}, completed, taskTerminal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s statusTracker
			for i, r := range tc.reports {
				if got := s.observe(mcp.Task{TaskID: "t", Status: r.status, LastUpdatedAt: r.updated}); got != r.want {
					t.Errorf("report %d (%s at %q): %v, want %v", i, r.status, r.updated, got, r.want)
				}
			}
			var got mcp.TaskStatus
			if s.last != nil {
				got = s.last.Status
			}
			if got != tc.want || s.phase != tc.phase || s.terminal() != (tc.phase == taskTerminal) {
				t.Errorf("known status %q phase %d, want %q phase %d", got, s.phase, tc.want, tc.phase)
			}

		})
	}
}

// The known terminal status reported again with an older lastUpdatedAt is
// taken (a poll-mode call acts on it) but the newer report is kept: the
// completion time comes from it.
func TestStatusTrackerKeepsNewerTerminalReport(t *testing.T) {
	var s statusTracker
	s.observe(mcp.Task{Status: mcp.StatusCompleted, LastUpdatedAt: "2025-11-25T10:30:03.000Z", StatusMessage: "newer"})
	if v := s.observe(mcp.Task{Status: mcp.StatusCompleted, LastUpdatedAt: "2025-11-25T10:30:02.000Z", StatusMessage: "older"}); v != statusTaken {
		t.Fatalf("verdict %v, want taken", v)
	}
	if s.last.StatusMessage != "newer" {
		t.Errorf("kept %+v, want the newer report", s.last)
	}
}

// The call's phase transitions (see phase), one table row per path: each
// event in order, with the phase it leads to and whether it was accepted;
// a refused event leaves the phase as it was.
func TestCallPhase(t *testing.T) {
	type step struct {
		ev   callEvent
		want phase
		ok   bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"plain or immediate answer", []step{{evEnd, phaseDone, true}}},
		{"task (Case 2)", []step{{evTaskAnswer, phaseTask, true}, {evEnd, phaseDone, true}}},
		{"task, its stream lost: polling goes on", []step{{evTaskAnswer, phaseTask, true}, {evStreamLost, phaseTask, true}, {evEnd, phaseDone, true}}},
		{"task, then streaming responses", []step{{evTaskAnswer, phaseTask, true}, {evStreamingResponse, phaseStreaming, true}, {evStreamingResponse, phaseStreaming, true}, {evEnd, phaseDone, true}}},
		{"streaming (Case 3)", []step{{evStreamingResponse, phaseStreaming, true}, {evStreamingResponse, phaseStreaming, true}, {evEnd, phaseDone, true}}},
		{"streaming, lost, resumed", []step{{evStreamingResponse, phaseStreaming, true}, {evStreamLost, phaseResuming, true}, {evEnd, phaseDone, true}}},
		{"lost before any answer: refused (the call ends)", []step{{evStreamLost, phaseCalling, false}, {evEnd, phaseDone, true}}},
		{"a second task answer is refused", []step{{evTaskAnswer, phaseTask, true}, {evTaskAnswer, phaseTask, false}}},
		{"a task answer after streaming is refused", []step{{evStreamingResponse, phaseStreaming, true}, {evTaskAnswer, phaseStreaming, false}}},
		{"resuming takes no stream any more", []step{{evStreamingResponse, phaseStreaming, true}, {evStreamLost, phaseResuming, true}, {evStreamingResponse, phaseResuming, false}, {evStreamLost, phaseResuming, false}, {evTaskAnswer, phaseResuming, false}}},
		{"done is final", []step{{evEnd, phaseDone, true}, {evEnd, phaseDone, false}, {evTaskAnswer, phaseDone, false}, {evStreamingResponse, phaseDone, false}, {evStreamLost, phaseDone, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := phaseCalling
			for i, s := range tc.steps {
				got, ok := p.next(s.ev)
				if got != s.want || ok != s.ok {
					t.Fatalf("step %d: %s in %s: %s, %v; want %s, %v", i, s.ev, p, got, ok, s.want, s.ok)
				}
				p = got
			}
		})
	}
}

// The set of requests in flight: one of each kind, tasks/result counted
// once whichever of its two kinds is out.
func TestRequestsInFlight(t *testing.T) {
	var s requests
	if s.has(reqGet|reqResume|reqCanonical|reqCancel) || s.fetching() {
		t.Fatalf("empty set %b has requests", s)
	}
	s.add(reqGet)
	s.add(reqResume)
	if !s.has(reqGet) || !s.has(reqResume) || s.has(reqCanonical) || !s.fetching() || !s.has(reqCanonical|reqGet) {
		t.Errorf("after get and resume: %b", s)
	}
	s.remove(reqResume)
	if s.fetching() || !s.has(reqGet) {
		t.Errorf("after the resume's answer: %b", s)
	}
	s.add(reqCanonical)
	s.remove(reqGet)
	if !s.fetching() || s.has(reqGet) || !s.has(reqCanonical) {
		t.Errorf("after canonical and the get's answer: %b", s)
	}
}
