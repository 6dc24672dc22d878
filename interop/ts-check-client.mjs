#!/usr/bin/env node
// A client under test for `tasksim check --client-cmd`: the official MCP
// TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) calling
// slow_text as a task, following the client output contract of docs/ci.md:
// it prints the text of the result's content blocks, concatenated, and
// exits 0 only with a completed result.
//
// Usage: node ts-check-client.mjs URL   (the URL is the last argument)

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const url = process.argv[process.argv.length - 1];
const client = new Client({ name: 'ts-check-client', version: '1.0.0' });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  await client.listTools();
  const stream = client.experimental.tasks.callToolStream(
    { name: 'slow_text', arguments: { chunks: 5, intervalMs: 60 } }, CallToolResultSchema,
    { task: { ttl: 60000 }, timeout: 20000 });
  let result, error;
  for await (const message of stream) {
    if (message.type === 'result') result = message.result;
    if (message.type === 'error') error = message.error;
  }
  if (error || !result) throw error ?? new Error('no result');
  process.stdout.write((result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(''));
  await client.close();
  process.exit(result.isError ? 1 : 0);
} catch (err) {
  console.error('ts-check-client:', err?.message ?? err);
  process.exit(1);
}
