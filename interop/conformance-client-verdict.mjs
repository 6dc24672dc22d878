#!/usr/bin/env node
// Judge one conformance-suite (@modelcontextprotocol/conformance 0.1.16)
// CLIENT scenario from its result directory, stricter than the suite:
// the client-side counterpart of conformance-verdict.mjs.
//
// Usage: node conformance-client-verdict.mjs SCENARIO RESULT_DIR SUITE_EXIT_CODE
//   RESULT_DIR is the suite's <scenario>-<timestamp> directory, holding
//   checks.json and the client's stdout.txt.
// Prints "PASS SCENARIO" or "FAIL SCENARIO: reason" and exits 0 / 1.
//
// Why stricter (see FINDINGS.md, PEERS.md):
//  - a client that never connects leaves an empty list of checks (initialize)
//    and the suite calls that passed: at least one SUCCESS is required, and
//    the scenario's key checks must be SUCCESS;
//  - the values behind the checks are checked too: the sum add_numbers
//    computed and the text the client got, and that sse-retry's reconnection
//    was a GET carrying the id of the tools/call stream's priming event.
// The client's stdout must end with the JSON report line of
// conformanceclient ({"scenario","ok","result"}) with ok true; set
// CONFORMANCE_CLIENT_NO_REPORT=1 to judge another client by its checks only.
// Set CONFORMANCE_ALLOW_WARNINGS=1 to let WARNING checks through.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [scenario, dir, rcText] = process.argv.slice(2);
const allowWarnings = process.env.CONFORMANCE_ALLOW_WARNINGS === '1';
const wantReport = process.env.CONFORMANCE_CLIENT_NO_REPORT !== '1';

// Check ids that must be present with status SUCCESS, per scenario.
const REQUIRED_SUCCESS = {
  initialize: ['mcp-client-initialization'],
  tools_call: ['tool-add-numbers'],
  'sse-retry': ['client-sse-graceful-reconnect', 'client-sse-retry-timing', 'client-sse-last-event-id']
};
const SSE_RETRY_TEXT = 'Reconnection test completed successfully';

function fail(reason) {
  console.log(`FAIL ${scenario}: ${reason}`);
  process.exit(1);
}

function describe(c) {
  return `${c.id}: ${c.errorMessage ?? c.description}`;
}

const rc = Number(rcText);
let checks;
try {
  checks = JSON.parse(readFileSync(join(dir, 'checks.json'), 'utf8'));
} catch (e) {
  fail(rc === 124 ? 'suite timed out (no checks.json)' : `no readable checks.json (suite exit ${rcText}): ${e.message}`);
}
if (!Array.isArray(checks)) fail('checks.json is not an array');

const failures = checks.filter(c => c.status === 'FAILURE');
if (failures.length > 0) fail(failures.map(describe).join('; '));
if (!checks.some(c => c.status === 'SUCCESS')) fail('no successful check (the suite counts this as passed)');
const warnings = checks.filter(c => c.status === 'WARNING');
if (warnings.length > 0 && !allowWarnings) fail(`warning: ${warnings.map(describe).join('; ')}`);
// In client mode the suite exits 1 on a FAILURE, a WARNING, a timeout or a
// client that exited non-zero; only allowed warnings excuse it.
if (rc !== 0 && !(allowWarnings && warnings.length > 0)) fail(`suite exited ${rcText} (client error or timeout; see the suite's output)`);
for (const id of REQUIRED_SUCCESS[scenario] ?? []) {
  const c = checks.find(x => x.id === id);
  if (!c) fail(`check ${id} missing`);
  if (c.status !== 'SUCCESS') fail(`check ${id} is ${c.status}${c.errorMessage ? `: ${c.errorMessage}` : ''}`);
}

let report;
if (wantReport) {
  let out = '';
  try {
    out = readFileSync(join(dir, 'stdout.txt'), 'utf8');
  } catch (e) {
    fail(`no client stdout.txt: ${e.message}`);
  }
  const last = out.trim().split('\n').pop() ?? '';
  try {
    report = JSON.parse(last);
  } catch {
    fail(`client stdout does not end with a JSON report line: ${JSON.stringify(last.slice(0, 200))}`);
  }
  if (report.scenario !== scenario) fail(`client report is for scenario ${JSON.stringify(report.scenario)}`);
  if (report.ok !== true) fail(`client reported failure: ${report.error ?? 'no error text'}`);
}

const byId = id => checks.find(x => x.id === id);
const resultText = () => (report?.result?.content ?? []).filter(c => c?.type === 'text').map(c => c.text).join('');

switch (scenario) {
  case 'initialize': {
    const d = byId('mcp-client-initialization')?.details ?? {};
    if (!d.versionMatch) fail(`protocol version ${JSON.stringify(d.protocolVersionSent)} not accepted`);
    if (!d.clientName || !d.clientVersion) fail('clientInfo lacks name or version');
    break;
  }
  case 'tools_call': {
    const d = byId('tool-add-numbers')?.details ?? {};
    if (typeof d.a !== 'number' || typeof d.b !== 'number' || d.result !== d.a + d.b) {
      fail(`add_numbers got a=${JSON.stringify(d.a)}, b=${JSON.stringify(d.b)} (result ${JSON.stringify(d.result)}): not two numbers`);
    }
    const want = `The sum of ${d.a} and ${d.b} is ${d.result}`;
    if (report && (report.result?.complete !== true || report.result?.isError || resultText() !== want)) {
      fail(`client result ${JSON.stringify(report.result)}, want complete text ${JSON.stringify(want)}`);
    }
    break;
  }
  case 'sse-retry': {
    // The tools/call stream's priming event id is what the reconnecting
    // GET must carry in Last-Event-ID.
    const priming = checks.find(c => c.id === 'outgoing-sse-event' && /priming event for tools\/call/.test(c.description))?.details?.eventId;
    if (!priming) fail('the server sent no priming event for tools/call (the client never called test_reconnection?)');
    const gets = checks.filter(c => c.id === 'incoming-request' && c.details?.method === 'GET');
    const resumes = gets.filter(c => c.details?.headers?.['last-event-id'] !== undefined);
    if (resumes.length !== 1) fail(`want exactly one GET with Last-Event-ID, got ${resumes.length}`);
    if (resumes[0].details.headers['last-event-id'] !== priming) {
      fail(`reconnection Last-Event-ID ${JSON.stringify(resumes[0].details.headers['last-event-id'])}, want the tools/call priming id ${JSON.stringify(priming)}`);
    }
    if (gets[gets.length - 1] !== resumes[0]) fail('the last GET was not the reconnection (the timing check measured another GET)');
    if (!checks.some(c => c.id === 'outgoing-sse-event' && /tool response on GET stream/.test(c.description))) {
      fail('the server did not deliver the tool response on the reconnected GET stream');
    }
    if (report && (report.result?.complete !== true || report.result?.isError || resultText() !== SSE_RETRY_TEXT)) {
      fail(`client result ${JSON.stringify(report.result)}, want complete text ${JSON.stringify(SSE_RETRY_TEXT)}`);
    }
    break;
  }
  default:
    break;
}

console.log(`PASS ${scenario}`);
