// Package rev20260728 is tasksim's vocabulary for the core of MCP revision
// 2026-07-28, the stateless revision: the per-request _meta fields
// ([RequestMeta], [DecodeRequestMeta]), resultType ([ResultType],
// [ResultTypeOf]), server/discover ([DiscoverResult]), subscriptions/listen
// with its acknowledgement and the notifications it carries
// ([ListenParams], [SubscriptionFilter]), multi round-trip requests
// ([InputRequiredResult], [InputResponses]), the Streamable HTTP routing
// headers ([CheckHeaders], [EncodeHeaderValue]), the Mcp-Param headers of
// x-mcp-header tool arguments ([ParamHeaders], [CheckParamHeaders],
// [SetParamHeaders]), a request read once for all of these ([ReadRequest])
// and the error codes
// -32020, -32021 and -32022 with their data.
//
// The texts are the specification at
// modelcontextprotocol/modelcontextprotocol docs/specification/2026-07-28
// and schema/2026-07-28/schema.ts; comments cite them by page and section
// ("2026-07-28 Overview, "_meta"" is basic/index.mdx). The tasks
// extension of this revision is package mcp/rev20260728/tasks.
//
// The package sits beside package mcp, whose types are those of
// 2025-11-25, and shares only what both revisions define alike: the
// JSON-RPC envelope ([mcp.Message], [mcp.ID], [mcp.Error]) and
// [mcp.Implementation]. Each later revision gets its own package. It
// does no I/O.
//
// A stateless request, as a server reads it:
//
//	POST body ──► mcp.DecodeMessage ──► ReadRequest(msg): HasMeta, Meta ──► -32602 when a required field is missing
//	headers ────► Request.CheckHeaders(h, rules, tools) ─────────────► -32020 on a missing or mismatched header (Mcp-Param-* too)
//	version ────► mcp.RevisionOf ───────────────────────────────────► -32022 (UnsupportedProtocolVersion) when unknown
//
// and a result, as a client reads it: ResultTypeOf(result, extensions...)
// says complete, input_required or an extension's value, and anything
// else is invalid.
package rev20260728
