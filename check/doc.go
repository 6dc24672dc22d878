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
// When a fault layer sits between the client and the server, what it did
// is in its fault records. A trace recorded at one point (next to the
// client, on the wire) is the client's view: the checker reads the fault
// records so that an anomaly a fault made (a seqNr gap after a dropped
// event, a duplicate it injected) is not held against the server, while
// the client's reaction to it (resuming, refetching, deduplicating) is
// still judged. A trace that holds both sides of the layer (each record's
// traces.Side, docs/trace-format.md, "Whose view") is judged on two views:
// server and transport rules on the server's, client rules on the
// client's, fault records in both (views.go).
//
// Example:
//
//	r, _ := traces.Open("run.trace")
//	v, err := check.Check(r.Records(), nil)
//	fmt.Print(v.Text())
package check
