// Package faults injects message-level faults into MCP traffic: an SSE event
// dropped, a segment delivered twice, a stream cut after its third event, a
// request answered 503 without reaching the server. Faults are addressed to
// protocol messages (by stream, JSON-RPC method, request id, task id,
// seqNr/seq, position in a stream) or drawn with a probability from the
// run's seed, never by byte offsets.
//
// A [Fault] is a small type that looks at one [Msg] and returns an [Action].
// The same faults serve three places: an HTTP middleware ([Handler]:
// requests, JSON answers, whole SSE events), a stdio line filter ([Lines],
// both directions), and an mcp.Conn decorator ([Conn]) for in-process runs. Each place turns a
// message into a Msg, asks a [Set] for the actions, carries them out, and
// writes every applied decision into the trace.
//
//	message ──▶ Set.Decide(msg) ──▶ []Applied ──▶ place: pass │ drop │ duplicate │ delay │ cut │ stall │ status │ rewrite
//	                 │                                │
//	       seed + message identity              trace fault records
//
// Each fault has a meaning on one protocol revision or on every one
// (Kind.Revisions): it lets the messages of another pass, and a spec that
// confines it to another with revision= is refused when it is read.
//
// Decisions are a function of the seed, the fault's position in the set
// and the message's identity (its stream and position, ids and numbers),
// not of goroutine timing: the same seed on the same traffic takes the
// same decisions.
//
// Faults are named by a spec, parsed by [Parse]:
//
//	drop-sse-event:method=tools/call,nth=3
//	duplicate-seqnr:p=0.2
//	disconnect:stream=post,after=2
//	delay:d=200ms,jitter=50ms,method=tasks/get
//
// Around any HTTP handler:
//
//	b, err := faults.Builtin().Parse("drop-sse-event:method=tools/call,nth=2")
//	set := faults.NewSet(seed, b)
//	http.Handle("/mcp", faults.Handler(mcpHandler, set, nil))
//
// See docs/faults.md for every fault and its parameters.
package faults
