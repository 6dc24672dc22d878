// Package client is tasksim's reference MCP client: initialization with
// the capabilities of both streaming SEPs, tool calls in every mode, the
// task methods, and a timeline of everything a call saw, for the load
// generator and the simulator to read.
//
//	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: "http://127.0.0.1:7070/mcp"})
//	if err != nil {
//		return err
//	}
//	defer sess.Close()
//	res, err := sess.CallTool(ctx, client.CallOptions{
//		Name: "slow_text", Args: map[string]any{"chunks": 5}, Mode: client.ModeStreaming,
//	})
//	// res.Content, res.Task, res.Timeline, res.Counts ...
//
// # Sessions
//
// Connect sends initialize, declaring tasks.responses.modes (SEP-1905) and
// tasks.streaming.partial (SEP-2679) unless Options say otherwise, then
// notifications/initialized. One goroutine reads the connection and hands
// each message to whoever waits for it:
//
//	Conn.Read ─▶ reader ─┬─ response, by id ───▶ waiter inbox (0..N messages: SEP-1905
//	                     │                       streaming answers share one id)
//	                     ├─ tasks/status, tasks/partial, by taskId ─▶ the call following
//	                     │     the task, or kept until one does (they may come first)
//	                     ├─ progress, by token ─▶ the call that asked
//	                     ├─ request from the server ─▶ ping answered, others -32601
//	                     └─ *mcp.StreamError ─▶ the waiter whose stream broke
//
// # Calls
//
// CallTool sends tools/call in the asked Mode and then follows the
// server's answer, whatever shape it has (SEP-1905, "Client Implementation
// Guide"): a tool result ends the call; a CreateTaskResult starts tasks/get
// polling at the task's pollInterval, cut short by a terminal status
// notification, then tasks/result; a streaming response feeds a segment
// tracker that merges segments from every mechanism by seqNr, ignores
// duplicates, fills gaps and a lost stream with tasks/result and
// lastSeqNr, and ends on isComplete. SEP-2679 partial notifications are
// tracked per task by seq (gaps are data loss, duplicates and partials
// after a terminal status are dropped); the result is always the
// canonical tasks/result. A task that expires or vanishes ends the call
// with an incomplete result and a *TaskError.
//
// The task's status comes from every mechanism at once, and they race: a
// tasks/get answered working may land after the tasks/cancel answered
// cancelled. The call keeps a terminal status once seen (2025-11-25 Tasks,
// "Task Status Lifecycle") and orders the others by lastUpdatedAt; what
// it ignores is on the timeline as discarded.
//
// A call's state has one owner, the goroutine running CallTool: a phase
// (calling, task, streaming, resuming, done) that moves only by its
// transition table, and the set of its requests in flight (tasks/get,
// tasks/result with or without lastSeqNr, tasks/cancel). The reader only
// hands messages over; the call takes whatever is queued at once.
//
// # The stateless era (2026-07-28)
//
// Client.ConnectStateless opens a connection with no handshake; give a
// streamhttp.ClientTransport Revision mcp.Revision20260728. Every request
// carries its own _meta; Stateless.Discover asks server/discover;
// Stateless.CallTool follows one tools/call through multi round-trip
// input (InputRequiredResult, retried with a new id), the task the server
// may create (tasks/get at pollIntervalMs, tasks/update for its
// inputRequests, tasks/cancel), the ttl as backstop, and re-issues with a
// new id a request whose stream broke (StatelessResult.Reissues). An
// unknown resultType is ErrInvalidResult. The 2025-11-25 Session above
// is untouched by it.
//
// # Time
//
// Every wait of the client (the poll and cancel timers, the ttl check,
// the bounds on its own writes) and every timestamp of a timeline reads
// Options.Clock, the wall clock unless set. With a clock.Sim a call moves
// only as the simulation moves time; give the transport the same clock
// (streamhttp.ClientTransport.Clock) for its retries and waits.
//
// # Choices where the texts leave room
//
//   - lastSeqNr below 1 is invalid (SEP-1905, "Resuming Streaming"), so a
//     stream missing seqNr 1 is completed with the canonical tasks/result.
//   - A streaming call polls tasks/get only after a whole poll interval of
//     silence on its stream; task and partial calls postpone polls while
//     notifications arrive. ModePoll acts on polls alone.
//   - Duplicates counts every segment or partial received again, including
//     the overlap of a gap-filling tasks/result.
//   - Counts are differences of the connection's counters: calls running
//     at once on one session see each other's traffic.
package client
