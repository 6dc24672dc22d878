#!/usr/bin/env node
// Real-peer interop check on MCP 2026-07-28: drive a server with the
// TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0) and the
// tasks extension's requester (@modelcontextprotocol/ext-tasks 0.2.2,
// io.modelcontextprotocol/tasks).
//
// Usage: node ext-tasks-client.mjs URL TOOL ARGS_JSON [--cancel]
//
// The SDK client connects pinned to 2026-07-28 (server/discover) and
// declares the tasks extension. The extension's session is made with
// createTaskSessionFromClient, given what the SDK client cannot do on its
// own for this wire (ext-tasks, "Adapters and schemas"): rawDispatch, a
// request coordinator on a Streamable HTTP transport of the same SDK that
// owns the request ids and matches the responses, and v2RequestFraming, the
// per-request _meta it adds to tools/call and tasks/*. Then
// session.callTool(TOOL, ARGS); a task-backed execution is settled: the
// extension polls tasks/get until the task is terminal and returns the
// inlined result. With --cancel the execution is cancelled instead
// (tasks/cancel) and the task read back through the extension's task
// controller (tasks/get).
//
// Prints ONE JSON line on stdout:
//   {era, protocolVersion, serverExtensions, kind, taskId, events, outcome,
//    result, error, cancelled, wire, failures}
// wire lists every HTTP POST: the routing headers sent, the body's method
// and id, the HTTP status, and for a JSON answer its resultType and status.
// Exit 0 when nothing in failures, 1 otherwise.
//
// Environment: EXT_TASKS_CLIENT_TIMEOUT_MS overall deadline (default 60000).

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, DispatchError } from '@modelcontextprotocol/ext-tasks/client';

const REVISION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const clientInfo = { name: 'tasksim-interop-ext-tasks', version: '0.0.0' };
const clientCapabilities = { extensions: { [TASKS]: {} } };

const [url, tool, argsText, flag] = process.argv.slice(2);
const cancel = flag === '--cancel';
const timeoutMs = Number(process.env.EXT_TASKS_CLIENT_TIMEOUT_MS || 60000);

const summary = {
  era: null,
  protocolVersion: null,
  serverExtensions: null,
  kind: null,
  taskId: null,
  events: [],
  outcome: null,
  result: null,
  error: null,
  cancelled: null,
  wire: [],
  failures: []
};

function errText(e) {
  if (e === undefined || e === null) return String(e);
  const code = e.code !== undefined ? ` (code ${e.code})` : '';
  const cause = e.cause ? `: ${errText(e.cause)}` : '';
  return `${e.name || 'Error'}: ${e.message}${code}${cause}`;
}

let printed = false;
function finish() {
  if (printed) return;
  printed = true;
  process.stdout.write(JSON.stringify(summary) + '\n');
  process.exitCode = summary.failures.length === 0 ? 0 : 1;
}

// loggingFetch notes each POST's routing headers and, for a JSON answer,
// what it says; SSE answers are noted by content type only.
const pendingLogs = [];
async function loggingFetch(input, init = {}) {
  const headers = new Headers(init.headers);
  const entry = {
    httpMethod: init.method || 'GET',
    protocolVersion: headers.get('mcp-protocol-version'),
    mcpMethod: headers.get('mcp-method'),
    mcpName: headers.get('mcp-name')
  };
  if (typeof init.body === 'string') {
    try {
      const m = JSON.parse(init.body);
      entry.method = m.method ?? null;
      entry.id = m.id ?? null;
    } catch {
      entry.method = null;
    }
  }
  summary.wire.push(entry);
  let res;
  try {
    res = await fetch(input, init);
  } catch (e) {
    if (e?.name === 'AbortError') entry.aborted = true;
    throw e;
  }
  entry.status = res.status;
  entry.contentType = res.headers.get('content-type');
  if ((entry.contentType || '').startsWith('application/json')) {
    pendingLogs.push(res.clone().text().then((text) => {
      try {
        const m = JSON.parse(text);
        if (m.result) {
          entry.resultType = m.result.resultType ?? null;
          if (m.result.status !== undefined) entry.taskStatus = m.result.status;
        }
        if (m.error) entry.errorCode = m.error.code;
      } catch {
        entry.unparsed = true;
      }
    }, () => {}));
  }
  return res;
}

