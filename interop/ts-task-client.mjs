#!/usr/bin/env node
// Real-peer interop check: drive a tasksim server with the official MCP
// TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) in task mode.
//
// Usage: node ts-task-client.mjs URL [TOOL=slow_text] [ARGS_JSON={}]
//
// Like a real client it initializes, calls tools/list (so the SDK caches the
// tool's execution.taskSupport), then calls
// client.experimental.tasks.callToolStream(params, CallToolResultSchema,
// {task: {ttl: 60000}}), which sends tools/call with params.task = {ttl},
// expects a CreateTaskResult, polls tasks/get every task.pollInterval ms and,
// once the task is completed, calls tasks/result.
//
// Prints ONE JSON line on stdout:
//   {taskId, statuses, result, error, ...diagnostics}
// Exit 0 only if a task was created, the last status seen is "completed" and a
// result with non-empty content arrived; exit 1 otherwise.
//
// Environment:
//   TASK_CLIENT_TIMEOUT_MS  overall deadline (default 60000)
//   TASK_CLIENT_TRACE=1     log every HTTP exchange to stderr

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const url = process.argv[2];
const toolName = process.argv[3] || 'slow_text';
const argsText = process.argv[4] || '{}';
const timeoutMs = Number(process.env.TASK_CLIENT_TIMEOUT_MS || 60000);
const trace = process.env.TASK_CLIENT_TRACE === '1';

const summary = {
  taskId: null,
  statuses: [],
  result: null,
  error: null,
  tool: toolName,
  toolTaskSupport: null,
  serverTasksCapability: null,
  protocolVersion: null,
  sessionId: null,
  statusNotifications: [],
  transportErrors: []
};

let printed = false;
function finish(ok) {
  if (printed) return;
  printed = true;
  process.stdout.write(JSON.stringify(summary) + '\n');
  process.exitCode = ok ? 0 : 1;
}

function errText(e) {
  if (e === undefined || e === null) return String(e);
  if (typeof e === 'object' && 'message' in e) {
    const code = 'code' in e && e.code !== undefined ? ` (code ${e.code})` : '';
    return `${e.message}${code}`;
  }
  return String(e);
}

if (!url) {
  summary.error = 'usage: ts-task-client.mjs URL [TOOL] [ARGS_JSON]';
  finish(false);
  process.exit(1);
}

let toolArgs;
try {
  toolArgs = JSON.parse(argsText);
} catch (e) {
  summary.error = `invalid ARGS_JSON: ${errText(e)}`;
  finish(false);
  process.exit(1);
}

// Optional wire trace (stderr only, stdout stays one JSON line).
const tracingFetch = async (input, init = {}) => {
  const headers = new Headers(init.headers || {});
  const hdrs = {};
  headers.forEach((v, k) => {
    hdrs[k] = v;
  });
  process.stderr.write(`> ${init.method || 'GET'} ${input} ${JSON.stringify(hdrs)} ${init.body ?? ''}\n`);
  const res = await fetch(input, init);
  process.stderr.write(`< ${res.status} ${res.headers.get('content-type') ?? ''} session=${res.headers.get('mcp-session-id') ?? ''}\n`);
  return res;
};

const client = new Client({ name: 'tasksim-ts-task-client', version: '1.0.0' }, { capabilities: {} });
client.onerror = e => {
  if (summary.transportErrors.length < 20) summary.transportErrors.push(errText(e));
};
// notifications/tasks/status (and anything else unhandled) lands here; the SDK
// itself ignores them, we only record them for diagnostics.
client.fallbackNotificationHandler = async n => {
  if (n.method === 'notifications/tasks/status' && summary.statusNotifications.length < 50) {
    summary.statusNotifications.push({ taskId: n.params?.taskId, status: n.params?.status });
  }
};

const transport = new StreamableHTTPClientTransport(new URL(url), trace ? { fetch: tracingFetch } : undefined);
const abort = new AbortController();

const deadline = setTimeout(() => {
  summary.error = summary.error ?? `timed out after ${timeoutMs} ms`;
  abort.abort(new Error(`timed out after ${timeoutMs} ms`));
  finish(false);
  // Give the SDK a moment to send notifications/cancelled, then leave.
  setTimeout(() => process.exit(1), 500).unref();
}, timeoutMs);

async function main() {
  await client.connect(transport, { signal: abort.signal });
  summary.protocolVersion = transport.protocolVersion ?? null;
  summary.sessionId = transport.sessionId ?? null;
  summary.serverTasksCapability = client.getServerCapabilities()?.tasks ?? null;

  // A real client lists tools first; the SDK caches execution.taskSupport.
  const tools = await client.listTools(undefined, { signal: abort.signal });
  const tool = tools.tools.find(t => t.name === toolName);
  summary.toolTaskSupport = tool ? (tool.execution?.taskSupport ?? null) : 'tool not listed';

  const stream = client.experimental.tasks.callToolStream({ name: toolName, arguments: toolArgs }, CallToolResultSchema, {
    task: { ttl: 60000 },
    signal: abort.signal,
    timeout: timeoutMs
  });

  let created = false;
  for await (const message of stream) {
    switch (message.type) {
      case 'taskCreated':
        created = true;
        summary.taskId = message.task.taskId;
        summary.statuses.push(message.task.status);
        break;
      case 'taskStatus':
        summary.statuses.push(message.task.status);
        break;
      case 'result':
        summary.result = message.result;
        break;
      case 'error':
        summary.error = errText(message.error);
        break;
      default:
        break;
    }
  }

  const last = summary.statuses[summary.statuses.length - 1];
  const hasContent = Array.isArray(summary.result?.content) && summary.result.content.length > 0;
  if (!created && !summary.error) summary.error = 'no task was created';
  else if (last !== 'completed' && !summary.error) summary.error = `final task status is ${last}`;
  else if (!hasContent && !summary.error) summary.error = 'no result with content';
  return created && last === 'completed' && hasContent && !summary.error;
}

let ok = false;
try {
  ok = await main();
} catch (e) {
  summary.error = summary.error ?? errText(e);
  ok = false;
} finally {
  clearTimeout(deadline);
  try {
    await client.close();
  } catch {
    // ignore
  }
}
finish(ok);
