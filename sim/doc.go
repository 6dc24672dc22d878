// Package sim is tasksim's deterministic simulator: the reference server
// and reference clients in one process, over the in-memory transports
// (Streamable HTTP and stdio), through the in-process fault layer
// (faults.Conn), on a simulated clock (clock.Sim). A seed draws a workload
// and a fault schedule; the run's trace is judged by the rule catalog
// (safety), and every call must end with its correct result or an error a
// fault explains, also once the faults stop (liveness). A failing run is
// shrunk to a minimal schedule that fails the same way.
//
// A workload speaks one revision of MCP (Workload.Revision): 2025-11-25,
// the reference client's sessions, or 2026-07-28, the stateless client
// (client.Stateless) against a server serving both revisions or that one
// alone, with the faults that revision takes (revision.go, run26.go).
//
//	seed ─▶ Draw ─▶ Schedule{Workload, Faults}
//	                  │
//	                  ▼
//	client ─rec(side 1)─ faults.Conn ─rec(side 2)─ transport ─▶ server   (clock.Sim, RunUntil)
//	                  │                     over HTTP: faults.Handler ─ recorder.Proxy ─▶ server
//	                  ▼                                                  │
//	trace ─▶ check (server view, client view) + HTTP record (HTTP rules) + liveness ─▶ Result ─▶ Shrink
//
// Example:
//
//	s := sim.Draw(7, nil, nil) // seed 7: workload and faults
//	res, err := sim.Run(ctx, s, nil)
//	if err == nil && res.Failed() {
//		sh, _ := sim.Shrink(ctx, s, res.FailedRules()[0], nil)
//		data, _ := sim.MarshalSchedule(sh.Schedule) // tasksim sim --schedule FILE
//	}
//
//	s26 := sim.Draw(7, &sim.WorkloadOptions{Revision: sim.Revision20260728}, &sim.FaultOptions{Revision: sim.Revision20260728})
//
// What is deterministic, and where Go's scheduler can still choose, is in
// docs/sim.md.
package sim
