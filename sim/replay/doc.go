// Package replay replays traces (tasksim replay): the client
// half of a recorded conversation against a server, or its server half to
// a client, and reports the first place where the live conversation
// differs from the recorded one.
//
//	trace ──▶ loadScript (one end's view, in order) ──▶ steps: send │ expect head │ expect message │ expect end │ cut
//	                                                         │
//	   replayer ──▶ recorder (new trace) ──▶ [faults.Handler] ──▶ server under test
//	       ▲  live answers, per stream (liveChan)               │
//	       └────────────────────────────────────────────────────┘
//	   compare (ids mapped, times ignored) ──▶ first Divergence
//	   new trace ──▶ check.Check ──▶ Verdict
//
// Example:
//
//	r, _ := traces.Open("bug.trace")
//	res, err := replay.Replay(ctx, r, replay.Target{URL: "http://127.0.0.1:7070/mcp"}, &replay.ReplayOptions{Speed: 1})
//	if err == nil && res.Divergence != nil {
//		fmt.Print(res.Divergence) // record, stream, message, JSON path, both sides
//	}
//
// docs/replay.md describes the matching and the mapping of ids.
package replay
