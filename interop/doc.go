// Package interop holds tasksim's tests against real peers: the official
// MCP TypeScript SDK (v1, and the v2 server and client packages, the
// latter with the 2026-07-28 tasks extension's client), server-everything
// and the official conformance suite (from npm), the official Go SDK's conformance everything-server and a
// task server on mark3labs/mcp-go (interop/mcpgo, its own module), from
// the Go module proxy, driving the real tasksim binary.
//
// The Node side is set up with (cd interop && npm ci); .ci/run does it. The
// tests skip when interop/node_modules is missing, unless
// TASKSIM_INTEROP=require, which .ci/run sets, makes that a failure.
package interop
