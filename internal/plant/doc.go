// Package plant holds planted bugs: decorators that break a correct MCP
// server or client in one known way, so that the judge's own tests can
// show each bug is caught by exactly the rule that names it, and a user
// can stand up a known-buggy server to replay a bug trace against.
//
// A planted server bug wraps the reference server from outside: an
// mcp.Endpoint around the server, whose hooks see what the client sends
// and rewrite what the server answers and sends; an http.Handler around
// its Streamable HTTP handler, which rewrites the events and statuses it
// writes; or, for the two bugs a rewrite cannot make, a narrow option of
// the server (its task id source, its task scope). A planted client bug
// wraps the reference client's transport or what it prints. Nothing in
// mcp/ knows about them. The endpoint bugs are bugs of the 2025-11-25
// session era: a server that also serves the stateless era (2026-07-28,
// mcp.StatelessEndpoint) keeps serving it, unplanted.
//
//	client ──HTTP──▶ [Handler] ──▶ streamhttp ──▶ [HTTPEndpoint] ──▶ [Endpoint] ──▶ server (+ Server option)
//	client ──stdio─────────────────▶ stdio ──────────────────────▶ [Endpoint] ──▶ server (+ Server option)
//
// Bugs lists the known bugs by name, with how each is planted (Plant) and
// the rule that catches it; tasksim serve --bug NAME and tasksim sim
// --bug NAME plant one (--bug list lists them):
//
//	b, _ := plant.Named("seqnr-from-zero")
//	s, _ := refserver.Listen(b.RefServer(nil)) // the reference server, numbering segments from 0
package plant
