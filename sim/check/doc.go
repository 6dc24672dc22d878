// Package check is tasksim's rule catalog as code: it reads an observed
// history (the records of a trace, in order) and judges it rule by rule,
// each rule by its stable ID, the spec sentence it enforces and the side
// it judges (server, client, transport).
//
//	trace records ──▶ Checker.Add (one pass) ──▶ sessions, streams, requests, tasks (what is open)
//	                         │ rule hooks: pass / fail with evidence
//	                         ▼
//	                  Checker.Verdict ──▶ per rule PASS / FAIL / SKIP (why), findings with record numbers
//
// A trace is the client's view when a fault sits between the client and
// the server (docs/trace-format.md): what the fault layer did is in its
// fault records. The checker reads them so that an anomaly a fault made
// (a seqNr gap after a dropped event, a duplicate it injected) is not held
// against the server, while the client's reaction to it (resuming,
// refetching, deduplicating) is still judged.
//
// Example:
//
//	r, _ := traces.Open("run.trace")
//	v, err := check.Check(r.Records(), nil)
//	fmt.Print(v.Text())
package check
