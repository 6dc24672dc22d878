// k6 side of load/k6/compare.sh: the workload of
//
//	tasksim load --mode poll:200ms --task-duration 1s..3s --rate 100
//
// against a tasksim reference server (tasksim serve): each iteration calls
// slow_text as a task (10 chunks of 32 bytes over 1-3 s), polls tasks/get
// every 200 ms until the task is terminal, then fetches tasks/result. Each
// VU opens one MCP session (initialize, notifications/initialized) on its
// first iteration and keeps it. Environment: URL (the endpoint), RATE
// (tasks/s), DURATION (e.g. 20s), POLL_MS (200).
import http from 'k6/http';
import { sleep } from 'k6';
import { Counter } from 'k6/metrics';

const URL = __ENV.URL || 'http://127.0.0.1:7070/mcp';
const RATE = parseInt(__ENV.RATE || '100');
const DURATION = __ENV.DURATION || '20s';
const POLL = parseInt(__ENV.POLL_MS || '200') / 1000;
const VERSION = '2025-11-25';

export const options = {
  discardResponseBodies: false,
  scenarios: {
    tasks: {
      executor: 'constant-arrival-rate',
      rate: RATE,
      timeUnit: '1s',
      duration: DURATION,
      preAllocatedVUs: RATE * 4,
      maxVUs: RATE * 10,
    },
  },
};

const completed = new Counter('tasks_completed');
const failed = new Counter('tasks_failed');

let session = '';
let nextID = 1;

function post(body, withSession) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  if (withSession) {
    headers['Mcp-Session-Id'] = session;
    headers['MCP-Protocol-Version'] = VERSION;
  }
  return http.post(URL, JSON.stringify(body), { headers });
}

function request(method, params) {
  const res = post({ jsonrpc: '2.0', id: nextID++, method, params }, true);
  if (res.status !== 200) {
    throw new Error(`${method}: HTTP ${res.status}`);
  }
  const msg = res.json();
  if (msg.error) {
    throw new Error(`${method}: ${msg.error.message}`);
  }
  return msg.result;
}

function connect() {
  const res = post({
    jsonrpc: '2.0', id: nextID++, method: 'initialize',
    params: { protocolVersion: VERSION, capabilities: { tasks: { responses: { modes: ['task'] } } }, clientInfo: { name: 'k6', version: '1.8.1' } },
  }, false);
  session = res.headers['Mcp-Session-Id'];
  post({ jsonrpc: '2.0', method: 'notifications/initialized' }, true);
}

export default function () {
  if (session === '') {
    connect();
  }
  try {
    const durationMs = 1000 + Math.random() * 2000;
    const created = request('tools/call', {
      name: 'slow_text',
      arguments: { chunks: 10, chunkSize: 32, progress: false, durationMs },
      task: { ttl: Math.round(durationMs + 2 * POLL * 1000 + 30000), responseModes: ['task'] },
    });
    const id = created.task.taskId;
    let status = created.task.status;
    while (status === 'working' || status === 'input_required') {
      sleep(POLL);
      status = request('tasks/get', { taskId: id }).status;
    }
    request('tasks/result', { taskId: id });
    if (status === 'completed') {
      completed.add(1);
    } else {
      failed.add(1);
    }
  } catch (e) {
    failed.add(1);
  }
}
