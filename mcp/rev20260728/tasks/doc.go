// Package tasks is tasksim's vocabulary for the tasks extension of MCP
// 2026-07-28, io.modelcontextprotocol/tasks (SEP-2663): its capability
// ([Declared], [RequiredCapabilities]), the flat [CreateTaskResult] with
// resultType "task", [Task] and [DetailedTask] with result, error or
// inputRequests inlined, tasks/get, tasks/update and tasks/cancel, the
// notifications/tasks push on a subscriptions/listen stream ([TaskIDs]),
// the Mcp-Name routing of tasks/* ([NameRules]) and the methods of
// 2025-11-25 it removed ([IsRemovedMethod]).
//
// The text is modelcontextprotocol/ext-tasks
// specification/2026-07-28/tasks.md (reference copy
// ../shared/spec/ext-tasks-2026-07-28.md) with its schema
// schema/draft/schema.ts; comments cite it as "Tasks, <section>". The core
// of the revision is package mcp/rev20260728; the Tasks primitive of
// 2025-11-25 stays in mcp.
//
// A task's life on this wire:
//
//	tools/call (_meta declares the extension)
//	  └─► CreateTaskResult {resultType:"task", taskId, status, ttlMs, pollIntervalMs}
//	tasks/get {taskId} ──► GetTaskResult {resultType:"complete", DetailedTask}   (poll, honouring pollIntervalMs)
//	  input_required? ──► tasks/update {taskId, inputResponses} ──► {resultType:"complete"}
//	tasks/cancel {taskId} ──► {resultType:"complete"}   (cooperative, eventually consistent)
//	subscriptions/listen {notifications:{taskIds}} ──► notifications/tasks {DetailedTask}
package tasks
