// Package interop holds tasksim's tests against real peers: the official
// MCP TypeScript SDK and the official conformance suite, both from npm,
// driving the real tasksim binary.
//
// The Node side is set up with (cd interop && npm ci); .ci/run does it. The
// tests skip when interop/node_modules is missing, unless
// TASKSIM_INTEROP=require, which .ci/run sets, makes that a failure.
package interop
