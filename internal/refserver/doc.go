// Package refserver is the one harness that starts tasksim's reference
// server, in the three ways its users need:
//
//   - in this process, behind Streamable HTTP on a loopback port
//     ([Listen]; [Start] for tests): tasksim serve, tasksim load
//     --in-process, and the tests of every package that drives the server;
//     or over stdio ([ServeStdio]): tasksim serve --stdio;
//   - as a child process, the tasksim binary's serve command ([StartChild]):
//     tasksim load measures the server's CPU apart from its own, and the
//     interop tests run the binary their peers see;
//   - the server itself, an mcp.Endpoint ([HTTP.Server]), for callers that
//     want its sessions without a socket.
//
// Each returns once the server listens, on a ready signal, never after a
// sleep or by scraping a log: Listen binds before it returns; a child
// writes its URL on a pipe (tasksim serve --ready-fd) once it listens,
// and closes it, so a child that dies first is seen at once.
//
//	StartChild ──exec──▶ tasksim serve --addr 127.0.0.1:0 --ready-fd 3
//	    ▲                        │ listen, then
//	    └──── "http://127.0.0.1:PORT/mcp\n" on fd 3 (pipe) ◀───┘
//
// The server's and the transport's options are passed through untouched
// (*server.Options, *streamhttp.Options), so every field they have, a
// clock or a source of randomness included, reaches the server.
//
// Example, in a test:
//
//	url, srv := refserver.Start(t, &server.Options{MaxTasksPerSession: 4})
//	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: url})
package refserver
