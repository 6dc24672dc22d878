#!/usr/bin/env node
// Real-peer interop fixture: a task server built with the official MCP
// TypeScript SDK (@modelcontextprotocol/sdk 1.32.2), for driving tasksim's
// reference client against it.
//
// Usage:
//   node ts-task-server.mjs --http PORT   Streamable HTTP on 127.0.0.1:PORT
//                                         (0: any free port), endpoint /mcp,
//                                         stateful sessions; prints the URL
//                                         as one line on stdout when listening
//   node ts-task-server.mjs --stdio       stdio (newline-delimited JSON-RPC)
//
// Tools, all registered with server.experimental.tasks.registerToolTask and
// an InMemoryTaskStore (the server advertises tasks.requests.tools.call):
//   ts_slow      taskSupport "required"; args {delayMs=300, text="ts slow done"}:
//                the task completes after delayMs with content [{type:"text", text}]
//   ts_optional  taskSupport "optional"; same arguments and result (called
//                without a task, the SDK polls the task itself and answers
//                with the plain result)
//   ts_fail      taskSupport "required"; args {delayMs=100}: the task ends
//                "failed" with an isError result
// Tasks are created with the ttl the request asks for (the SDK's default
// otherwise) and pollInterval POLL_MS (env TS_TASK_POLL_MS, default 100).
//
// With env TS_REQUIRE_AUTH set (HTTP only), every request to /mcp must carry
// an Authorization header of exactly that value, or is refused with 401: a
// client that loads the server proves the header reached it.
//
// With env TS_EVENT_STORE set (HTTP only), each session's transport keeps
// its events in an event store (the SDK's EventStore interface, storeEvent /
// replayEventsAfter), so its SSE events carry ids and a stream cut by the
// client can be resumed with Last-Event-ID (2025-11-25 Transports ›
// Streamable HTTP › Resumability and Redelivery). The store is written
// plainly rather than copied from the SDK's examples, whose
// InMemoryEventStore orders events of one millisecond at random and cannot
// resume the standalone GET stream: ids here are the stream's id and a
// counter, and a replay is every later event of that stream in order.
//
// Logs go to stderr only (stdout carries the protocol in --stdio mode).

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';

const POLL_MS = Number(process.env.TS_TASK_POLL_MS || 100);

// eventStore is an EventStore of one session: events by stream, in order;
// an event id is "<n>.<streamId>", n counting over the whole session, so
// ids are unique across its streams.
function eventStore() {
  const byStream = new Map(); // streamId -> [{id, message}]
  const streamOf = new Map(); // event id -> streamId
  let n = 0;
  return {
    async storeEvent(streamId, message) {
      const id = `${++n}.${streamId}`;
      if (!byStream.has(streamId)) byStream.set(streamId, []);
      byStream.get(streamId).push({ id, message });
      streamOf.set(id, streamId);
      return id;
    },
    async getStreamIdForEventId(eventId) {
      return streamOf.get(eventId);
    },
    async replayEventsAfter(lastEventId, { send }) {
      const streamId = streamOf.get(lastEventId);
      if (streamId === undefined) throw new Error(`unknown event id ${lastEventId}`);
      const events = byStream.get(streamId);
      for (const ev of events.slice(events.findIndex(e => e.id === lastEventId) + 1)) {
        await send(ev.id, ev.message);
      }
      return streamId;
    }
  };
}
const REQUIRE_AUTH = process.env.TS_REQUIRE_AUTH || '';

function log(...args) {
  console.error('ts-task-server:', ...args);
}

// One task store for the process, as in the SDK's examples.
const taskStore = new InMemoryTaskStore();

// finishLater stores the task's result after delayMs, the way a background
// job would.
function finishLater(store, taskId, delayMs, status, result) {
  setTimeout(() => {
    store.storeTaskResult(taskId, status, result).catch(e => log('storeTaskResult', taskId, e.message));
  }, delayMs);
}

function taskHandler(outcome) {
  return {
    async createTask(args, { taskStore: store, taskRequestedTtl }) {
      const task = await store.createTask({ ttl: taskRequestedTtl, pollInterval: POLL_MS });
      const { status, result } = outcome(args);
      finishLater(store, task.taskId, args.delayMs, status, result);
      return { task };
    },
    async getTask(_args, { taskId, taskStore: store }) {
      return await store.getTask(taskId);
    },
    async getTaskResult(_args, { taskId, taskStore: store }) {
      return await store.getTaskResult(taskId);
    }
  };
}

