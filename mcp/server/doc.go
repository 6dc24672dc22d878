// Package server is tasksim's reference MCP server: MCP 2025-11-25 Tasks
// with SEP-1905 response modes (immediate, streaming, task; partial-content
// with seqNr; resume with lastSeqNr) and SEP-2679 partial notifications.
//
// A Server is an mcp.Endpoint: give it to a transport.
//
//	srv := server.New(nil) // every mode, partials, the built-in tools
//	http.Handle("/mcp", streamhttp.NewHandler(srv, nil))
//	// or: stdio.Serve(ctx, srv, os.Stdin, os.Stdout, nil)
//
// How a task-augmented tools/call flows:
//
//	tools/call ──DecideMode──▶ task created (working) ──▶ tool runs
//	                                                        │ Call.Emit(blocks)
//	        ┌───────────────────────────────────────────────┤
//	        ▼                       ▼                       ▼
//	segment, seqNr from 1   streaming answer:        notifications/tasks/partial,
//	(kept for tasks/result  one more response with   seq from 0 (client declared
//	 and lastSeqNr)         the request's id         tasks.streaming.partial)
//	                                                        │ tool returns
//	                        terminal status ──▶ final streaming response (isComplete)
//	                                        ──▶ tasks/result waiters answered
//	                                        ──▶ notifications/tasks/status
//
// Tasks live in memory, bound to their session, until their ttl: see
// docs/server.md for the limits and for the choices made where the protocol
// texts leave room. Time comes from an injectable clock (Options.Clock): a
// clock.Sim drives ttl expiry, tool delays and the immediate window in
// simulated time. Task ids come from an injectable reader (Options.Rand):
// crypto/rand by default, a seeded one for repeatable simulations.
package server
