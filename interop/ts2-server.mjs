#!/usr/bin/env node
// Real-peer interop fixture: a server built with the TypeScript SDK v2
// server package (@modelcontextprotocol/server 2.4.0), which declares the
// tools capability and no tasks capability: the server a judge must not
// send task-augmented calls to (2025-11-25, Tasks › Capabilities ›
// Capability Negotiation › Tool-Level Negotiation: "clients MUST NOT
// attempt to use task augmentation on that server's tools"), and which
// answers such a call normally (Behavior Requirements › Task Support and
// Handling: "MUST process requests of that type normally, ignoring any
// task-augmentation metadata if present").
//
// Usage:
//   node ts2-server.mjs --http PORT   Streamable HTTP on 127.0.0.1:PORT (0: any
//                                     free port), endpoint /mcp, stateful
//                                     sessions (the SDK's 2025-era
//                                     WebStandardStreamableHTTPServerTransport,
//                                     one per session); prints the URL as one
//                                     line on stdout when listening
//
// Tool:
//   slow_text  args {chunks=3, intervalMs=50}: works chunks × intervalMs,
//              sending one notifications/progress per chunk when the call
//              carries a progressToken, then answers one text block per
//              chunk ("chunk 1;" …)
//
// Logs go to stderr only.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import * as z from 'zod/v4';
import { McpServer, WebStandardStreamableHTTPServerTransport, isInitializeRequest } from '@modelcontextprotocol/server';

function log(...args) {
  console.error('ts2-server:', ...args);
}

function newServer() {
  const server = new McpServer({ name: 'tasksim-interop-ts2', version: '1.0.0' });
  server.registerTool(
    'slow_text',
    {
      description: 'Answers chunks text blocks, one every intervalMs',
      inputSchema: z.object({
        chunks: z.number().int().min(1).max(1000).default(3).describe('how many text blocks'),
        intervalMs: z.number().int().min(0).max(10000).default(50).describe('the time each block takes, in ms')
      })
    },
    async ({ chunks, intervalMs }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      const content = [];
      for (let i = 1; i <= chunks; i++) {
        await new Promise((resolve, reject) => {
          const t = setTimeout(resolve, intervalMs);
          ctx.mcpReq.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('cancelled')); }, { once: true });
        });
        content.push({ type: 'text', text: `chunk ${i};` });
        if (token !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: chunks } });
        }
      }
      return { content };
    }
  );
  return server;
}

// transports holds one transport (and its server) per session id.
const transports = new Map();

// toRequest makes a web-standard Request of a Node request whose body was
// read; signal ends when the client goes away.
function toRequest(req, body, signal) {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) v.forEach(x => headers.append(k, x));
    else if (v !== undefined) headers.set(k, v);
  }
  const init = { method: req.method, headers, signal };
  if (req.method !== 'GET' && req.method !== 'HEAD' && body.length > 0) init.body = body;
  return new Request(`http://${req.headers.host}${req.url}`, init);
}

// send writes a web-standard Response to a Node response, streaming its
// body (an SSE stream stays open until either side ends it).
async function send(res, response) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  res.on('close', () => reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // the client went away
  }
  res.end();
}

async function readBody(req) {
  const parts = [];
  for await (const p of req) parts.push(p);
  return Buffer.concat(parts);
}

async function handle(req, res) {
  if (new URL(req.url, 'http://x').pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  const body = await readBody(req);
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const sid = req.headers['mcp-session-id'];
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    let msg;
    try {
      msg = req.method === 'POST' ? JSON.parse(body.toString('utf8')) : undefined;
    } catch {
      msg = undefined;
    }
    if (sid || !msg || !isInitializeRequest(msg)) {
      const status = sid ? 404 : 400;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: sid ? 'Session not found' : 'Bad Request: no session id' } }));
      return;
    }
    transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: id => transports.set(id, transport),
      onsessionclosed: id => transports.delete(id)
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await newServer().connect(transport);
  }
  await send(res, await transport.handleRequest(toRequest(req, body, abort.signal)));
}

const args = process.argv.slice(2);
if (args[0] !== '--http' || args.length !== 2) {
  console.error('usage: node ts2-server.mjs --http PORT');
  process.exit(2);
}
const httpServer = createServer((req, res) => {
  handle(req, res).catch(e => {
    log('request failed:', e.message);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
httpServer.listen(Number(args[1]), '127.0.0.1', () => {
  const { port } = httpServer.address();
  console.log(`http://127.0.0.1:${port}/mcp`);
  log(`listening on http://127.0.0.1:${port}/mcp`);
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    httpServer.closeAllConnections();
    httpServer.close(() => process.exit(0));
  });
}
