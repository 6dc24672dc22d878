// Command conformanceclient runs tasksim's reference client (mcp/client
// over mcp/streamhttp) in the client scenarios of the official MCP
// conformance suite (@modelcontextprotocol/conformance 0.1.16):
//
//	node .../conformance/dist/index.js client --command /path/to/conformanceclient --scenario initialize
//
// The suite starts a test server, then runs the command with the server's
// URL appended as the last argument and the scenario's name in
// MCP_CONFORMANCE_SCENARIO. What the client does, per scenario:
//
//	initialize   connect (initialize, notifications/initialized), close
//	tools_call   connect, tools/call add_numbers {"a":5,"b":3} without a task, close
//	sse-retry    connect, tools/call test_reconnection without a task: the
//	             server closes the POST stream after a priming event with
//	             retry 500; the client resumes it with GET + Last-Event-ID
//	             after 500 ms and gets the result there
//
// It prints one JSON line on stdout, {"scenario", "ok", "result", "error"},
// and exits 0 only if the scenario's steps succeeded and, for a tool call,
// the complete result arrived without isError. interop/run-conformance-client.sh
// judges the suite's checks.json together with that line.
package main
