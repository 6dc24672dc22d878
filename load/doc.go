// Package load is tasksim's load generator: it drives slow_text tasks
// against an MCP server in several delivery modes at once and measures,
// per mode, what DESIGN.md's "Load metrics" define: time to first content,
// time to result, discovery delay, requests and bytes per task, server CPU
// per task, start lag, and errors by kind.
//
//	cfg := load.Config{Modes: modes, Rate: 20, Duration: load.Duration(30 * time.Second)}
//	res, err := load.Run(ctx, cfg, load.Options{Targets: []load.Target{{URL: url}}})
//	if err != nil && res == nil {
//		return err
//	}
//	return load.TableReporter(res)(os.Stdout)
//
// # How a run works
//
//	Pacer ─(intended start of arrival n)─▶ scheduler ─ go task ─▶ Session.CallTool (mode n mod M)
//	                                          │ (sends every arrival due    │
//	                                          │  at each wake-up)           ▼ CallResult + timeline
//	                                          │                      measure ─▶ shard[k] (HDR histograms,
//	                                          ▼                                  counters; a lock each)
//	            every Interval: collector ─ swap shards ─▶ interval set ─┬─▶ .hlog lines (MODE.METRIC)
//	                                                                     ├─▶ Result.Intervals, Progress
//	                                                                     └─▶ totals ─▶ Result.Modes
//
// The open model (Config.Rate, the default) starts tasks on the Pacer's
// schedule whatever the server does; the closed model (Config.Concurrency)
// runs that many clients per mode. Every latency counts from the task's
// intended start, so a late start (coordinated omission) shows in the
// latencies and in the start lag, which is recorded per task. A task later
// than Config.MaxLag stops the schedule with ErrOverloaded: the machine
// cannot drive the rate, and the run says so rather than drop load.
//
// Histograms (hdrhistogram-go, 3 significant digits, nanoseconds from 1 µs
// to 1 h) live in a few shards, one per processor, never one per client or
// task: memory is bounded by shards × modes × 2 histogram sets whatever
// the load. Each interval the collector merges them into one interval set,
// writes it to the .hlog interval log, and adds it to the totals;
// MergeHlogs adds logs up exactly.
//
// # Choices
//
//   - Tasks share Config.Sessions sessions per mode, round-robin (a session
//     per task would cost an initialize and a standalone stream each, and
//     the reference server allows 10,000 live tasks per session). Sessions
//     are per mode, so a mode's wire counters are its own.
//   - Requests per task come from the call's timeline: the transport
//     attributes every HTTP request to the JSON-RPC id it carries, so calls
//     sharing a session are counted apart (CallResult.Counts, a difference
//     of the connection's counters, would include the other calls'
//     traffic). Bytes per task are the mode's sessions' counters divided
//     by its tasks: they include what no single call owns, the standalone
//     stream's notifications.
//   - poll:P sessions declare no SEP-2679 partials and open no standalone
//     GET stream: requests and bytes are polling's alone. The other modes
//     are the reference client as it is, standalone stream included.
//   - Time to first content is the first segment or partial; for modes
//     that get content only with the result, the result.
//   - Discovery delay is the result's arrival minus the server's
//     completion time (mcp.MetaCompletedAt from the reference server, else
//     the terminal task's lastUpdatedAt, which has millisecond
//     resolution): it needs the server's clock to agree with the client's,
//     as on one machine.
package load