// rawCoordinator sends JSON-RPC requests on its own transport, with ids it
// owns ("raw-N"), and resolves each with the response of the same id, in
// the shape ext-tasks expects from rawDispatch ({kind, result|error}).
async function rawCoordinator() {
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: loggingFetch });
  const pending = new Map();
  let next = 0;
  transport.onmessage = (msg) => {
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.error) p.resolve({ kind: 'error', error: msg.error });
    else p.resolve({ kind: 'result', result: msg.result });
  };
  // Closing the transport aborts what is still in flight: a tasks/get
  // the extension gave up on (its signal dropped it when the task ended)
  // may not have been answered yet. That abort is ours, not a failure.
  let closing = false;
  transport.onerror = (e) => {
    if (closing && e?.name === 'AbortError') return;
    summary.failures.push(`raw transport: ${errText(e)}`);
  };
  await transport.start();
  const dispatch = (request, options = {}) => {
    const id = `raw-${++next}`;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      const drop = (e) => {
        if (pending.delete(id)) reject(new DispatchError(`raw dispatch of ${request.method}: ${errText(e)}`, false, { cause: e }));
      };
      options.signal?.addEventListener('abort', () => drop(options.signal.reason), { once: true });
      transport.send({ jsonrpc: '2.0', id, ...request }).catch(drop);
    });
  };
  return {
    dispatch,
    close: () => {
      closing = true;
      return transport.close();
    }
  };
}

function textOf(result) {
  return (result?.content || []).map((b) => b.text || '').join('');
}

async function main() {
  const client = new Client(clientInfo, {
    capabilities: clientCapabilities,
    versionNegotiation: { mode: { pin: REVISION } }
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: loggingFetch });
  await client.connect(transport);
  summary.era = client.getProtocolEra() ?? null;
  summary.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  summary.serverExtensions = Object.keys(client.getServerCapabilities()?.extensions || {});

  const raw = await rawCoordinator();
  const session = createTaskSessionFromClient(client, {
    endpointId: url,
    rawDispatch: raw.dispatch,
    v2RequestFraming: { protocolVersion: REVISION, clientInfo, clientCapabilities }
  });
  try {
    const execution = await session.callTool(tool, JSON.parse(argsText || '{}'));
    summary.kind = execution.kind;
    summary.taskId = execution.handle?.taskId ?? null;
    if (cancel) {
      if (execution.kind !== 'task') {
        summary.failures.push(`--cancel: the call was ${execution.kind}, not a task`);
        return;
      }
      await execution.cancel();
      const { outcome } = await execution.settle();
      summary.outcome = outcome.status;
      const view = await session.task(summary.taskId).snapshot();
      summary.cancelled = { status: view.status, statusMessage: view.statusMessage ?? null };
      return;
    }
    const { outcome } = await execution.settle({
      onEvent: (ev) => {
        if (ev.type === 'task') summary.events.push(ev.task.status);
      }
    });
    summary.outcome = outcome.status;
    if (outcome.status === 'completed') {
      summary.result = outcome.result;
      summary.resultText = textOf(outcome.result);
    } else if (outcome.status === 'failed') {
      summary.error = errText(outcome.error);
    }
  } finally {
    await session.close();
    await raw.close();
    await client.close();
    await Promise.all(pendingLogs);
  }
}

const deadline = setTimeout(() => {
  summary.failures.push(`deadline of ${timeoutMs} ms passed`);
  finish();
  process.exit(1);
}, timeoutMs);

main().then(
  () => {
    clearTimeout(deadline);
    finish();
  },
  (e) => {
    clearTimeout(deadline);
    summary.failures.push(errText(e));
    finish();
  }
);