const slowInput = {
  delayMs: z.number().int().min(0).max(60000).default(300).describe('how long the task works, in ms'),
  text: z.string().default('ts slow done').describe('the text of the result')
};
const slowOutcome = ({ text }) => ({ status: 'completed', result: { content: [{ type: 'text', text }] } });

function newServer() {
  const server = new McpServer(
    { name: 'tasksim-interop-ts-task-server', version: '1.0.0' },
    { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore }
  );
  server.experimental.tasks.registerToolTask(
    'ts_slow',
    {
      description: 'Completes a task after delayMs with the given text (task required)',
      inputSchema: slowInput,
      execution: { taskSupport: 'required' }
    },
    taskHandler(slowOutcome)
  );
  server.experimental.tasks.registerToolTask(
    'ts_optional',
    {
      description: 'Completes a task after delayMs with the given text (task optional)',
      inputSchema: slowInput,
      execution: { taskSupport: 'optional' }
    },
    taskHandler(slowOutcome)
  );
  server.experimental.tasks.registerToolTask(
    'ts_fail',
    {
      description: 'A task that fails after delayMs',
      inputSchema: { delayMs: z.number().int().min(0).max(60000).default(100) },
      execution: { taskSupport: 'required' }
    },
    taskHandler(() => ({ status: 'failed', result: { isError: true, content: [{ type: 'text', text: 'ts task failed on purpose' }] } }))
  );
  return server;
}

async function serveStdio() {
  const server = newServer();
  await server.connect(new StdioServerTransport());
  log('serving stdio');
}

// serveHTTP: one transport and McpServer per session, keyed by the
// Mcp-Session-Id the transport generates (stateful mode).
async function serveHTTP(port) {
  const sessions = new Map();

  async function readJSON(req) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? JSON.parse(text) : undefined;
  }

  function httpError(res, status, code, message) {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
  }

  const http = createServer(async (req, res) => {
    try {
      const path = new URL(req.url, 'http://127.0.0.1').pathname;
      if (path !== '/mcp') {
        res.writeHead(404).end('not found');
        return;
      }
      if (REQUIRE_AUTH && req.headers['authorization'] !== REQUIRE_AUTH) {
        httpError(res, 401, -32001, 'Unauthorized: missing or wrong Authorization header');
        return;
      }
      const sid = req.headers['mcp-session-id'];
      const known = sid ? sessions.get(sid) : undefined;
      if (req.method === 'POST') {
        let body;
        try {
          body = await readJSON(req);
        } catch (e) {
          httpError(res, 400, -32700, `Parse error: ${e.message}`);
          return;
        }
        if (known) {
          await known.handleRequest(req, res, body);
          return;
        }
        if (sid) {
          httpError(res, 404, -32001, 'Session not found');
          return;
        }
        if (!isInitializeRequest(body)) {
          httpError(res, 400, -32000, 'Bad Request: no session id and not an initialize request');
          return;
        }
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          eventStore: process.env.TS_EVENT_STORE ? eventStore() : undefined,
          onsessioninitialized: id => {
            sessions.set(id, transport);
            log('session', id);
          }
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await newServer().connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      if (req.method === 'GET' || req.method === 'DELETE') {
        if (!sid) {
          httpError(res, 400, -32000, 'Bad Request: missing session id');
          return;
        }
        if (!known) {
          httpError(res, 404, -32001, 'Session not found');
          return;
        }
        await known.handleRequest(req, res);
        return;
      }
      res.writeHead(405, { Allow: 'GET, POST, DELETE' }).end();
    } catch (e) {
      log('request failed:', e);
      if (!res.headersSent) httpError(res, 500, -32603, 'Internal server error');
    }
  });

  await new Promise((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', resolve);
  });
  const url = `http://127.0.0.1:${http.address().port}/mcp`;
  console.log(url);
  log('listening on', url);

  const stop = async () => {
    for (const t of sessions.values()) await t.close().catch(() => {});
    http.close();
    http.closeAllConnections();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

const argv = process.argv.slice(2);
if (argv[0] === '--stdio' && argv.length === 1) {
  await serveStdio();
} else if (argv[0] === '--http' && argv.length === 2 && /^\d+$/.test(argv[1])) {
  await serveHTTP(Number(argv[1]));
} else {
  console.error('usage: node ts-task-server.mjs --http PORT | --stdio');
  process.exit(2);
}
