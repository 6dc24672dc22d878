package check

import (
	"slices"
	"testing"
)

// TestModePriority: S1905-MODE-SELECT judges the mode picked from several
// responseModes against SEP-1905's priority (immediate > streaming > task)
// among the modes both sides declare, and fails only what is definite.
// The poll trace is a task-mode call of the reference server, which
// declares all three modes; the streaming trace a streaming call.
func TestModePriority(t *testing.T) {
	cases := []struct {
		name, from string
		edit       func(e *editor)
		want       Status
	}{
		{"task answer, streaming due", "poll", func(e *editor) {
			e.sub(13, `"responseModes":["task"]`, `"responseModes":["streaming","task"]`)
		}, Fail},
		{"task answer, streaming due, listed in another order", "poll", func(e *editor) {
			e.sub(13, `"responseModes":["task"]`, `"responseModes":["task","streaming"]`)
		}, Fail},
		{"task answer, immediate listed too: a fallback the wire cannot judge", "poll", func(e *editor) {
			e.sub(13, `"responseModes":["task"]`, `"responseModes":["immediate","streaming","task"]`)
		}, Pass},
		{"task answer, the server does not declare streaming", "poll", func(e *editor) {
			e.sub(13, `"responseModes":["task"]`, `"responseModes":["streaming","task"]`)
			e.sub(3, `"modes":["immediate","streaming","task"]`, `"modes":["immediate","task"]`)
		}, Pass},
		{"task answer, the task never seen to end: not proven", "poll", func(e *editor) {
			e.sub(13, `"responseModes":["task"]`, `"responseModes":["streaming","task"]`)
			e.cut(29, 46)
		}, Skip},
		{"streaming answer to [task, streaming]", "streaming", func(e *editor) {
			e.sub(13, `"responseModes":["streaming"]`, `"responseModes":["task","streaming"]`)
		}, Pass},
		{"streaming answer, the server declares no streaming", "streaming", func(e *editor) {
			e.sub(3, `"modes":["immediate","streaming","task"]`, `"modes":["immediate","task"]`)
		}, Fail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := fixtureEditor(t, tc.from)
			tc.edit(e)
			v := judgeRecords(t, e.recs, nil)
			if got := statusOf(t, v, "S1905-MODE-SELECT"); got != tc.want {
				t.Errorf("S1905-MODE-SELECT %s, want %s:\n%s", got, tc.want, verdictText(v))
			}
			if f := failures(v); slices.ContainsFunc(f, func(id string) bool { return id != "S1905-MODE-SELECT" }) {
				t.Errorf("fails %v, want at most S1905-MODE-SELECT:\n%s", f, verdictText(v))
			}
		})
	}
}

// TestResumeEndWhileStatusMoves: tasks/result with lastSeqNr at the end of
// a stream that said isComplete: true may say isComplete: false while the
// status is still moving (SEP-1905 Case 3: completed comes after
// isComplete: true); once the client had seen the task terminal before it
// asked, isComplete: false is an S1905-RESUME failure.
func TestResumeEndWhileStatusMoves(t *testing.T) {
	for _, tc := range []struct {
		name     string
		seenDone bool
		want     Status
	}{
		{"status not yet seen terminal", false, Pass},
		{"status seen terminal before the request", true, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := fixtureEditor(t, "streaming-results")
			if !tc.seenDone {
				e.re(16, `"task":\{[^}]*\},`, ``) // the final response names no status
			}
			e.sub(31, `"isComplete":true`, `"isComplete":false`)
			v := judgeRecords(t, e.recs, nil)
			if got := statusOf(t, v, "S1905-RESUME"); got != tc.want {
				t.Errorf("S1905-RESUME %s, want %s:\n%s", got, tc.want, verdictText(v))
			}
		})
	}
}

// TestFallbackWarningPlaces: the fallback warning may be in the
// fallback-mode meta or in the created task's statusMessage (SEP-1905,
// Capability Negotiation); either one is enough, neither is a WARN.
func TestFallbackWarningPlaces(t *testing.T) {
	const meta, msg = `,"_meta":{"io.modelcontextprotocol/fallback-mode":"task"}`, `"statusMessage":"none of the requested response modes is supported; falling back to task mode",`
	cases := []struct {
		name string
		cut  []string
		want Status
	}{
		{"both", nil, Pass},
		{"statusMessage only", []string{meta}, Pass},
		{"meta only", []string{msg}, Pass},
		{"neither", []string{meta, msg}, Warn},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := fixtureEditor(t, "mode-fallback")
			for _, s := range tc.cut {
				e.sub(15, s, ``)
			}
			v := judgeRecords(t, e.recs, nil)
			if got := statusOf(t, v, "S1905-FALLBACK-WARNING"); got != tc.want {
				t.Errorf("S1905-FALLBACK-WARNING %s, want %s:\n%s", got, tc.want, verdictText(v))
			}
		})
	}
}
