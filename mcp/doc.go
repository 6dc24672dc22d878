// Package mcp is tasksim's vocabulary for the Model Context Protocol
// (revision 2025-11-25) with its Tasks primitive and the two draft streaming
// extensions: SEP-1905 (response modes, partial-content with seqNr, resume
// with lastSeqNr) and SEP-2679 (notifications/tasks/partial with seq).
//
// It holds the JSON-RPC 2.0 envelope ([Message], [ID], [Error],
// [DecodeMessage]), the protocol's data types ([Task], [ContentBlock],
// [Segment], capabilities, tool and task params and results), method names
// and meta keys, SEP-1905 mode negotiation as a pure function
// ([DecideMode]), and the contract between the server side of a transport
// and the protocol ([Endpoint], [Session], [Replier], [Outbox]).
//
// [Revision] names the protocol revisions tasksim knows, the era of a
// connection or message. The vocabulary of the stateless revision
// 2026-07-28 lives beside this one, in mcp/rev20260728 and its tasks
// extension in mcp/rev20260728/tasks, so that a revision is an addition.
//
// The package does no I/O. Transports live in mcp/stdio and mcp/streamhttp,
// the reference server in mcp/server.
//
// Where the texts leave room, tasksim follows the text and documents the
// choice: seqNr counts from 1 (SEP-1905), seq from 0 (SEP-2679); a streaming
// call answers with several responses that share the request's id, as
// SEP-1905 says, although plain JSON-RPC allows one.
package mcp
