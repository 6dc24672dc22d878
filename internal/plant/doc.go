// Package plant holds planted bugs: decorators that break a correct MCP
// server or client in one known way, so that the judge's own tests can
// show each bug is caught by exactly the rule that names it.
//
// A planted server bug wraps the reference server from outside (an
// http.Handler around its Streamable HTTP handler, or an mcp.Conn around
// a connection); a planted client bug wraps the reference client's
// transport or what it prints. Nothing in mcp/ knows about them.
//
// Planted bugs are for tests only: no command line reaches them.
package plant
