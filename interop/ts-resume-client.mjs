#!/usr/bin/env node
// Real-peer resumption check: the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk 1.32.2, Streamable HTTP, resumability on) runs
// two streaming tool calls at once and a task-augmented call, for a proxy
// to cut one of the streams.
//
// Usage: node ts-resume-client.mjs URL PROFILE
//
// PROFILE names the server's tools: "everything" (server-everything:
// trigger-long-running-operation, simulate-research-query) or "tasksim"
// (tasksim serve: slow_text, task_only). After initialize (id 0) and
// tools/list (id 1), the client sends, in this order:
//   B (id 2)  a plain tools/call with a progress token that streams for long;
//   A (id 3)  a shorter one of the same kind, 4 progress notifications then
//             its result: the one to cut, before its response
//             (disconnect:stream=post,id=3,at=before), while B streams;
//   C (id 4+) once A's 4th (last) progress notification arrived, a
//             task-augmented call (callToolStream with a task), polled to
//             its result.
// The SDK resumes a cut POST stream with GET and Last-Event-ID. That GET is
// held until C's CreateTaskResult arrived: C was sent after the client saw
// A's last event before the cut, so the server stored C's answer after that
// event, and a replay after Last-Event-ID shows whether it carries another
// stream's messages. This is ordering by cause, not by timing.
//
// Prints ONE JSON line on stdout:
//   {calls: {A, B, C}, resumes: [Last-Event-ID...], transportErrors}
// A and B: {id, text, progress: [n...], error}; C: {taskId, statuses, text,
// error}. Exit 0 when every call ended (with a result or an error), 1 on
// the deadline (TS_RESUME_TIMEOUT_MS, default 60000).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, profile] = process.argv.slice(2);
const timeoutMs = Number(process.env.TS_RESUME_TIMEOUT_MS || 60000);

const profiles = {
  everything: {
    B: { name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 6 } },
    A: { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 4 } },
    C: { name: 'simulate-research-query', arguments: { topic: 'resumability' } }
  },
  tasksim: {
    B: { name: 'slow_text', arguments: { chunks: 8, chunkSize: 8, intervalMs: 150 } },
    A: { name: 'slow_text', arguments: { chunks: 4, chunkSize: 8, intervalMs: 150 } },
    C: { name: 'task_only', arguments: { durationMs: 500, text: 'task C' } }
  }
};

const out = { profile, calls: {}, resumes: [], transportErrors: [] };
let printed = false;
function finish(code) {
  if (printed) return;
  printed = true;
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exitCode = code;
}
const errText = e => (e && typeof e === 'object' && 'message' in e ? `${e.message}${e.code !== undefined ? ` (code ${e.code})` : ''}` : String(e));
const textOf = r => (Array.isArray(r?.content) ? r.content.map(b => b.text ?? '').join('') : null);

const p = profiles[profile];
if (!url || !p) {
  out.error = 'usage: ts-resume-client.mjs URL everything|tasksim';
  finish(1);
  process.exit(1);
}

// C's CreateTaskResult opens the gate for the resuming GET.
let openGate;
const gate = new Promise(resolve => (openGate = resolve));
const gatedFetch = async (input, init = {}) => {
  const last = new Headers(init.headers || {}).get('last-event-id');
  if ((init.method || 'GET') === 'GET' && last) {
    out.resumes.push(last);
    await gate;
  }
  return fetch(input, init);
};

const transport = new StreamableHTTPClientTransport(new URL(url), {
  fetch: gatedFetch,
  reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 }
});
const client = new Client({ name: 'tasksim-ts-resume-client', version: '1.0.0' }, { capabilities: {} });
client.onerror = e => {
  if (out.transportErrors.length < 20) out.transportErrors.push(errText(e));
};

const abort = new AbortController();
const deadline = setTimeout(() => {
  out.error = `timed out after ${timeoutMs} ms`;
  abort.abort(new Error(out.error));
  finish(1);
  setTimeout(() => process.exit(1), 500).unref();
}, timeoutMs);

function plainCall(key, params, onProgress) {
  const rec = (out.calls[key] = { name: params.name, text: null, progress: [], error: null });
  return client
    .callTool(params, CallToolResultSchema, {
      signal: abort.signal,
      timeout: timeoutMs,
      onprogress: pr => {
        rec.progress.push(pr.progress);
        onProgress?.(rec.progress.length);
      }
    })
    .then(
      r => {
        rec.text = textOf(r);
        if (rec.text === null) rec.result = r;
      },
      e => {
        rec.error = errText(e);
      }
    );
}

async function taskCall(key, params) {
  const rec = (out.calls[key] = { name: params.name, taskId: null, statuses: [], text: null, error: null });
  try {
    const stream = client.experimental.tasks.callToolStream(params, CallToolResultSchema, {
      task: { ttl: 60000 },
      signal: abort.signal,
      timeout: timeoutMs
    });
    for await (const m of stream) {
      if (m.type === 'taskCreated') {
        rec.taskId = m.task.taskId;
        rec.statuses.push(m.task.status);
        openGate();
      } else if (m.type === 'taskStatus') rec.statuses.push(m.task.status);
      else if (m.type === 'result') rec.text = textOf(m.result);
      else if (m.type === 'error') rec.error = errText(m.error);
    }
  } catch (e) {
    rec.error = errText(e);
  } finally {
    openGate(); // never hold a resume past C's end
  }
}

try {
  await client.connect(transport, { signal: abort.signal });
  await client.listTools(undefined, { signal: abort.signal });
  let startC;
  const cStarted = new Promise(resolve => (startC = resolve));
  const b = plainCall('B', p.B);
  const a = plainCall('A', p.A, n => {
    if (n === 4) startC();
  });
  // Should A end with fewer progress notifications, C still runs.
  a.finally(() => startC());
  const c = cStarted.then(() => taskCall('C', p.C));
  await Promise.all([a, b, c]);
  finish(0);
} catch (e) {
  out.error = errText(e);
  finish(1);
} finally {
  clearTimeout(deadline);
  try {
    await client.close();
  } catch {
    // ignore
  }
}
